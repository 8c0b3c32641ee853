//go:build integration

package kubeapi_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nriwasm/nriwasm/integration/kubeapi"
)

const driver = "harness.nri.io"

func TestMain(m *testing.M) { os.Exit(kubeapi.Main(m)) }

func slice(name, node string) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   driver,
			Pool:     resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
			Devices:  []resourcev1.Device{{Name: "cpu-0"}},
		},
	}
}

// TestDriverHoldsOnlyItsRBAC: the driver's client reads its node and claims
// but cannot list nodes or read pods and secrets.
func TestDriverHoldsOnlyItsRBAC(t *testing.T) {
	s := kubeapi.Shared(t)
	ctx := context.Background()
	node := s.UniqueName("rbac-node")
	s.CreateNode(t, node)
	ns := s.Namespace(t)
	claim := s.CreateAllocatedClaim(t, ns, "claim", node, kubeapi.Result("req", driver, node, "cpu-0"))
	c := s.DriverClient(t, node, driver)

	if _, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil {
		t.Errorf("get own node: %v", err)
	}
	if _, err := c.ResourceV1().ResourceClaims(ns).Get(ctx, claim.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("get claim: %v", err)
	}
	for what, call := range map[string]func() error{
		"list nodes":   func() error { _, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); return err },
		"list claims":  func() error { _, err := c.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{}); return err },
		"list pods":    func() error { _, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); return err },
		"get secret":   func() error { _, err := c.CoreV1().Secrets(ns).Get(ctx, "x", metav1.GetOptions{}); return err },
		"delete claim": func() error { return c.ResourceV1().ResourceClaims(ns).Delete(ctx, claim.Name, metav1.DeleteOptions{}) },
		"update claim": func() error {
			_, err := c.ResourceV1().ResourceClaims(ns).Update(ctx, claim, metav1.UpdateOptions{})
			return err
		},
		"create device": func() error {
			_, err := c.ResourceV1().DeviceClasses().Create(ctx, &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			return err
		},
	} {
		if err := call(); !apierrors.IsForbidden(err) {
			t.Errorf("%s as the driver: %v, want Forbidden", what, err)
		}
	}
}

// TestSlicePolicyLimitsTheDriverToItsNode: the driver writes its own node's
// ResourceSlices and none of another node's, nor node-less ones, nor its
// node's slices of another driver.
func TestSlicePolicyLimitsTheDriverToItsNode(t *testing.T) {
	s := kubeapi.Shared(t)
	ctx := context.Background()
	own, other := s.UniqueName("own-node"), s.UniqueName("other-node")
	s.CreateNode(t, own)
	s.CreateNode(t, other)
	c := s.DriverClient(t, own, driver)
	admin := s.Client()
	slices := c.ResourceV1().ResourceSlices()

	mine, err := slices.Create(ctx, slice(own+"-slice", own), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a slice of its own node: %v", err)
	}
	mine.Spec.Pool.Generation++
	if mine, err = slices.Update(ctx, mine, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating a slice of its own node: %v", err)
	}
	theirs, err := admin.ResourceV1().ResourceSlices().Create(ctx, slice(other+"-slice", other), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("admin creating a slice of %s: %v", other, err)
	}

	refused := func(what string, err error, want string) {
		t.Helper()
		if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want refused with %q", what, err, want)
		}
	}
	_, err = slices.Create(ctx, slice(other+"-mine", other), metav1.CreateOptions{})
	refused("creating a slice of another node", err, "may not write a ResourceSlice of node "+other)

	theirs.Spec.Pool.Generation++
	_, err = slices.Update(ctx, theirs, metav1.UpdateOptions{})
	refused("updating another node's slice", err, "may not write a ResourceSlice of node "+other)

	err = slices.Delete(ctx, theirs.Name, metav1.DeleteOptions{})
	refused("deleting another node's slice", err, "may not change a ResourceSlice of node "+other)

	global := slice("global", own)
	global.Spec.NodeName = nil
	global.Spec.AllNodes = ptr.To(true)
	_, err = slices.Create(ctx, global, metav1.CreateOptions{})
	refused("creating a slice of no node", err, "may not write a ResourceSlice of no node")

	const otherDriver = "other.example.com"
	foreign := slice(own+"-foreign", own)
	foreign.Spec.Driver = otherDriver
	_, err = slices.Create(ctx, foreign, metav1.CreateOptions{})
	refused("creating its node's slice of another driver", err, "may not write a ResourceSlice of driver "+otherDriver)
	if foreign, err = admin.ResourceV1().ResourceSlices().Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatalf("admin creating a slice of %s: %v", otherDriver, err)
	}
	foreign.Spec.Pool.Generation++
	_, err = slices.Update(ctx, foreign, metav1.UpdateOptions{})
	refused("updating its node's slice of another driver", err, "may not write a ResourceSlice of driver "+otherDriver)
	err = slices.Delete(ctx, foreign.Name, metav1.DeleteOptions{})
	refused("deleting its node's slice of another driver", err, "may not change a ResourceSlice of driver "+otherDriver)

	if err := slices.Delete(ctx, mine.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting its own slice: %v", err)
	}
	if err := admin.ResourceV1().ResourceSlices().Delete(ctx, foreign.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("admin deleting %s: %v", foreign.Name, err)
	}
	// The admin is not matched by the policy.
	if err := admin.ResourceV1().ResourceSlices().Delete(ctx, theirs.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("admin deleting %s: %v", theirs.Name, err)
	}
}

// TestRestartKeepsTheCluster: objects and driver tokens survive an API
// server restart on the same etcd.
func TestRestartKeepsTheCluster(t *testing.T) {
	s := kubeapi.Shared(t)
	ctx := context.Background()
	node := s.UniqueName("restart-node")
	s.CreateNode(t, node)
	c := s.DriverClient(t, node, driver)
	s.StopAPIServer(t)
	if _, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil {
		t.Fatal("the API server answered while stopped")
	}
	s.StartAPIServer(t)
	for _, cl := range []kubernetes.Interface{s.Client(), c} {
		if _, err := cl.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil {
			t.Errorf("get node after the restart: %v", err)
		}
	}
}

// TestStartTearsDown: a server of its own (Start) leaves no process and no
// directory behind once its test ends.
func TestStartTearsDown(t *testing.T) {
	var dir string
	var pids []int
	t.Run("server", func(t *testing.T) {
		s := kubeapi.Start(t)
		dir = s.Dir
		if _, err := s.Client().CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
			t.Fatalf("the API server does not answer: %v", err)
		}
		pids = processesUnder(t, dir)
		if len(pids) != 2 {
			t.Fatalf("processes running from %s: %v, want etcd and kube-apiserver", dir, pids)
		}
	})
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after the test: %v, want it removed", dir, err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d after the test: %v, want it gone", pid, err)
		}
	}
}

// processesUnder returns the processes whose command line mentions dir.
func processesUnder(t *testing.T, dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), dir+"/") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// BenchmarkStart measures a server of its own: etcd and kube-apiserver
// launched until /readyz answers, then stopped and removed.
func BenchmarkStart(b *testing.B) {
	var ready time.Duration
	for b.Loop() {
		s, err := kubeapi.New()
		if err != nil {
			if s != nil {
				s.Close()
			}
			b.Fatal(err)
		}
		ready += s.ReadyAfter
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(ready.Seconds()/float64(b.N), "s-to-ready/op")
}
