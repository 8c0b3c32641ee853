package nri

import (
	"context"
	"sync/atomic"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"

	abi "github.com/nriwasm/nriwasm/abi/v1"
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
	_ stub.ConfigureInterface          = (*handler)(nil)
	_ stub.SynchronizeInterface        = (*handler)(nil)
	_ stub.RunPodInterface             = (*handler)(nil)
	_ stub.StopPodInterface            = (*handler)(nil)
	_ stub.RemovePodInterface          = (*handler)(nil)
	_ stub.CreateContainerInterface    = (*handler)(nil)
	_ stub.PostStartContainerInterface = (*handler)(nil)
	_ stub.UpdateContainerInterface    = (*handler)(nil)
	_ stub.StopContainerInterface      = (*handler)(nil)
	_ stub.RemoveContainerInterface    = (*handler)(nil)
)

// Configure subscribes to every event the handler implements.
func (h *handler) Configure(_ context.Context, _, runtime, version string) (api.EventMask, error) {
	nriVersion := h.stub.RuntimeNRIVersion()
	h.memoryPolicy.Store(supportsMemoryPolicy(nriVersion))
	h.configured.Store(true)
	down := h.p.markUp(h.stub)
	h.p.opts.metrics.Connection(metrics.ConnConnected)
	h.p.log.Info("connected to the runtime", "runtime", runtime, "version", version, "nriVersion", nriVersion, "memoryPolicy", h.memoryPolicy.Load(), "disconnectedFor", down)
	return 0, nil // 0: every event the handler implements
}

func (h *handler) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	ps, cs := synchronizeState(pods, ctrs)
	h.p.starts.synchronized(ctrs)
	us, err := h.p.mgr.Synchronize(ctx, ps, cs)
	h.p.starts.sent(us)
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
	h.p.starts.create(ctr.GetId())
	c := container(ctr, p)
	mountsAndDevices(ctr, c)
	h.p.locate(c)
	adj, us, err := h.p.mgr.CreateContainer(ctx, p, c)
	if err != nil {
		h.p.starts.gone(ctr.GetId())
		return nil, nil, err
	}
	h.p.starts.sent(us)
	return adjustment(adj, h.memoryPolicy.Load()), updates(us), nil
}

// PostStartContainer sends a started container the updates it was sent while
// it was only created: the runtime recorded them without applying them.
func (h *handler) PostStartContainer(_ context.Context, _ *api.PodSandbox, ctr *api.Container) error {
	if u := h.p.starts.started(ctr.GetId()); u != nil {
		h.p.log.Info("sending a started container the update it got before its start", "containerID", ctr.GetId(), "cpus", u.GetCpusetCpus(), "mems", u.GetCpusetMems())
		h.p.Send([]*abi.ContainerUpdate{u})
	}
	return nil
}

func (h *handler) UpdateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container, res *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	p := podSandbox(pod)
	us, err := h.p.mgr.UpdateContainer(ctx, p, container(ctr, p), resources(res))
	h.p.starts.sent(us)
	return updates(us), err
}

func (h *handler) StopContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	p := podSandbox(pod)
	h.p.starts.gone(ctr.GetId())
	us, err := h.p.mgr.StopContainer(ctx, p, container(ctr, p))
	h.p.starts.sent(us)
	return updates(us), err
}

func (h *handler) RemoveContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p := podSandbox(pod)
	h.p.starts.gone(ctr.GetId())
	us, err := h.p.mgr.RemoveContainer(ctx, p, container(ctr, p))
	h.p.Send(us)
	return err
}
