package dra_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/cdi"
	"github.com/nriwasm/nriwasm/host/claimstatus"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/dra"
	"github.com/nriwasm/nriwasm/host/dra/kubelettest"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/native"
)

const (
	driver = "topology-aware.nri.io"
	node   = "node-a"
)

// nativePolicy runs the topology-aware policy in-process as a resmgr.Policy.
type nativePolicy struct{ *native.Runner }

func (nativePolicy) Rebuilds() uint64            { return 0 }
func (nativePolicy) Close(context.Context) error { return nil }
func (nativePolicy) Discard(context.Context)     {}

func loadNative(ctx context.Context, restore wasm.RestoreFunc) (resmgr.Policy, error) {
	r, err := native.New(topologyaware.New())
	if err != nil {
		return nil, err
	}
	return nativePolicy{r}, restore(ctx, r)
}

func topology() *abi.Topology {
	t := &abi.Topology{}
	for id := range uint32(16) {
		t.Cpus = append(t.Cpus, &abi.CPU{Id: id, NumaNode: id / 8, CoreId: id})
	}
	t.NumaNodes = []*abi.NUMANode{{Id: 0, MemoryBytes: 1 << 30}, {Id: 1, MemoryBytes: 1 << 30}}
	return t
}

// statuses records what the plugin hands the claim-status writer.
type statuses struct {
	mu      sync.Mutex
	set     map[types.UID][]claimstatus.Device
	cleared []types.UID
}

func (s *statuses) Set(c claimstatus.ClaimRef, d []claimstatus.Device) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set[c.UID] = d
	return nil
}

func (s *statuses) Clear(c claimstatus.ClaimRef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleared = append(s.cleared, c.UID)
}

// blockingCDI wraps the real spec writer; while gate is set, Write waits on it.
type blockingCDI struct {
	*cdi.Writer
	entered chan struct{}
	gate    chan struct{}
}

func (b *blockingCDI) Write(uid string, d []*abi.PreparedDevice) ([]string, error) {
	if b.gate != nil {
		b.entered <- struct{}{}
		<-b.gate
	}
	return b.Writer.Write(uid, d)
}

type env struct {
	m         *resmgr.Manager
	d         *dra.Driver
	client    *fake.Clientset
	cdi       *blockingCDI
	status    *statuses
	plugin    *kubelettest.Plugin
	dataDir   string
	regDir    string
	cdiDir    string
	runResult chan error
}

// shortDir is a temporary directory with a path short enough for unix sockets.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dra")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func allocatedClaim(uid, device, cpus string) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "claim-" + uid, UID: types.UID(uid)},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
			Results: []resourceapi.DeviceRequestAllocationResult{{Request: "cpus", Driver: driver, Pool: node, Device: device,
				ConsumedCapacity: map[resourceapi.QualifiedName]resource.Quantity{"dra.cpu/cpu": resource.MustParse(cpus)}}},
		}}},
	}
}

func start(t *testing.T, claims ...*resourceapi.ResourceClaim) *env {
	t.Helper()
	return startWith(t, nil, claims...)
}

