package nri_test

import (
	"context"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
)

// waitTimeout guards every wait: a test that reaches it has failed (no test
// asserts on timing).
const waitTimeout = 30 * time.Second

// fakeRuntime is the runtime side: NRI's adaptation, as containerd embeds it,
// with pods and containers kept in memory. Adjustments and updates the agent
// answers are applied to its containers' cpusets.
type fakeRuntime struct {
	t      testing.TB
	dir    string
	socket string

	mu       sync.Mutex
	r        *adaptation.Adaptation
	pods     map[string]*api.PodSandbox
	ctrs     map[string]*api.Container
	unsolic  []*api.ContainerUpdate // received through UpdateContainers
	synced   chan []*api.ContainerUpdate
	conns    []net.Conn // the agent's connections, cut by stop
	unsolicC chan struct{}
}

// newRuntime returns a runtime whose socket lives in a short directory under
// /tmp (a Unix socket path must stay under 108 bytes).
func newRuntime(t testing.TB) *fakeRuntime {
	dir, err := os.MkdirTemp("", "nriwasm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rt := &fakeRuntime{
		t: t, dir: dir, socket: filepath.Join(dir, "nri.sock"),
		pods: map[string]*api.PodSandbox{}, ctrs: map[string]*api.Container{},
		synced: make(chan []*api.ContainerUpdate, 16), unsolicC: make(chan struct{}, 1),
	}
	t.Cleanup(rt.stop)
	return rt
}

// start starts the adaptation; a new one after stop is a runtime restart.
func (rt *fakeRuntime) start() {
	rt.t.Helper()
	r, err := adaptation.New("fake-runtime", "v0.0.1", rt.synchronize, rt.update,
		adaptation.WithPluginPath(filepath.Join(rt.dir, "plugins")),
		adaptation.WithPluginConfigPath(filepath.Join(rt.dir, "conf.d")),
		adaptation.WithSocketPath(rt.socket))
	if err != nil {
		rt.t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		rt.t.Fatal(err)
	}
	<-rt.synced // Start synchronizes its pre-installed plugins (none) at once
	rt.mu.Lock()
	rt.r = r
	rt.mu.Unlock()
}

// stop stops the adaptation and cuts the agent's connections, as a runtime
// that exits does. Pods and containers stay (they run on without it).
func (rt *fakeRuntime) stop() {
	rt.mu.Lock()
	r, conns := rt.r, rt.conns
	rt.r, rt.conns = nil, nil
	rt.mu.Unlock()
	if r != nil {
		r.Stop()
	}
	for _, c := range conns {
		c.Close()
	}
}

// dial is the agent's dialer: it records connections so stop can cut them.
func (rt *fakeRuntime) dial(path string) (net.Conn, error) {
	c, err := net.Dial("unix", path)
	if err == nil {
		rt.mu.Lock()
		rt.conns = append(rt.conns, c)
		rt.mu.Unlock()
	}
	return c, err
}

func (rt *fakeRuntime) synchronize(ctx context.Context, cb adaptation.SyncCB) error {
	rt.mu.Lock()
	pods := sortedValues(rt.pods)
	ctrs := sortedValues(rt.ctrs)
	rt.mu.Unlock()
	updates, err := cb(ctx, pods, ctrs)
	if err == nil {
		rt.apply(updates)
		rt.synced <- updates
	}
	return err
}

func (rt *fakeRuntime) update(_ context.Context, updates []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
	rt.apply(updates)
	rt.mu.Lock()
	rt.unsolic = append(rt.unsolic, updates...)
	rt.mu.Unlock()
	select {
	case rt.unsolicC <- struct{}{}:
	default:
	}
	return nil, nil
}

// waitSync waits for the agent's Synchronize on a new connection.
func (rt *fakeRuntime) waitSync() []*api.ContainerUpdate {
	rt.t.Helper()
	select {
	case us := <-rt.synced:
		rt.adaptation().BlockPluginSync().Unblock() // the plugin is registered now
		return us
	case <-time.After(waitTimeout):
		rt.t.Fatal("the agent did not synchronize")
		return nil
	}
}

// waitUnsolicited waits until at least n updates came through UpdateContainers.
func (rt *fakeRuntime) waitUnsolicited(n int) []*api.ContainerUpdate {
	rt.t.Helper()
	deadline := time.After(waitTimeout)
	for {
		rt.mu.Lock()
		got := slices.Clone(rt.unsolic)
		rt.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-rt.unsolicC:
		case <-deadline:
			rt.t.Fatalf("got %d unsolicited updates, want %d", len(got), n)
		}
	}
}

// dropUnsolicited forgets the updates received through UpdateContainers, so
// that a long benchmark does not keep every one of them.
func (rt *fakeRuntime) dropUnsolicited() {
	rt.mu.Lock()
	rt.unsolic = nil
	rt.mu.Unlock()
}

func (rt *fakeRuntime) adaptation() *adaptation.Adaptation {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.r == nil {
		rt.t.Fatal("runtime not started")
	}
	return rt.r
}

// apply sets the cpusets of updated containers.
func (rt *fakeRuntime) apply(updates []*api.ContainerUpdate) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, u := range updates {
		c := rt.ctrs[u.GetContainerId()]
		cpu := u.GetLinux().GetResources().GetCpu()
		if c == nil || cpu == nil {
			continue
		}
		setCPUs(c, cpu.GetCpus(), cpu.GetMems())
	}
}

func setCPUs(c *api.Container, cpus, mems string) {
	if c.Linux == nil {
		c.Linux = &api.LinuxContainer{}
	}
	if c.Linux.Resources == nil {
		c.Linux.Resources = &api.LinuxResources{}
	}
	if c.Linux.Resources.Cpu == nil {
		c.Linux.Resources.Cpu = &api.LinuxCPU{}
	}
	if cpus != "" {
		c.Linux.Resources.Cpu.Cpus = cpus
	}
	if mems != "" {
		c.Linux.Resources.Cpu.Mems = mems
	}
}

// cpus is the cpuset the runtime runs container id with.
func (rt *fakeRuntime) cpus(id string) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.ctrs[id].GetLinux().GetResources().GetCpu().GetCpus()
}

func sortedValues[V any](m map[string]V) []V {
	var out []V
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}
