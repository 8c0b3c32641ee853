//go:build integration

package agent

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
)

// Runtime is the runtime side of NRI in the test's own process: NRI's
// adaptation (pkg/adaptation, the code containerd embeds) listening on
// Socket, with pods and containers kept in memory instead of run. It lets a
// test drive the real agent with more containers than a node could run
// (1,000 runc containers are too heavy for a 2-core machine): the agent sees
// the same requests as from containerd, and the runtime applies the cpusets
// it answers to its records of the containers, as containerd would to their
// cgroups.
//
//	rt := agent.StartRuntime(t)
//	a := agent.Start(t, agent.Options{Binary: bin, NRISocket: rt.Socket, Sysfs: fixture})
//	cpus, err := rt.Run(ctx, pod, ctr) // CreateContainer, StartContainer and their Post events
type Runtime struct {
	// Socket is the NRI socket the agent connects to (--nri-socket).
	Socket string

	mu    sync.Mutex
	r     *adaptation.Adaptation
	pods  map[string]*api.PodSandbox
	ctrs  map[string]*api.Container
	syncs int // Synchronize calls answered without error
}

// StartRuntime starts NRI's adaptation on a socket in a new short directory
// under the system's temporary one (a Unix socket's path must stay under 108
// bytes). Cleanup stops it.
func StartRuntime(t testing.TB) *Runtime {
	t.Helper()
	dir, err := os.MkdirTemp("", "nriwasm-rt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rt := &Runtime{Socket: filepath.Join(dir, "nri.sock"), pods: map[string]*api.PodSandbox{}, ctrs: map[string]*api.Container{}}
	r, err := adaptation.New("nriwasm-it-runtime", "v0.0.0", rt.synchronize, rt.update,
		adaptation.WithPluginPath(filepath.Join(dir, "plugins")),
		adaptation.WithPluginConfigPath(filepath.Join(dir, "conf.d")),
		adaptation.WithSocketPath(rt.Socket))
	if err != nil {
		t.Fatalf("NRI adaptation: %v", err)
	}
	if err := r.Start(); err != nil {
		t.Fatalf("starting NRI's adaptation: %v", err)
	}
	rt.r = r
	t.Cleanup(r.Stop)
	return rt
}

// synchronize hands a newly connected plugin every pod and container, by
// id, and applies the updates it answers.
func (rt *Runtime) synchronize(ctx context.Context, cb adaptation.SyncCB) error {
	rt.mu.Lock()
	pods := slices.Collect(maps.Values(rt.pods))
	ctrs := slices.Collect(maps.Values(rt.ctrs))
	rt.mu.Unlock()
	slices.SortFunc(pods, func(a, b *api.PodSandbox) int { return cmp.Compare(a.GetId(), b.GetId()) })
	slices.SortFunc(ctrs, func(a, b *api.Container) int { return cmp.Compare(a.GetId(), b.GetId()) })
	updates, err := cb(ctx, pods, ctrs)
	if err != nil {
		return err
	}
	rt.apply(updates)
	rt.mu.Lock()
	rt.syncs++
	rt.mu.Unlock()
	return nil
}

// update applies the updates a plugin sends unsolicited.
func (rt *Runtime) update(_ context.Context, updates []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
	rt.apply(updates)
	return nil, nil
}

// Syncs is how many times a plugin was synchronized (once per connection).
func (rt *Runtime) Syncs() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.syncs
}

// RunPod sends RunPodSandbox and keeps the pod.
func (rt *Runtime) RunPod(ctx context.Context, pod *api.PodSandbox) error {
	b := rt.r.BlockPluginSync()
	defer b.Unblock()
	if err := rt.r.RunPodSandbox(ctx, &api.RunPodSandboxRequest{Pod: pod}); err != nil {
		return fmt.Errorf("RunPodSandbox %s: %w", pod.GetName(), err)
	}
	rt.mu.Lock()
	rt.pods[pod.GetId()] = pod
	rt.mu.Unlock()
	return nil
}

// Run creates and starts container c in pod as containerd does
// (CreateContainer, PostCreateContainer, StartContainer,
// PostStartContainer), applies the adjustment's cpuset and any updates of
// other containers, and returns the cpuset c runs on ("" when the answer set
// none).
func (rt *Runtime) Run(ctx context.Context, pod *api.PodSandbox, c *api.Container) (string, error) {
	b := rt.r.BlockPluginSync()
	defer b.Unblock()
	c.PodSandboxId = pod.GetId()
	c.State = api.ContainerState_CONTAINER_CREATED
	resp, err := rt.r.CreateContainer(ctx, &api.CreateContainerRequest{Pod: pod, Container: c})
	if err != nil {
		return "", fmt.Errorf("CreateContainer %s/%s: %w", pod.GetName(), c.GetName(), err)
	}
	setCPUs(c, resp.GetAdjust().GetLinux().GetResources().GetCpu())
	rt.mu.Lock()
	rt.ctrs[c.GetId()] = c
	rt.mu.Unlock()
	rt.apply(resp.GetUpdate())
	if err := rt.r.PostCreateContainer(ctx, &api.PostCreateContainerRequest{Pod: pod, Container: c}); err != nil {
		return "", fmt.Errorf("PostCreateContainer %s/%s: %w", pod.GetName(), c.GetName(), err)
	}
	rt.mu.Lock()
	c.State = api.ContainerState_CONTAINER_RUNNING
	rt.mu.Unlock()
	if err := rt.r.StartContainer(ctx, &api.StartContainerRequest{Pod: pod, Container: c}); err != nil {
		return "", fmt.Errorf("StartContainer %s/%s: %w", pod.GetName(), c.GetName(), err)
	}
	if err := rt.r.PostStartContainer(ctx, &api.PostStartContainerRequest{Pod: pod, Container: c}); err != nil {
		return "", fmt.Errorf("PostStartContainer %s/%s: %w", pod.GetName(), c.GetName(), err)
	}
	return rt.CPUs(c.GetId()), nil
}

// CPUs is the cpuset container id runs on, as the runtime last applied it.
func (rt *Runtime) CPUs(id string) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.ctrs[id].GetLinux().GetResources().GetCpu().GetCpus()
}

// Containers is how many containers the runtime runs.
func (rt *Runtime) Containers() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return len(rt.ctrs)
}

// apply sets the cpusets of the updated containers.
func (rt *Runtime) apply(updates []*api.ContainerUpdate) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, u := range updates {
		if c := rt.ctrs[u.GetContainerId()]; c != nil {
			setCPUs(c, u.GetLinux().GetResources().GetCpu())
		}
	}
}

// setCPUs applies an answer's cpus and mems (those it sets) to c.
func setCPUs(c *api.Container, cpu *api.LinuxCPU) {
	if cpu == nil {
		return
	}
	if c.Linux == nil {
		c.Linux = &api.LinuxContainer{}
	}
	if c.Linux.Resources == nil {
		c.Linux.Resources = &api.LinuxResources{}
	}
	if c.Linux.Resources.Cpu == nil {
		c.Linux.Resources.Cpu = &api.LinuxCPU{}
	}
	if cpu.GetCpus() != "" {
		c.Linux.Resources.Cpu.Cpus = cpu.GetCpus()
	}
	if cpu.GetMems() != "" {
		c.Linux.Resources.Cpu.Mems = cpu.GetMems()
	}
}