// startWith is start with the driver's further options that extra returns
// (after the default ones, so they win); extra gets the fake API server's
// client to add reactors to it. extra may be nil.
func startWith(t *testing.T, extra func(*fake.Clientset) []dra.Option, claims ...*resourceapi.ResourceClaim) *env {
	t.Helper()
	ctx := context.Background()
	cfg := config.Default()
	cfg.Policy.Name = "topology-aware"
	cfg.Policy.Data = []byte("dra:\n  enabled: true\n")
	cfg.StateDir = t.TempDir()
	m, err := resmgr.New(ctx, cfg, topology(), loadNative, resmgr.WithNodeName(node), resmgr.WithDriverName(driver))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	e := &env{m: m, status: &statuses{set: map[types.UID][]claimstatus.Device{}}, runResult: make(chan error, 1)}
	base := shortDir(t)
	e.dataDir, e.regDir, e.cdiDir = filepath.Join(base, "p"), filepath.Join(base, "r"), filepath.Join(base, "cdi")
	for _, dir := range []string{e.dataDir, e.regDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	w, err := cdi.New(e.cdiDir, driver)
	if err != nil {
		t.Fatal(err)
	}
	e.cdi = &blockingCDI{Writer: w}
	objs := []runtime.Object{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, UID: "node-uid"}}}
	for _, c := range claims {
		objs = append(objs, c)
	}
	e.client = fake.NewClientset(objs...)
	opts := []dra.Option{dra.WithPluginDataDir(e.dataDir), dra.WithRegistrarDir(e.regDir), dra.WithStatus(e.status),
		dra.WithLogger(logr.Discard()), dra.WithHealthInterval(50 * time.Millisecond)}
	if extra != nil {
		opts = append(opts, extra(e.client)...)
	}
	e.d, err = dra.New(m, driver, node, e.client, e.cdi, opts...)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	go func() { e.runResult <- e.d.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		<-e.runResult
	})
	rctx, rcancel := context.WithTimeout(ctx, 20*time.Second)
	defer rcancel()
	e.plugin, err = kubelettest.Register(rctx, e.regDir)
	if err != nil {
		t.Fatalf("kubelet stand-in could not register the plugin: %v", err)
	}
	t.Cleanup(func() { e.plugin.Close() })
	if e.plugin.Info.Name != driver {
		t.Fatalf("registered as %q, want %q", e.plugin.Info.Name, driver)
	}
	return e
}

func ref(c *resourceapi.ResourceClaim) kubelettest.Claim {
	return kubelettest.Claim{Namespace: c.Namespace, Name: c.Name, UID: string(c.UID)}
}

func TestKubeletPreparesAndUnpreparesThroughThePolicy(t *testing.T) {
	claim := allocatedClaim("0b6f3e1c-8a54-4f7e-9c1d-2a3b4c5d6e7f", "cpudevnuma001", "2")
	e := start(t, claim)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if _, err := e.plugin.Prepare(ctx, ref(claim)); err == nil || !strings.Contains(err.Error(), "Synchronize") {
		t.Fatalf("Prepare before the runtime's Synchronize: %v, want a refusal naming Synchronize", err)
	}
	if _, err := e.m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 { // kubelet may repeat Prepare
		resp, err := e.plugin.Prepare(ctx, ref(claim))
		if err != nil {
			t.Fatalf("Prepare: %v", err)
		}
		devs := resp[string(claim.UID)].Devices
		want := abi.CDIDeviceName(driver, string(claim.UID), 0)
		if len(devs) != 1 || devs[0].DeviceName != "cpudevnuma001" || devs[0].PoolName != node || !slices.Equal(devs[0].CdiDeviceIds, []string{want}) {
			t.Fatalf("prepared devices = %v, want cpudevnuma001 with CDI device %s", devs, want)
		}
	}
	spec, err := os.ReadFile(e.cdi.Path(string(claim.UID)))
	if err != nil {
		t.Fatalf("CDI spec: %v", err)
	}
	if !strings.Contains(string(spec), "DRA_CPUSET_0b6f3e1c-8a54-4f7e-9c1d-2a3b4c5d6e7f=") {
		t.Errorf("CDI spec lacks the policy's env: %s", spec)
	}
	st := e.status.set[claim.UID]
	if len(st) != 1 || st[0].Device != "cpudevnuma001" || st[0].Status.GetConditions()[0].GetType() != "Ready" {
		t.Errorf("device status handed to the writer = %v", st)
	}
	if got := e.m.PreparedClaims(); !slices.Equal(got, []string{string(claim.UID)}) {
		t.Errorf("journaled claims = %q", got)
	}

	for range 2 {
		if err := e.plugin.Unprepare(ctx, ref(claim)); err != nil {
			t.Fatalf("Unprepare: %v", err)
		}
	}
	if _, err := os.Stat(e.cdi.Path(string(claim.UID))); !os.IsNotExist(err) {
		t.Errorf("CDI spec still there after Unprepare: %v", err)
	}
	if len(e.m.PreparedClaims()) != 0 || len(e.status.cleared) != 2 {
		t.Errorf("after Unprepare: journal %q, status cleared %d times", e.m.PreparedClaims(), len(e.status.cleared))
	}
}

