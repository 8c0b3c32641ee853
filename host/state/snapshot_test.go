package state

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The fixtures below keep one entry per map: vtprotobuf writes map entries in
// Go's map order, so only such journals encode to the same bytes every time
// (RATIONALE.md, "Why are map entries not in a fixed order?").

func snapPod(i int) *abi.PodSandbox {
	p := pod(i)
	p.Labels = map[string]string{"app": fmt.Sprint("web-", i%3)}
	p.Annotations = nil
	return p
}

// snapContainer is container i in its run'th state (its name and pid change
// with run). Every seventh carries a field this build does not read, kept as
// an unknown field and written after the known ones; with odd, also one
// numbered as the assignment but of another wire type, which protobuf-go
// keeps as unknown (vtprotobuf refuses it, so no checkpoint or log holds
// one). Every fourteenth has none of the fields numbered past the
// assignment.
func snapContainer(i, run int, odd bool) *abi.Container {
	c := container(i)
	c.Name = fmt.Sprint("app-", run)
	c.Pid = uint32(1000*run + i)
	c.Labels = map[string]string{"io.kubernetes.container.name": fmt.Sprint("app-", i%5)}
	c.Annotations = nil
	c.Mounts = []*abi.Mount{{Destination: "/data", Source: fmt.Sprint("/var/lib/", i)}}
	if i%14 == 0 {
		c.Pid, c.Mounts = 0, nil
	}
	if i%7 != 0 {
		return c
	}
	b, err := c.MarshalVT()
	if err != nil {
		panic(err)
	}
	if odd {
		b = protowire.AppendTag(b, assignmentFieldNumber, protowire.VarintType)
		b = protowire.AppendVarint(b, 7)
	}
	b = protowire.AppendTag(b, 99, protowire.BytesType)
	b = protowire.AppendString(b, "from a newer build")
	u := &abi.Container{}
	if err := proto.Unmarshal(b, u); err != nil {
		panic(err)
	}
	return u
}

// snapAdjustment is adjustment i, or none for every fifth container.
func snapAdjustment(i int) *abi.ContainerAdjustment {
	if i%5 == 0 {
		return nil
	}
	a := adjustment(i)
	a.Annotations = map[string]string{"nriwasm.io/pool": fmt.Sprint("pool-", i%4)}
	return a
}

func snapClaim(i int) *abi.PreparedClaim { return claim(i) }

// snapChange makes one random change to j, of every kind the journal has;
// odd as for snapContainer.
func snapChange(r *rand.Rand, j *Journal, odd bool) {
	id := func(n int) string { return container(r.IntN(n)).GetId() }
	switch r.IntN(12) {
	case 0:
		j.AddPod(snapPod(r.IntN(12)))
	case 1:
		j.RemovePod(snapPod(r.IntN(12)).GetId())
	case 2, 3:
		i := r.IntN(120)
		j.AddContainer(snapContainer(i, r.IntN(3), odd), snapAdjustment(i+r.IntN(2)))
	case 4:
		j.RemoveContainer(id(120))
	case 5:
		j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: id(120), CpusetCpus: fmt.Sprint(r.IntN(64))})
	case 6, 7:
		g := &abi.ContainerUpdate{ContainerId: id(130), CpusetCpus: fmt.Sprint("0-", r.IntN(64)), RdtClass: []string{"", "gold"}[r.IntN(2)]}
		for range r.IntN(60) {
			g.AlsoContainerIds = append(g.AlsoContainerIds, id(130)) // some unknown, some twice
		}
		j.ApplyUpdate(g)
	case 8:
		j.AddClaim(snapClaim(r.IntN(8)))
	case 9:
		j.RemoveClaim(snapClaim(r.IntN(8)).GetClaim().GetUid())
	case 10:
		var pods []*abi.PodSandbox
		var ctrs []*abi.Container
		for i := range 12 {
			if r.IntN(4) > 0 {
				pods = append(pods, snapPod(i))
			}
		}
		for i := range 130 {
			if r.IntN(4) > 0 {
				ctrs = append(ctrs, snapContainer(i, r.IntN(3), odd))
			}
		}
		j.Reconcile(pods, ctrs)
	case 11:
		if _, err := j.AppendDelta(nil); err != nil {
			panic(err)
		}
		j.ClearDelta() // what saveNow does after each create
	}
}

// TestSnapshotMatchesMarshal: a Snapshot, which encodes only what changed
// since the last one, writes byte for byte what Marshal writes for the same
// journal, after any sequence of changes; and a Snapshot taken earlier still
// writes what it did when taken, whatever changed since (the saver writes it
// outside the lock while decisions go on).
func TestSnapshotMatchesMarshal(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			j := New()
			type taken struct {
				snap *Snapshot
				want []byte
			}
			var earlier []taken
			for step := range 400 {
				snapChange(r, j, true)
				if r.IntN(6) > 0 {
					continue
				}
				snap, err := j.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				got, err := snap.Marshal([]byte("prefix"))
				if err != nil {
					t.Fatal(err)
				}
				want, err := Marshal([]byte("prefix"), j)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("step %d: Snapshot wrote %d bytes that differ from Marshal's %d", step, len(got), len(want))
				}
				earlier = append(earlier, taken{snap, want})
			}
			if len(earlier) == 0 {
				t.Fatal("no Snapshot taken")
			}
			for i, e := range earlier {
				got, err := e.snap.Marshal(nil)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, e.want[len("prefix"):]) {
					t.Fatalf("Snapshot %d changed after it was taken", i)
				}
			}
		})
	}
}

// TestSnapshotAfterReplay: records a replay changes, which it does not mark,
// are encoded afresh by the next Snapshot.
func TestSnapshotAfterReplay(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	src := New()
	for range 200 {
		snapChange(r, src, false)
	}
	base, err := Marshal(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	src.ClearDelta()
	log := logHeader()
	for range 100 {
		snapChange(r, src, false)
		if log, err = src.AppendDelta(log); err != nil {
			t.Fatal(err)
		}
		src.ClearDelta()
	}
	j, err := Unmarshal(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReplayLog(j, log); err != nil {
		t.Fatal(err)
	}
	snap, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	got, err := snap.Marshal(nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Marshal(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the Snapshot after a replay differs from Marshal of the journal replayed")
	}
}
