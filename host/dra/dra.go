// Package dra is the agent's kubelet DRA plugin: it registers the policy's
// driver with kubelet, publishes the devices the policy offers as
// ResourceSlices, and prepares and unprepares claims through the resource
// manager (the policy's Allocate and Release under the one lock), writing a
// CDI spec per claim and handing each device's status to the claim-status
// writer.
//
// The driver is named "<policy>.<domain>". Prepare is refused until the
// runtime's first NRI Synchronize was handled; repeated Prepare and Unprepare
// calls are idempotent, and prepared claims live in the resource manager's
// journal and checkpoint, so a restarted agent still knows them (kubelet does
// not prepare again). Background errors that wrap
// kubeletplugin.ErrRecoverable are logged; any other asks the agent to shut
// down rather than stay registered but unable to serve.
//
//	d, err := dra.New(m, "topology-aware.nri.io", node, cs, specs, dra.WithStatus(w))
//	m.Go("dra", d.Run) // registers, publishes, serves until the agent stops
package dra

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/go-logr/logr"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/claimstatus"
)

// Manager is what the plugin needs of the resource manager (host/resmgr).
type Manager interface {
	Devices(ctx context.Context) (*abi.DevicesResponse, error)
	PrepareClaim(ctx context.Context, claim *abi.Claim, write func(*abi.AllocateResponse) error) (*abi.AllocateResponse, error)
	UnprepareClaim(ctx context.Context, uid string, remove func() error) error
	Shutdown(reason error)
}

// SpecWriter writes and removes claims' CDI specs (host/cdi.Writer).
type SpecWriter interface {
	Write(claimUID string, devices []*abi.PreparedDevice) ([]string, error)
	Remove(claimUID string) error
}

// StatusWriter records claims' device status on the API server
// (host/claimstatus.Writer).
type StatusWriter interface {
	Set(claim claimstatus.ClaimRef, devices []claimstatus.Device) error
	Clear(claim claimstatus.ClaimRef)
}

// Driver is the kubelet plugin. Create it with New; Run serves.
type Driver struct {
	m      Manager
	driver string
	node   string
	client kubernetes.Interface
	cdi    SpecWriter
	o      options
	log    logr.Logger

	mu        sync.Mutex
	helper    *kubeletplugin.Helper
	devices   []string      // names of the published devices, for health reports
	published chan struct{} // closed and replaced on every publication
	pubGen    uint64        // counts publications; confirm stops at a newer one
	republish chan struct{}
	stopped   chan struct{}
	stopOnce  sync.Once
}

// New returns the Driver of driverName ("<policy>.<domain>") on node
// nodeName (the pool's name and the slices' node), which reads claims and
// writes ResourceSlices with client and writes the claims' CDI specs with
// cdi; nothing starts before Run.
func New(m Manager, driverName, nodeName string, client kubernetes.Interface, cdi SpecWriter, opts ...Option) (*Driver, error) {
	switch {
	case driverName == "":
		return nil, errors.New("dra: driver name: empty")
	case nodeName == "":
		return nil, errors.New("dra: node name: empty")
	case client == nil:
		return nil, errors.New("dra: kube client: nil")
	case cdi == nil:
		return nil, errors.New("dra: CDI spec writer: nil")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if o.pluginDataDir == "" {
		o.pluginDataDir = path.Join(kubeletplugin.KubeletPluginsDir, driverName)
	}
	return &Driver{m: m, driver: driverName, node: nodeName, client: client, cdi: cdi, o: o,
		log:       o.logger.WithValues("driver", driverName),
		published: make(chan struct{}), republish: make(chan struct{}, 1), stopped: make(chan struct{})}, nil
}

// Run registers the plugin with kubelet, publishes the policy's devices and
// serves until ctx ends or Stop is called; then it stops the plugin (without
// taking the resource manager's lock, which in-flight handlers may wait on).
// Publishing is retried; a failure to start is returned.
func (d *Driver) Run(ctx context.Context) error {
	kctx := klog.NewContext(ctx, d.log)
	opts := []kubeletplugin.Option{
		kubeletplugin.DriverName(d.driver),
		kubeletplugin.NodeName(d.node),
		kubeletplugin.KubeClient(d.client),
		kubeletplugin.PluginDataDirectoryPath(d.o.pluginDataDir),
		kubeletplugin.RegistrarDirectoryPath(d.o.registrarDir),
	}
	if d.o.podUID != "" {
		opts = append(opts, kubeletplugin.RollingUpdate(d.o.podUID))
	}
	h, err := kubeletplugin.Start(kctx, d, opts...)
	if err != nil {
		return fmt.Errorf("dra: start the kubelet plugin: %w", err)
	}
	d.mu.Lock()
	d.helper = h
	d.mu.Unlock()
	defer d.Stop()
	d.log.Info("kubelet plugin started", "pluginDataDir", d.o.pluginDataDir, "registrarDir", d.o.registrarDir, "rollingUpdate", d.o.podUID != "")

	d.Republish()
	const firstRetry = time.Second
	var retry <-chan time.Time // set only while a publication has failed
	backoff := firstRetry
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-d.stopped:
			return nil
		case <-d.republish:
		case <-retry:
		}
		if err := d.publish(kctx, h); err != nil {
			d.log.Error(err, "publishing devices failed; retrying", "in", backoff)
			retry = time.After(backoff)
			backoff = min(2*backoff, time.Minute)
			continue
		}
		retry, backoff = nil, firstRetry
	}
}

