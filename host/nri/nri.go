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
	"net"
	"sync"
	"time"

	"github.com/containerd/nri/pkg/stub"
	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/metrics"
)

// Defaults of Options.
const (
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 500 * time.Millisecond
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

// Options configure a Plugin.
type Options struct {
	// SocketPath is the runtime's NRI socket. Required.
	SocketPath string
	// PluginName and PluginIndex register the plugin ("90-nriwasm"). Required.
	PluginName, PluginIndex string
	// MinBackoff and MaxBackoff bound the wait between connection attempts; it
	// doubles after each failure up to MaxBackoff and starts over after a
	// connection. MaxBackoff is how late the agent may notice that the
	// runtime is back (new containers start without the policy until then),
	// so it is short: a failed dial of a Unix socket costs microseconds.
	// Defaults DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Logger receives the plugin's and the stub's log. Default: discard.
	Logger logr.Logger
	// Metrics, if set, counts connections.
	Metrics *metrics.Metrics
	// Locator, if set, resolves where a new container's mounts and devices
	// live (topology hints); without it they cross without hints.
	Locator Locator
	// Dialer, if set, opens the connection to SocketPath instead of net.Dial
	// (tests use it to cut connections as a runtime restart would).
	Dialer func(socketPath string) (net.Conn, error)
}

// Plugin is the agent's NRI plugin. Create it with New, run it with Run.
type Plugin struct {
	mgr  Manager
	opts Options
	log  logr.Logger

	mu      sync.Mutex
	current stub.Stub // the connected stub, nil between connections
	queue   *sender
	starts  *starting
	down    time.Time // when the connection was lost or first failed; zero while connected or never
}

// New returns a plugin handing events to mgr.
func New(mgr Manager, o Options) (*Plugin, error) {
	if o.SocketPath == "" || o.PluginName == "" || o.PluginIndex == "" {
		return nil, errors.New("nri plugin: SocketPath, PluginName and PluginIndex are required")
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	log := o.Logger
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	p := &Plugin{mgr: mgr, opts: o, log: log.WithValues("component", "nri")}
	p.queue = newSender(p)
	p.starts = newStarting()
	return p, nil
}

// Run connects to the runtime and serves it until ctx ends, reconnecting with
// backoff whenever the connection fails or is lost. It returns nil when ctx
// ends.
func (p *Plugin) Run(ctx context.Context) error {
	go p.queue.run(ctx)
	backoff := p.opts.MinBackoff
	failures := 0
	for {
		connected, err := p.serve(ctx)
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case connected:
			backoff, failures = p.opts.MinBackoff, 0
			p.markDown()
			p.opts.Metrics.Connection(metrics.ConnLost)
			p.log.Error(err, "DISCONNECTED from the runtime: new containers start without the policy until the agent reconnects", "socket", p.opts.SocketPath)
		case failures == 0:
			failures++
			p.markDown()
			p.opts.Metrics.Connection(metrics.ConnFailed)
			p.log.Error(err, "cannot connect to the runtime's NRI socket; retrying every "+p.opts.MaxBackoff.String()+" at most", "socket", p.opts.SocketPath)
		default:
			failures++
			p.opts.Metrics.Connection(metrics.ConnFailed)
			p.log.V(1).Info("still cannot connect to the runtime's NRI socket", "socket", p.opts.SocketPath, "attempts", failures, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		if !connected {
			backoff = min(2*backoff, p.opts.MaxBackoff)
		}
	}
}

// serve runs one connection: it reports whether the plugin got registered and
// configured, and the error that ended it.
func (p *Plugin) serve(ctx context.Context) (connected bool, err error) {
	h := &handler{p: p}
	opts := []stub.Option{
		stub.WithPluginName(p.opts.PluginName),
		stub.WithPluginIdx(p.opts.PluginIndex),
		stub.WithSocketPath(p.opts.SocketPath),
		stub.WithLogger(stubLogger{p.log.WithValues("socket", p.opts.SocketPath)}),
		stub.WithOnClose(func() { p.setCurrent(nil) }),
	}
	if p.opts.Dialer != nil {
		opts = append(opts, stub.WithDialer(p.opts.Dialer))
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
