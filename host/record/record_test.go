package record_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/record"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/internal/testkit"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// Two configurations of topology-aware that put a container without a CPU
// request on other shared CPUs (one or two CPUs reserved).
const (
	reserveOne = `{"reservedResources":{"cpu":"1"}}`
	reserveTwo = `{"reservedResources":{"cpu":"2"}}`
)

// nativeInstance is topology-aware run natively: it implements resmgr.Policy
// (rebuilt through restore when discarded).
type nativeInstance struct {
	restore wasm.RestoreFunc
	r       *native.Runner
}

func loadNative(ctx context.Context, restore wasm.RestoreFunc) (resmgr.Policy, error) {
	p := &nativeInstance{restore: restore}
	return p, p.build(ctx)
}

func (p *nativeInstance) build(ctx context.Context) error {
	r, err := native.New(topologyaware.New())
	if err != nil {
		return err
	}
	p.r = r
	return p.restore(ctx, r)
}

func (p *nativeInstance) Call(ctx context.Context, m abi.Method, req abi.Message) (*abi.Response, error) {
	if p.r == nil {
		if err := p.build(ctx); err != nil {
			return nil, err
		}
	}
	return p.r.Call(ctx, m, req)
}
func (p *nativeInstance) Rebuilds() uint64            { return 0 }
func (p *nativeInstance) Discard(context.Context)     { p.r = nil }
func (p *nativeInstance) Close(context.Context) error { return nil }

