//go:build integration

package containerd_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"

	"github.com/nriwasm/nriwasm/integration/containerd"
)

// TestNRISmoke proves the NRI path end to end against a real containerd: an
// external plugin's CreateContainer adjustment reaches the container's
// cgroup and the process's affinity; a containerd restart closes the
// plugin's connection (Run returns, and the stub does not reconnect by
// itself: the agent must loop); a new stub registers, is synchronized with
// the containers that survived the restart, and adjusts new ones.
func TestNRISmoke(t *testing.T) {
	online, err := containerd.OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	first := strings.FieldsFunc(online, func(r rune) bool { return r == ',' || r == '-' })[0]
	if first == online {
		t.Logf("only CPU %s is online: pinning cannot be told apart from the default", first)
	}

	c := containerd.Start(t, containerd.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	p1 := startSmokePlugin(t, c.NRISocket, first)

	pod, err := c.RunPodSandbox(ctx, containerd.PodOptions{Name: "smoke", Namespace: "nriwasm-it"})
	if err != nil {
		t.Fatal(err)
	}
	// The request asks for every online CPU; the plugin narrows it.
	id1, err := c.RunContainer(ctx, pod, containerd.ContainerOptions{Name: "work", CPUShares: 1024, CpusetCPUs: online})
	if err != nil {
		t.Fatal(err)
	}
	assertPinned(ctx, t, c, id1, first)
	if got := p1.created(); !slices.Equal(got, []string{id1}) {
		t.Fatalf("plugin 1 saw CreateContainer for %v, want [%s]", got, id1)
	}

	// A restart closes the connection: Run returns and OnClose is called
	// (in either order), with no Shutdown event.
	c.Stop(t)
	deadline := time.After(10 * time.Second)
	select {
	case <-p1.exited:
		t.Logf("plugin 1: Run returned %v after containerd stopped", p1.runErr)
	case <-deadline:
		t.Fatal("plugin 1: Run did not return within 10 s of containerd stopping")
	}
	select {
	case <-p1.closed:
	case <-deadline:
		t.Fatal("plugin 1: OnClose was not called within 10 s of containerd stopping")
	}
	c.Restart(t)

	// A new stub registers and is synchronized with the surviving container.
	p2 := startSmokePlugin(t, c.NRISocket, first)
	if !slices.Contains(p2.syncedIDs, id1) {
		t.Errorf("plugin 2 was synchronized with containers %v, want %s among them", p2.syncedIDs, id1)
	}
	assertPinned(ctx, t, c, id1, first) // survived the restart unchanged

	id2, err := c.RunContainer(ctx, pod, containerd.ContainerOptions{Name: "work2", CPUShares: 512, CpusetCPUs: online})
	if err != nil {
		t.Fatal(err)
	}
	assertPinned(ctx, t, c, id2, first)
	if got := p2.created(); !slices.Equal(got, []string{id2}) {
		t.Errorf("plugin 2 saw CreateContainer for %v, want [%s]", got, id2)
	}
	// The old stub stayed disconnected: it never reconnects by itself.
	if got := p1.created(); !slices.Equal(got, []string{id1}) {
		t.Errorf("plugin 1 saw CreateContainer for %v after its connection closed, want only [%s]", got, id1)
	}
}

// assertPinned checks the container's cgroup cpuset and its process's
// affinity.
func assertPinned(ctx context.Context, t *testing.T, c *containerd.Containerd, id, want string) {
	t.Helper()
	cpus, err := c.CPUSet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := c.PID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := containerd.CpusAllowed(pid)
	if err != nil {
		t.Fatal(err)
	}
	if cpus != want || allowed != want {
		t.Fatalf("container %s: cpuset.cpus %q, Cpus_allowed_list %q (pid %d), want %q", id, cpus, allowed, pid, want)
	}
}

// smokePlugin pins every new container to one CPU.
type smokePlugin struct {
	cpu    string
	synced chan []string

	mu      sync.Mutex
	creates []string
}

func (p *smokePlugin) Synchronize(_ context.Context, _ []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	ids := make([]string, 0, len(ctrs))
	for _, c := range ctrs {
		ids = append(ids, c.GetId())
	}
	select {
	case p.synced <- ids:
	default:
	}
	return nil, nil
}

func (p *smokePlugin) CreateContainer(_ context.Context, _ *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.mu.Lock()
	p.creates = append(p.creates, ctr.GetId())
	p.mu.Unlock()
	adj := &api.ContainerAdjustment{}
	adj.SetLinuxCPUSetCPUs(p.cpu)
	return adj, nil, nil
}

func (p *smokePlugin) created() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.creates)
}

// runningPlugin is a smokePlugin whose stub runs in a goroutine.
type runningPlugin struct {
	*smokePlugin
	syncedIDs []string      // containers of the registration's Synchronize
	closed    chan struct{} // closed by the stub's OnClose
	exited    chan struct{} // closed when Run has returned
	runErr    error         // Run's result, valid after exited
}

// startSmokePlugin runs the stub (name "smoke", index "10") and waits until
// the runtime has synchronized it; cleanup stops it.
func startSmokePlugin(t *testing.T, socket, cpu string) *runningPlugin {
	t.Helper()
	p := &runningPlugin{
		smokePlugin: &smokePlugin{cpu: cpu, synced: make(chan []string, 1)},
		closed:      make(chan struct{}),
		exited:      make(chan struct{}),
	}
	var once sync.Once
	s, err := stub.New(p.smokePlugin,
		stub.WithPluginName("smoke"),
		stub.WithPluginIdx("10"),
		stub.WithSocketPath(socket),
		stub.WithOnClose(func() { once.Do(func() { close(p.closed) }) }),
		stub.WithLogger(containerd.NRILogger(t, "nri-stub")),
	)
	if err != nil {
		t.Fatalf("creating the NRI stub: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		p.runErr = s.Run(ctx)
		close(p.exited)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			t.Error("NRI stub: Run did not return within 10 s of cancelling it")
		}
	})
	select {
	case p.syncedIDs = <-p.synced:
	case <-p.exited:
		t.Fatalf("NRI stub: Run returned before synchronizing: %v", p.runErr)
	case <-time.After(10 * time.Second):
		t.Fatal("NRI stub: not synchronized within 10 s")
	}
	return p
}
