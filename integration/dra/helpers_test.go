//go:build integration

package dra_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/cdi"
	"github.com/nriwasm/nriwasm/host/claimstatus"
	"github.com/nriwasm/nriwasm/host/dra"
	"github.com/nriwasm/nriwasm/host/dra/kubelettest"
	"github.com/nriwasm/nriwasm/integration/kubeapi"
)

// node is one agent's view: the driver running as its own service account
// on a node of its own, with a kubelet stand-in registered.
type node struct {
	name   string
	driver *dra.Driver
	client kubernetes.Interface // the driver's service account
	cdi    *cdi.Writer
	plugin *kubelettest.Plugin
	status *claimstatus.Writer
}

// shortDir is a temporary directory short enough for unix socket paths.
func shortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nrw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startDriver runs the DRA driver named driverName for m on a new node of s,
// authenticated as the driver's service account.
func startDriver(t testing.TB, s *kubeapi.Server, driverName string, m dra.Manager) *node {
	t.Helper()
	return startDriverOn(t, s, s.UniqueName("node"), driverName, m)
}

// startDriverOn is startDriver on a node named nodeName.
func startDriverOn(t testing.TB, s *kubeapi.Server, nodeName, driverName string, m dra.Manager) *node {
	t.Helper()
	n := &node{name: nodeName}
	s.CreateNode(t, n.name)
	s.InstallDriver(t, driverName)
	n.client = s.DriverClient(t, n.name, driverName)
	base := shortDir(t)
	data, reg := filepath.Join(base, "p"), filepath.Join(base, "r")
	for _, d := range []string{data, reg} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if n.cdi, err = cdi.New(filepath.Join(base, "cdi"), driverName); err != nil {
		t.Fatal(err)
	}
	log := testLogger(t)
	status, err := claimstatus.New(n.client, driverName, claimstatus.WithLogger(log), claimstatus.WithBackoff(50*time.Millisecond, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n.status = status
	n.driver, err = dra.New(m, driverName, n.name, n.client, n.cdi,
		dra.WithPluginDataDir(data), dra.WithRegistrarDir(reg), dra.WithStatus(n.status), dra.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = n.driver.Run(ctx); done <- struct{}{} }()
	go func() { _ = n.status.Run(ctx); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done })
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	if n.plugin, err = kubelettest.Register(rctx, reg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.plugin.Close() })
	return n
}

// slicesOf lists the driver's ResourceSlices of node.
func slicesOf(t testing.TB, c kubernetes.Interface, driverName, nodeName string) []resourcev1.ResourceSlice {
	t.Helper()
	list, err := c.ResourceV1().ResourceSlices().List(context.Background(), metav1.ListOptions{
		FieldSelector: "spec.nodeName=" + nodeName + ",spec.driver=" + driverName})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// devicesManager offers a fixed device list and prepares nothing: the
// publishing path without a policy.
type devicesManager struct {
	devices chan *abi.DevicesResponse
	current *abi.DevicesResponse
}

func (d *devicesManager) Devices(context.Context) (*abi.DevicesResponse, error) {
	select {
	case r := <-d.devices:
		d.current = r
	default:
	}
	return d.current, nil
}

func (d *devicesManager) PrepareClaim(context.Context, *abi.Claim, func(*abi.AllocateResponse) error) (*abi.AllocateResponse, error) {
	return nil, os.ErrInvalid
}

func (d *devicesManager) UnprepareClaim(context.Context, string, func() error) error { return nil }
func (d *devicesManager) Shutdown(error)                                             {}

// testLogger logs to the test's log.
func testLogger(t testing.TB) logr.Logger {
	return testr.NewWithInterface(t, testr.Options{Verbosity: 0})
}
