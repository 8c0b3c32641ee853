//go:build integration

package claimstatus_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/claimstatus"
	"github.com/nriwasm/nriwasm/integration/kubeapi"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

const (
	driver      = "topology-aware.nri.io"
	otherDriver = "other.example.com"
)

// failure is one failed apply the writer reported.
type failure struct {
	claim claimstatus.ClaimRef
	err   error
	retry bool
}

func (f failure) String() string {
	return fmt.Sprintf("%s (retry %v): %v", f.claim, f.retry, f.err)
}

// writer is a claimstatus.Writer running as the driver, with its failures.
type writer struct {
	*claimstatus.Writer
	mu       sync.Mutex
	failures []failure
}

func (w *writer) failed() []failure {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]failure(nil), w.failures...)
}

// startWriter runs a Writer for driver through c until the test ends.
func startWriter(t testing.TB, c kubernetes.Interface, opts ...claimstatus.Option) *writer {
	w := &writer{}
	opts = append([]claimstatus.Option{
		claimstatus.WithBackoff(50*time.Millisecond, time.Second),
		claimstatus.WithFailureFunc(func(claim claimstatus.ClaimRef, err error, retry bool) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.failures = append(w.failures, failure{claim, err, retry})
		}),
	}, opts...)
	cw, err := claimstatus.New(c, driver, opts...)
	if err != nil {
		t.Fatal(err)
	}
	w.Writer = cw
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return w
}

// wait waits until everything queued is written or dropped.
func (w *writer) wait(t testing.TB) {
	t.Helper()
	testkit.Eventually(t, "the claim status writer to finish", func() bool { return w.Pending() == 0 })
}

// env is a node with the driver on it and a namespace for claims.
type env struct {
	s      *kubeapi.Server
	node   string
	ns     string
	driver kubernetes.Interface // the driver's service account on node
}

func newEnv(t testing.TB) *env {
	s := kubeapi.Shared(t)
	e := &env{s: s, node: s.UniqueName("node"), ns: s.Namespace(t)}
	s.CreateNode(t, e.node)
	e.driver = s.DriverClient(t, e.node, driver)
	return e
}

// claim creates a claim allocated on node with our driver's devices
// (pool = node) and returns its reference.
func (e *env) claim(t testing.TB, name, node string, devices ...string) claimstatus.ClaimRef {
	var results []resourcev1.DeviceRequestAllocationResult
	for _, d := range devices {
		results = append(results, kubeapi.Result("req", driver, node, d))
	}
	c := e.s.CreateAllocatedClaim(t, e.ns, name, node, results...)
	return claimstatus.ClaimRef{Namespace: c.Namespace, Name: c.Name, UID: c.UID}
}

// get reads a claim as the admin.
func (e *env) get(t testing.TB, ref claimstatus.ClaimRef) *resourcev1.ResourceClaim {
	t.Helper()
	c, err := e.s.Client().ResourceV1().ResourceClaims(ref.Namespace).Get(context.Background(), ref.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get claim %s: %v", ref, err)
	}
	return c
}

// entries returns the claim's status.devices entries of driver d, by device.
func entries(c *resourcev1.ResourceClaim, d string) map[string]resourcev1.AllocatedDeviceStatus {
	m := map[string]resourcev1.AllocatedDeviceStatus{}
	for _, s := range c.Status.Devices {
		if s.Driver == d {
			m[s.Device] = s
		}
	}
	return m
}

func ready(status string) *abi.DeviceStatus {
	return &abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Ready", Status: status, Reason: "Prepared"}}}
}

// full is a device status at every limit of the API: 8 conditions, data of
// exactly 10 KiB, 16 IPv4 and IPv6 addresses (some not yet canonical), a
// 256-byte interface name and a 128-byte hardware address.
func full() *abi.DeviceStatus {
	s := &abi.DeviceStatus{
		// Compact but unsorted: 10 KiB once canonical.
		Data: []byte(`{"cni":{"z":1,"a":[true,null]},"pad":"` + strings.Repeat("x", 10<<10-40) + `"}`),
		NetworkData: &abi.NetworkDeviceData{
			InterfaceName:   "net1" + strings.Repeat("x", 252),
			HardwareAddress: strings.Repeat("02:00:00:00:00:01:", 7) + "02",
		},
	}
	for i := range 8 {
		s.Conditions = append(s.Conditions, &abi.Condition{
			Type: fmt.Sprintf("example.com/Cond%d", i), Status: []string{"True", "False", "Unknown"}[i%3],
			Reason: "Reason_" + fmt.Sprint(i), Message: strings.Repeat("m", 100),
		})
	}
	for i := range 8 {
		s.NetworkData.Ips = append(s.NetworkData.Ips, fmt.Sprintf("10.%d.0.1/16", i), fmt.Sprintf("FD00:%d:0:0::1/64", i))
	}
	return s
}