// Republish asks Run to publish the policy's devices again (after its
// configuration changed).
func (d *Driver) Republish() {
	select {
	case d.republish <- struct{}{}:
	default:
	}
}

// Stop stops the kubelet plugin: its sockets are gone when Stop returns. It
// never takes the resource manager's lock. Safe to call more than once.
func (d *Driver) Stop() {
	d.stopOnce.Do(func() { close(d.stopped) })
	d.mu.Lock()
	h := d.helper
	d.helper = nil
	d.mu.Unlock()
	if h != nil {
		h.Stop()
		d.log.Info("kubelet plugin stopped")
	}
}

// publish asks the policy for its devices and hands them to the slice
// controller, which creates, updates and deletes this node's ResourceSlices.
func (d *Driver) publish(ctx context.Context, h *kubeletplugin.Helper) error {
	devs, err := d.m.Devices(ctx)
	if err != nil {
		return err
	}
	res, err := DriverResources(d.node, devs)
	if err != nil {
		return fmt.Errorf("dra: devices: %w", err)
	}
	if err := h.PublishResources(ctx, res); err != nil {
		return fmt.Errorf("dra: publish: %w", err)
	}
	names := make([]string, 0, len(devs.GetDevices()))
	for _, dev := range devs.GetDevices() {
		names = append(names, dev.GetName())
	}
	d.mu.Lock()
	d.devices = names
	close(d.published)
	d.published = make(chan struct{})
	d.pubGen++
	gen := d.pubGen
	d.mu.Unlock()
	d.log.V(1).Info("devices handed to the slice controller", "devices", len(names), "slices", len(res.Pools[d.node].Slices))
	go d.confirm(ctx, gen, len(names))
	return nil
}

// confirmInterval is how often confirm reads the node's ResourceSlices back.
const confirmInterval = 500 * time.Millisecond

// confirm logs "devices published" once the API server holds this node's
// ResourceSlices of the driver with the n devices of publication gen: the
// slice controller writes them in the background and reports only failures
// (to HandleError), so without reading them back an unreachable API server
// would look like a success. It gives up when a newer publication starts or
// ctx ends.
func (d *Driver) confirm(ctx context.Context, gen uint64, n int) {
	t := time.NewTicker(confirmInterval)
	defer t.Stop()
	for {
		d.mu.Lock()
		stale := d.pubGen != gen
		d.mu.Unlock()
		if stale {
			return
		}
		list, err := d.client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{
			FieldSelector: "spec.nodeName=" + d.node + ",spec.driver=" + d.driver,
		})
		if err == nil {
			got, slices := 0, 0
			for _, s := range list.Items {
				if s.Spec.Driver == d.driver && s.Spec.NodeName != nil && *s.Spec.NodeName == d.node {
					got += len(s.Spec.Devices)
					slices++
				}
			}
			if got == n && (n > 0 || slices == 0) {
				d.log.Info("devices published", "devices", n, "slices", slices)
				return
			}
		} else {
			d.log.V(1).Info("cannot read the published ResourceSlices back yet", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-d.stopped:
			return
		case <-t.C:
		}
	}
}

// PrepareResourceClaims implements kubeletplugin.DRAPlugin: each claim is
// prepared through the resource manager, its CDI spec written under the lock,
// its devices' status queued for the API server.
func (d *Driver) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		out[claim.UID] = d.prepare(ctx, claim)
	}
	return out, nil
}

