package nri

import (
	"context"
	"sync/atomic"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"

	"github.com/nriwasm/nriwasm/host/metrics"
)

// handler serves one connection's requests; the stub finds its methods by the
// interfaces they implement.
type handler struct {
	p            *Plugin
	stub         stub.Stub
	configured   atomic.Bool
	memoryPolicy atomic.Bool // the runtime applies memory policy adjustments
}

var (
	_ stub.ConfigureInterface       = (*handler)(nil)
	_ stub.SynchronizeInterface     = (*handler)(nil)
	_ stub.RunPodInterface          = (*handler)(nil)
	_ stub.StopPodInterface         = (*handler)(nil)
	_ stub.RemovePodInterface       = (*handler)(nil)
	_ stub.CreateContainerInterface = (*handler)(nil)
	_ stub.UpdateContainerInterface = (*handler)(nil)
	_ stub.StopContainerInterface   = (*handler)(nil)
	_ stub.RemoveContainerInterface = (*handler)(nil)
)

// Configure subscribes to every event the handler implements.
func (h *handler) Configure(_ context.Context, _, runtime, version string) (api.EventMask, error) {
	nriVersion := h.stub.RuntimeNRIVersion()
	h.memoryPolicy.Store(supportsMemoryPolicy(nriVersion))
	h.configured.Store(true)
	h.p.setCurrent(h.stub)
	h.p.opts.Metrics.Connection(metrics.ConnConnected)
	h.p.log.Info("connected to the runtime", "runtime", runtime, "version", version, "nriVersion", nriVersion, "memoryPolicy", h.memoryPolicy.Load())
	return 0, nil // 0: every event the handler implements
}

func (h *handler) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	ps, cs := synchronizeState(pods, ctrs)
	us, err := h.p.mgr.Synchronize(ctx, ps, cs)
	return updates(us), err
}

func (h *handler) RunPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	us, err := h.p.mgr.RunPodSandbox(ctx, podSandbox(pod))
	h.p.Send(us)
	return err
}

func (h *handler) StopPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	us, err := h.p.mgr.StopPodSandbox(ctx, podSandbox(pod))
	h.p.Send(us)
	return err
}

func (h *handler) RemovePodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	us, err := h.p.mgr.RemovePodSandbox(ctx, podSandbox(pod))
	h.p.Send(us)
	return err
}

func (h *handler) CreateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p := podSandbox(pod)
	adj, us, err := h.p.mgr.CreateContainer(ctx, p, container(ctr, p))
	if err != nil {
		return nil, nil, err
	}
	return adjustment(adj, h.memoryPolicy.Load()), updates(us), nil
}

func (h *handler) UpdateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container, res *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	p := podSandbox(pod)
	us, err := h.p.mgr.UpdateContainer(ctx, p, container(ctr, p), resources(res))
	return updates(us), err
}

func (h *handler) StopContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	p := podSandbox(pod)
	us, err := h.p.mgr.StopContainer(ctx, p, container(ctr, p))
	return updates(us), err
}

func (h *handler) RemoveContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p := podSandbox(pod)
	us, err := h.p.mgr.RemoveContainer(ctx, p, container(ctr, p))
	h.p.Send(us)
	return err
}