func TestDevicesArePublishedAsSlicesOfTheNode(t *testing.T) {
	e := start(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, err := e.client.ResourceV1().ResourceSlices().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 1 {
			s := list.Items[0]
			var names []string
			for _, d := range s.Spec.Devices {
				names = append(names, d.Name)
			}
			if s.Spec.Driver != driver || s.Spec.Pool.Name != node || s.Spec.NodeName == nil || *s.Spec.NodeName != node ||
				!slices.Equal(names, []string{"cpudevnuma000", "cpudevnuma001"}) {
				t.Fatalf("slice = %+v, devices %q", s.Spec, names)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("slices = %d after 20 s, want 1", len(list.Items))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStopDoesNotNeedTheLock: with the resource manager's lock held (by a
// Prepare whose CDI write hangs), Stop still stops the plugin: its socket
// disappears.
func TestStopDoesNotNeedTheLock(t *testing.T) {
	claim := allocatedClaim("u-stop", "cpudevnuma000", "1")
	e := start(t, claim)
	ctx := context.Background()
	if _, err := e.m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	e.cdi.entered, e.cdi.gate = make(chan struct{}), make(chan struct{})
	prepared := make(chan error, 1)
	go func() {
		_, err := e.plugin.Prepare(ctx, ref(claim))
		prepared <- err
	}()
	<-e.cdi.entered // the Prepare holds the lock now
	socks, _ := filepath.Glob(filepath.Join(e.dataDir, "*.sock"))
	if len(socks) == 0 {
		t.Fatal("no plugin socket while serving")
	}
	stopped := make(chan struct{})
	go func() { e.d.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(20 * time.Second):
		close(e.cdi.gate)
		t.Fatal("Stop waited for the resource manager's lock")
	}
	for _, s := range socks {
		if _, err := os.Stat(s); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("plugin socket %s still there after Stop: %v", s, err)
		}
	}
	close(e.cdi.gate)
	<-prepared // the interrupted call ends one way or the other
}

// TestHealthReportsCoverThePublishedDevices: kubelet's health stream gets
// every published device as healthy, and again every interval.
func TestHealthReportsCoverThePublishedDevices(t *testing.T) {
	e := start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports := make(chan kubeletplugin.DeviceHealthReport)
	done := make(chan error, 1)
	go func() { done <- e.d.WatchHealthStatus(ctx, reports) }()
	seen := 0
	for seen < 2 {
		select {
		case r := <-reports:
			if len(r.Devices) == 0 {
				continue // before the first publication
			}
			var names []string
			for _, d := range r.Devices {
				if d.Health != kubeletplugin.HealthStatusHealthy || d.PoolName != node {
					t.Fatalf("device health %+v", d)
				}
				names = append(names, d.DeviceName)
			}
			if !slices.Equal(names, []string{"cpudevnuma000", "cpudevnuma001"}) {
				t.Fatalf("report covers %q", names)
			}
			seen++
		case <-time.After(20 * time.Second):
			t.Fatal("no health report")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("WatchHealthStatus: %v", err)
	}
}

// TestRollingUpdateRegistersPerPod: with the agent's pod UID, the plugin's
// registration socket is the pod's own, so an upgrade's new pod registers
// beside the old one.
func TestRollingUpdateRegistersPerPod(t *testing.T) {
	e := startWith(t, func(*fake.Clientset) []dra.Option { return []dra.Option{dra.WithPodUID("pod-1234")} })
	socks, _ := filepath.Glob(filepath.Join(e.regDir, "*.sock"))
	if len(socks) != 1 || !strings.Contains(filepath.Base(socks[0]), "pod-1234") {
		t.Fatalf("registration sockets %q, want one named after the pod", socks)
	}
}