// recordHistory runs the agent's manager with topology-aware (one CPU
// reserved) and a record writer of maxSize bytes through a history of pods
// and containers, and returns the record's directory.
func recordHistory(t *testing.T, maxSize int64, containers int) string {
	t.Helper()
	topo := policytest.Machine(t, "N4C16")
	cfg := config.Default()
	cfg.Policy.Name, cfg.Policy.Data, cfg.StateDir = "topology-aware", []byte(reserveOne), t.TempDir()
	ctx := context.Background()
	m, err := resmgr.New(ctx, cfg, topo, loadNative, resmgr.WithNodeName("node-1"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w, err := record.NewWriter(dir, maxSize,
		record.Header{NodeName: "node-1", Policy: "topology-aware", Config: cfg.Policy.Data, Topology: topo}, m.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	m.AddObserver(w)
	if err := w.Open(); err != nil {
		t.Fatal(err)
	}
	m.Go("record", w.Run)
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	milli := []int64{500, 2000, 0}
	for i := range containers {
		req := policytest.Container(fmt.Sprintf("c%d", i), milli[i%3]).Request()
		if _, err := m.RunPodSandbox(ctx, req.Pod); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.CreateContainer(ctx, req.Pod, req.Container); err != nil {
			t.Fatal(err)
		}
		if i >= 3 { // later containers leave again, with their pods
			if _, err := m.RemoveContainer(ctx, req.Pod, req.Container); err != nil {
				t.Fatal(err)
			}
			if _, err := m.RemovePodSandbox(ctx, req.Pod); err != nil {
				t.Fatal(err)
			}
		}
		// Let the writer catch up, as it does between a node's events: a
		// file rotates at a snapshot taken when it is full.
		_, seq := m.Snapshot()
		for deadline := time.Now().Add(time.Minute); w.Handled() < seq; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the writer handled up to %d of %d", w.Handled(), seq)
			}
		}
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if w.Dropped() != 0 {
		t.Fatalf("%d exchanges dropped", w.Dropped())
	}
	return dir
}

// startNative starts topology-aware natively with config from a header.
func startNative(config string) record.Start {
	return func(ctx context.Context, h *record.Header) (abi.Transport, func(), error) {
		r, err := native.New(topologyaware.New())
		if err != nil {
			return nil, nil, err
		}
		_, err = abi.NewClient(r).Init(ctx, &abi.InitRequest{Config: []byte(config), NodeName: h.NodeName, Topology: h.Topology, Restore: h.Restore})
		return r, func() {}, err
	}
}

// TestReplay: a record replayed against the policy that made it shows
// nothing; against another configuration it shows the container placed on
// other CPUs, with both answers.
func TestReplay(t *testing.T) {
	dir := recordHistory(t, 64<<20, 3)
	files, err := record.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	same, err := record.Replay(context.Background(), files, startNative(reserveOne))
	if err != nil {
		t.Fatal(err)
	}
	// Synchronize, then per container RunPodSandbox and CreateContainer.
	if same.Replayed != 7 || same.Starts != 1 || len(same.Differences) != 0 {
		t.Fatalf("replay against the same policy: %+v, want 7 requests, 1 start, no difference", same)
	}
	other, err := record.Replay(context.Background(), files, startNative(reserveTwo))
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Differences) != 1 {
		t.Fatalf("replay against two reserved CPUs: %+v, want one difference", other.Differences)
	}
	d := other.Differences[0]
	if d.Method != "CreateContainer" || d.Subject != "default/pod-c2/c" || d.Recorded.CPUs != "1-7" || d.Replayed.CPUs != "2-7" {
		t.Fatalf("difference %+v, want c2's CreateContainer on 1-7 recorded, 2-7 replayed", d)
	}
}

// TestRotation: a record over its size limit is split in files and the
// oldest are deleted, staying within the limit (plus the file being
// written); what is left replays from its first file's snapshot against the
// same policy with no difference.
func TestRotation(t *testing.T) {
	const maxSize = 16 << 10
	dir := recordHistory(t, maxSize, 150)
	paths, err := record.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	if len(paths) < 3 || total > maxSize+maxSize/4+4<<10 {
		t.Fatalf("%d files, %d bytes: want several, within the %d-byte limit and one file", len(paths), total, maxSize)
	}
	files, err := record.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Header.Seq == 0 {
		t.Fatal("the oldest file was not deleted: the first file left starts at request 0")
	}
	res, err := record.Replay(context.Background(), files, startNative(reserveOne))
	if err != nil {
		t.Fatal(err)
	}
	if res.Starts != 1 || len(res.Differences) != 0 || res.Replayed == 0 {
		t.Fatalf("replay of the rotated record: %+v, want 1 start and no difference", res)
	}
}

// TestReplayOlderRecord: a record written before the format moved to
// generated messages (by commit 6c62150's writer, with recordHistory's three
// containers) still reads and replays: against the policy that made it with
// no difference, against two reserved CPUs with c2 placed elsewhere.
func TestReplayOlderRecord(t *testing.T) {
	files, err := record.Read("testdata/written-by-6c62150")
	if err != nil {
		t.Fatal(err)
	}
	h := files[0].Header
	if len(files) != 1 || h.NodeName != "node-1" || h.Policy != "topology-aware" || string(h.Config) != reserveOne || len(h.Topology.GetCpus()) == 0 {
		t.Fatalf("read %d files, header %+v: want one file from node-1's topology-aware with one CPU reserved", len(files), h)
	}
	same, err := record.Replay(context.Background(), files, startNative(reserveOne))
	if err != nil {
		t.Fatal(err)
	}
	if same.Replayed != 7 || same.Starts != 1 || len(same.Differences) != 0 {
		t.Fatalf("replay against the same policy: %+v, want 7 requests, 1 start, no difference", same)
	}
	other, err := record.Replay(context.Background(), files, startNative(reserveTwo))
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Differences) != 1 || other.Differences[0].Subject != "default/pod-c2/c" || other.Differences[0].Replayed.CPUs != "2-7" {
		t.Fatalf("replay against two reserved CPUs: %+v, want c2 on 2-7", other.Differences)
	}
}

// TestNewWriterRefusesBadValues: a missing input or a bad option value is
// NewWriter's error, naming it and its limit.
func TestNewWriterRefusesBadValues(t *testing.T) {
	header := record.Header{NodeName: "node-1", Topology: &abi.Topology{}}
	snap := func() (*abi.RestoreState, uint64) { return &abi.RestoreState{}, 0 }
	for _, tc := range []struct {
		dir     string
		maxSize int64
		header  record.Header
		snap    func() (*abi.RestoreState, uint64)
		opt     record.Option
		want    string
	}{
		{"", 1 << 20, header, snap, record.WithQueue(1), "directory: empty"},
		{"/r", 0, header, snap, record.WithQueue(1), "max size 0: must be positive"},
		{"/r", 1 << 20, record.Header{NodeName: "node-1"}, snap, record.WithQueue(1), "header topology: nil"},
		{"/r", 1 << 20, header, nil, record.WithQueue(1), "snapshot: nil"},
		{"/r", 1 << 20, header, snap, record.WithQueue(0), "queue 0: must be at least 1"},
	} {
		if w, err := record.NewWriter(tc.dir, tc.maxSize, tc.header, tc.snap, tc.opt); err == nil || w != nil {
			t.Errorf("NewWriter = %v, %v; want an error with %q", w, err, tc.want)
		} else {
			testkit.ErrorContains(t, err, tc.want)
		}
	}
}
