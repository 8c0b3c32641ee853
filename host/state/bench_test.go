package state

import (
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"

	"google.golang.org/protobuf/proto"
)

// The agent's worst case the issue sizes for: 2,000 containers in 100 pods and
// 100 prepared claims.
func benchJournal() *Journal { return journal(100, 2000, 100) }

// BenchmarkSave measures a whole Save: marshal, write, fsync, rename, fsync dir.
// The file size is reported as file-bytes.
func BenchmarkSave(b *testing.B) {
	j := benchJournal()
	ck := NewCheckpoint(b.TempDir())
	if err := ck.Save(j); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := ck.Save(j); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(ck.buf)), "file-bytes")
}

// BenchmarkMarshal is the part of Save the agent would do under its lock.
func BenchmarkMarshal(b *testing.B) {
	j := benchJournal()
	buf, _ := Marshal(nil, j)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = Marshal(buf[:0], j)
	}
}

// BenchmarkMarshalDeterministic is the rejected alternative: protobuf-go's
// deterministic encoding of the same payload (see RATIONALE.md).
func BenchmarkMarshalDeterministic(b *testing.B) {
	rs := benchJournal().restoreState()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (proto.MarshalOptions{Deterministic: true}).Marshal(rs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	if err := NewCheckpoint(dir).Save(benchJournal()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddContainer is the journal's cost on CreateContainer's path.
func BenchmarkAddContainer(b *testing.B) {
	j := benchJournal()
	c, a := container(1), adjustment(1)
	b.ReportAllocs()
	for b.Loop() {
		j.AddContainer(c, a)
	}
}

// BenchmarkAppend is what CreateContainer pays before its answer: one new
// container's record encoded and appended to the log, without fsync.
func BenchmarkAppend(b *testing.B) {
	benchAppend(b, false)
}

// BenchmarkAppendFsync is the rejected alternative: the same append made
// durable with an fsync per answer (see RATIONALE.md).
func BenchmarkAppendFsync(b *testing.B) {
	benchAppend(b, true)
}

// BenchmarkAppendGroup is what a balloons create in a 200-container default
// balloon pays before its answer: the new container and the grouped update
// that moves the 200 others, encoded and appended to the log.
func BenchmarkAppendGroup(b *testing.B) {
	j := benchJournal()
	ck := NewCheckpoint(b.TempDir())
	c, a := container(1), adjustment(1)
	g := &abi.ContainerUpdate{ContainerId: container(0).GetId(), CpusetMems: "0"}
	for i := 1; i < 200; i++ {
		g.AlsoContainerIds = append(g.AlsoContainerIds, container(i).GetId())
	}
	var rec []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j.AddContainer(c, a)
		g.CpusetCpus = fmt.Sprintf("0-%d", 64+i%64)
		j.ApplyUpdate(g)
		var err error
		if rec, err = j.AppendDelta(rec[:0]); err != nil {
			b.Fatal(err)
		}
		if err := ck.Append(rec); err != nil {
			b.Fatal(err)
		}
		j.ClearDelta()
		if ck.LogMark() > 1<<20 { // what the background save keeps it under
			if err := ck.TrimLog(ck.LogMark()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(rec)), "record-bytes")
}

func benchAppend(b *testing.B, sync bool) {
	j := benchJournal()
	ck := NewCheckpoint(b.TempDir())
	c, a := container(1), adjustment(1)
	var rec []byte
	b.ReportAllocs()
	for b.Loop() {
		j.AddContainer(c, a)
		var err error
		if rec, err = j.AppendDelta(rec[:0]); err != nil {
			b.Fatal(err)
		}
		if err := ck.Append(rec); err != nil {
			b.Fatal(err)
		}
		if sync {
			if err := ck.log.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		j.ClearDelta()
		if ck.LogMark() > 1<<20 { // what the background save keeps it under
			if err := ck.TrimLog(ck.LogMark()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(rec)), "record-bytes")
}