func (d *Driver) prepare(ctx context.Context, claim *resourceapi.ResourceClaim) kubeletplugin.PrepareResult {
	log := d.log.WithValues("claim", claim.Namespace+"/"+claim.Name, "claimUID", claim.UID)
	c := claimToABI(claim, d.driver)
	for _, r := range c.GetResults() {
		// This node publishes one pool, named after the node: a device of
		// another pool is another node's, whose CPUs these are not.
		if r.GetPool() != d.node {
			err := fmt.Errorf("prepare claim %s/%s: request %q is allocated device %q of pool %q, not this node's pool %q",
				claim.Namespace, claim.Name, r.GetRequest(), r.GetDevice(), r.GetPool(), d.node)
			log.Error(err, "prepare refused")
			return kubeletplugin.PrepareResult{Err: err}
		}
	}
	var ids []string
	resp, err := d.m.PrepareClaim(ctx, c, func(r *abi.AllocateResponse) (err error) {
		ids, err = d.cdi.Write(c.GetUid(), r.GetDevices())
		return err
	})
	if err != nil {
		log.Error(err, "prepare failed")
		return kubeletplugin.PrepareResult{Err: fmt.Errorf("prepare claim %s/%s: %w", claim.Namespace, claim.Name, err)}
	}
	var result kubeletplugin.PrepareResult
	var statuses []claimstatus.Device
	for i, pd := range resp.GetDevices() {
		dev := kubeletplugin.Device{Requests: []string{pd.GetRequest()}, PoolName: pd.GetPool(), DeviceName: pd.GetDevice(), CDIDeviceIDs: []string{ids[i]}}
		if pd.GetShareId() != "" {
			share := types.UID(pd.GetShareId())
			dev.ShareID = &share
		}
		result.Devices = append(result.Devices, dev)
		if pd.GetStatus() != nil {
			statuses = append(statuses, claimstatus.Device{Pool: pd.GetPool(), Device: pd.GetDevice(), ShareID: pd.GetShareId(), Status: pd.GetStatus()})
		}
	}
	if d.o.status != nil && len(statuses) > 0 {
		if err := d.o.status.Set(claimstatus.ClaimRef{Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}, statuses); err != nil {
			// The claim is prepared; only its status cannot be written.
			log.Error(err, "device status not written")
		}
	}
	return result
}

// UnprepareResourceClaims implements kubeletplugin.DRAPlugin: each claim is
// released through the resource manager, its CDI spec removed and our
// entries of its status cleared. Claims that are not prepared succeed.
func (d *Driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	out := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		uid := string(claim.UID)
		err := d.m.UnprepareClaim(ctx, uid, func() error { return d.cdi.Remove(uid) })
		if err != nil {
			d.log.Error(err, "unprepare failed", "claim", claim.Namespace+"/"+claim.Name, "claimUID", uid)
			out[claim.UID] = fmt.Errorf("unprepare claim %s/%s: %w", claim.Namespace, claim.Name, err)
			continue
		}
		out[claim.UID] = nil
		if d.o.status != nil {
			d.o.status.Clear(claimstatus.ClaimRef{Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID})
		}
	}
	return out, nil
}

// HandleError implements kubeletplugin.DRAPlugin: recoverable background
// errors (publishing) are logged; any other asks the agent to shut down.
func (d *Driver) HandleError(_ context.Context, err error, msg string) {
	if errors.Is(err, kubeletplugin.ErrRecoverable) {
		d.log.Error(err, msg)
		return
	}
	d.log.Error(err, msg+": shutting down")
	d.m.Shutdown(fmt.Errorf("dra: %s: %w", msg, err))
}

// WatchHealthStatus implements kubeletplugin.DRAPlugin: every published device
// is reported healthy (the policy offers only devices it can allocate), again
// every HealthInterval and whenever the devices are republished.
func (d *Driver) WatchHealthStatus(ctx context.Context, reports chan<- kubeletplugin.DeviceHealthReport) error {
	tick := time.NewTicker(d.o.healthInterval)
	defer tick.Stop()
	for {
		d.mu.Lock()
		names, published := d.devices, d.published
		d.mu.Unlock()
		report := kubeletplugin.DeviceHealthReport{}
		now := time.Now()
		for _, name := range names {
			report.Devices = append(report.Devices, kubeletplugin.DeviceHealth{
				PoolName: d.node, DeviceName: name, Health: kubeletplugin.HealthStatusHealthy, LastUpdated: now,
			})
		}
		select {
		case <-ctx.Done():
			return nil
		case reports <- report:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-published:
		}
	}
}
