package state

import (
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// BenchmarkSaveLocked is what the agent's background saver does under the
// manager's lock (host/resmgr save.go) after a create: encode the journal and
// note the decision log's length. Every decision waits for it. The journals
// hold n containers, 20 to a pod, and a claim per pod; each iteration first
// journals what a create changes (included in the time, 1–3 µs): one
// container (change=one), or one container and a grouped update of 200
// others, a balloons create in its default balloon (change=group200).
func BenchmarkSaveLocked(b *testing.B) {
	for _, n := range []int{200, 1000, 4000} {
		for _, group := range []bool{false, true} {
			name := fmt.Sprintf("containers=%d/change=one", n)
			if group {
				name = fmt.Sprintf("containers=%d/change=group200", n)
			}
			b.Run(name, func(b *testing.B) { benchSaveLocked(b, n, group) })
		}
	}
}

func benchSaveLocked(b *testing.B, n int, group bool) {
	j := journal(n/20, n, n/20)
	ck := NewCheckpoint(b.TempDir())
	c, a := container(1), adjustment(1)
	g := &abi.ContainerUpdate{ContainerId: container(0).GetId(), CpusetMems: "0"}
	for i := 1; i < 200; i++ {
		g.AlsoContainerIds = append(g.AlsoContainerIds, container(i).GetId())
	}
	snap, err := saveLocked(j, ck)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j.AddContainer(c, a)
		if group {
			g.CpusetCpus = fmt.Sprintf("0-%d", 64+i%64)
			j.ApplyUpdate(g)
		}
		if snap, err = saveLocked(j, ck); err != nil {
			b.Fatal(err)
		}
	}
	buf, err := snap.Marshal(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(buf)), "file-bytes")
}

// BenchmarkSnapshotMarshal is the saver's encoding of the file outside the
// manager's lock: a Snapshot's records copied behind a header, and the
// checksum.
func BenchmarkSnapshotMarshal(b *testing.B) {
	for _, n := range []int{200, 1000, 4000} {
		b.Run(fmt.Sprintf("containers=%d", n), func(b *testing.B) {
			snap, err := journal(n/20, n, n/20).Snapshot()
			if err != nil {
				b.Fatal(err)
			}
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				if buf, err = snap.Marshal(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// saveLocked is the saver's part under the manager's lock: the Snapshot and
// the log's mark. The file is encoded from the Snapshot outside the lock.
func saveLocked(j *Journal, ck *Checkpoint) (*Snapshot, error) {
	snap, err := j.Snapshot()
	_ = ck.LogMark()
	return snap, err
}

// BenchmarkTrimLogWithTail is the saver's TrimLog when creates went on
// during the save: three records follow the mark, so the log's tail is
// rewritten to a temporary file renamed over the log, under the log's lock,
// which a create's Append waits for while it holds the manager's lock.
func BenchmarkTrimLogWithTail(b *testing.B) {
	j := journal(10, 200, 0)
	ck := NewCheckpoint(b.TempDir())
	c, a := container(1), adjustment(1)
	var rec []byte
	appendOne := func() {
		j.AddContainer(c, a)
		var err error
		if rec, err = j.AppendDelta(rec[:0]); err != nil {
			b.Fatal(err)
		}
		if err := ck.Append(rec); err != nil {
			b.Fatal(err)
		}
		j.ClearDelta()
	}
	for b.Loop() {
		b.StopTimer()
		for range 50 {
			appendOne()
		}
		mark := ck.LogMark()
		for range 3 {
			appendOne()
		}
		b.StartTimer()
		if err := ck.TrimLog(mark); err != nil {
			b.Fatal(err)
		}
	}
}
