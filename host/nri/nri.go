// Package nri connects the agent to the container runtime through NRI
// (github.com/containerd/nri's pkg/stub): it normalizes what the runtime sends
// (CPU shares and quota in milli-CPU, the QoS class from the cgroup parent),
// hands every event to the resource manager, and turns its answers into NRI
// adjustments and container updates.
//
// The stub does not reconnect when the runtime goes away (its Run returns); Run
// here does, with exponential backoff, and the runtime resynchronizes the
// agent on every new connection. Updates that no reply can carry (those of
// RunPodSandbox, StopPodSandbox, RemovePodSandbox, RemoveContainer and of a
// live reconfiguration) are sent with the stub's UpdateContainers from a
// queue, never from inside the runtime's request.
package nri

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/containerd/nri/pkg/stub"
	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/metrics"
)

// Manager is what the plugin hands events to; *resmgr.Manager implements it.
type Manager interface {
	Synchronize(ctx context.Context, pods []*abi.PodSandbox, ctrs []*abi.Container) ([]*abi.ContainerUpdate, error)
	RunPodSandbox(ctx context.Context, pod *abi.PodSandbox) ([]*abi.ContainerUpdate, error)
	StopPodSandbox(ctx context.Context, pod *abi.PodSandbox) ([]*abi.ContainerUpdate, error)
	RemovePodSandbox(ctx context.Context, pod *abi.PodSandbox) ([]*abi.ContainerUpdate, error)
	CreateContainer(ctx context.Context, pod *abi.PodSandbox, c *abi.Container) (*abi.ContainerAdjustment, []*abi.ContainerUpdate, error)
	UpdateContainer(ctx context.Context, pod *abi.PodSandbox, c *abi.Container, res *abi.Resources) ([]*abi.ContainerUpdate, error)
	StopContainer(ctx context.Context, pod *abi.PodSandbox, c *abi.Container) ([]*abi.ContainerUpdate, error)
	RemoveContainer(ctx context.Context, pod *abi.PodSandbox, c *abi.Container) ([]*abi.ContainerUpdate, error)
}

// Plugin is the agent's NRI plugin. Create it with New, run it with Run.
type Plugin struct {
	mgr                 Manager
	socket, name, index string
	opts                options
	log                 logr.Logger

	mu      sync.Mutex
	current stub.Stub // the connected stub, nil between connections
	queue   *sender
	starts  *starting
	down    time.Time // when the connection was lost or first failed; zero while connected or never
}

// New returns a plugin handing events to mgr, registered as name and index
// ("90-nriwasm") with the runtime's NRI socket at socketPath.
func New(mgr Manager, socketPath, name, index string, opts ...Option) (*Plugin, error) {
	switch {
	case socketPath == "":
		return nil, errors.New("nri plugin: socket path: empty")
	case name == "":
		return nil, errors.New("nri plugin: plugin name: empty")
	case index == "":
		return nil, errors.New("nri plugin: plugin index: empty")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	p := &Plugin{mgr: mgr, socket: socketPath, name: name, index: index, opts: o, log: o.logger.WithValues("component", "nri")}
	p.queue = newSender(p)
	p.starts = newStarting()
	return p, nil
}

// Run connects to the runtime and serves it until ctx ends, reconnecting with
// backoff whenever the connection fails or is lost. It returns nil when ctx
// ends.
func (p *Plugin) Run(ctx context.Context) error {
	go p.queue.run(ctx)
	backoff := p.opts.minBackoff
	failures := 0
	for {
		connected, err := p.serve(ctx)
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case connected:
			backoff, failures = p.opts.minBackoff, 0
			p.markDown()
			p.opts.metrics.Connection(metrics.ConnLost)
			p.log.Error(err, "DISCONNECTED from the runtime: new containers start without the policy until the agent reconnects", "socket", p.socket)
		case failures == 0:
			failures++
			p.markDown()
			p.opts.metrics.Connection(metrics.ConnFailed)
			p.log.Error(err, "cannot connect to the runtime's NRI socket; retrying every "+p.opts.maxBackoff.String()+" at most", "socket", p.socket)
		default:
			failures++
			p.opts.metrics.Connection(metrics.ConnFailed)
			p.log.V(1).Info("still cannot connect to the runtime's NRI socket", "socket", p.socket, "attempts", failures, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		if !connected {
			backoff = min(2*backoff, p.opts.maxBackoff)
		}
	}
}

// serve runs one connection: it reports whether the plugin got registered and
// configured, and the error that ended it.
func (p *Plugin) serve(ctx context.Context) (connected bool, err error) {
	h := &handler{p: p}
	opts := []stub.Option{
		stub.WithPluginName(p.name),
		stub.WithPluginIdx(p.index),
		stub.WithSocketPath(p.socket),
		stub.WithLogger(stubLogger{p.log.WithValues("socket", p.socket)}),
		stub.WithOnClose(func() { p.setCurrent(nil) }),
	}
	if p.opts.dialer != nil {
		opts = append(opts, stub.WithDialer(p.opts.dialer))
	}
	st, err := stub.New(h, opts...)
	if err != nil {
		return false, fmt.Errorf("create NRI stub: %w", err)
	}
	h.stub = st
	err = st.Run(ctx)
	p.setCurrent(nil)
	return h.configured.Load(), err
}

// markDown records when the agent lost (or never had) its connection, unless
// it is down already.
func (p *Plugin) markDown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down.IsZero() {
		p.down = time.Now()
	}
}

// markUp records a connection and returns how long the agent was down (0 for
// the first connection).
func (p *Plugin) markUp(st stub.Stub) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = st
	var d time.Duration
	if !p.down.IsZero() {
		d = time.Since(p.down)
	}
	p.down = time.Time{}
	return d
}

func (p *Plugin) setCurrent(st stub.Stub) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = st
}

func (p *Plugin) currentStub() stub.Stub {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.current
}

// Send queues updates the runtime did not ask for; they are sent in order on
// the current connection (and dropped, with a log, while there is none: the
// next connection's Synchronize brings the runtime up to date).
func (p *Plugin) Send(us []*abi.ContainerUpdate) {
	p.starts.sent(us)
	p.queue.push(us)
}
