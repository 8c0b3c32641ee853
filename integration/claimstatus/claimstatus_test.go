//go:build integration

// Package claimstatus_test runs host/claimstatus against a real
// kube-apiserver, as the driver's service account holding only the
// driver's RBAC.
package claimstatus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	resourceapply "k8s.io/client-go/applyconfigurations/resource/v1"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/claimstatus"
	"github.com/nriwasm/nriwasm/integration/kubeapi"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(kubeapi.Main(m)) }

// TestStatusWrittenAsTheDriver: everything the writer sends at the API's
// limits is accepted by the API server and visible on the claim, written
// by the driver's service account under the driver's field manager.
func TestStatusWrittenAsTheDriver(t *testing.T) {
	e := newEnv(t)
	w := startWriter(t, e.driver)
	ref := e.claim(t, "full", e.node, "nic-0", "cpu-0")
	want := full()
	if err := w.Set(ref, []claimstatus.Device{
		{Pool: e.node, Device: "nic-0", Status: want},
		{Pool: e.node, Device: "cpu-0", Status: ready("True")},
	}); err != nil {
		t.Fatal(err)
	}
	w.wait(t)
	if f := w.failed(); len(f) > 0 {
		t.Fatalf("the API server refused the status: %v", f[0].err)
	}
	claim := e.get(t, ref)
	got := entries(claim, driver)
	if len(got) != 2 {
		t.Fatalf("%d entries of %s on the claim, want 2: %+v", len(got), driver, claim.Status.Devices)
	}
	nic := got["nic-0"]
	if nic.Pool != e.node || len(nic.Conditions) != 8 {
		t.Errorf("nic-0: pool %s, %d conditions; want %s, 8", nic.Pool, len(nic.Conditions), e.node)
	}
	for i, c := range nic.Conditions {
		w := want.Conditions[i]
		if c.Type != w.Type || string(c.Status) != w.Status || c.Reason != w.Reason || c.Message != w.Message || c.LastTransitionTime.IsZero() {
			t.Errorf("condition %d is %+v, want %+v with a time", i, c, w)
		}
	}
	if nic.Data == nil || len(nic.Data.Raw) != 10<<10 {
		t.Errorf("data of %d bytes, want 10 KiB", len(nic.Data.Raw))
	} else {
		var obj struct {
			CNI struct {
				Z int   `json:"z"`
				A []any `json:"a"`
			} `json:"cni"`
		}
		if err := json.Unmarshal(nic.Data.Raw, &obj); err != nil || obj.CNI.Z != 1 || len(obj.CNI.A) != 2 {
			t.Errorf("data %.80s…: %v", nic.Data.Raw, err)
		}
	}
	nd := nic.NetworkData
	if nd == nil || nd.InterfaceName != want.NetworkData.InterfaceName || nd.HardwareAddress != want.NetworkData.HardwareAddress || len(nd.IPs) != 16 {
		t.Fatalf("network data %+v", nd)
	}
	if nd.IPs[0] != "10.0.0.1/16" || nd.IPs[1] != "fd00::1/64" || nd.IPs[3] != "fd00:1::1/64" {
		t.Errorf("IPs %v, want canonical 10.0.0.1/16, fd00::1/64, …, fd00:1::1/64", nd.IPs[:4])
	}
	if c := got["cpu-0"]; len(c.Conditions) != 1 || c.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("cpu-0: %+v", c)
	}
	var managers []string
	for _, m := range claim.ManagedFields {
		if m.Subresource == "status" && m.Operation == metav1.ManagedFieldsOperationApply {
			managers = append(managers, m.Manager)
		}
	}
	if len(managers) != 1 || managers[0] != driver {
		t.Errorf("status applied by field managers %v, want [%s]", managers, driver)
	}
}

// TestRepeatedSetKeepsTransitionTimes: a second Set with the same condition
// statuses leaves lastTransitionTime alone on the claim.
func TestRepeatedSetKeepsTransitionTimes(t *testing.T) {
	e := newEnv(t)
	w := startWriter(t, e.driver)
	ref := e.claim(t, "times", e.node, "cpu-0")
	set := func(status, message string) metav1.Time {
		t.Helper()
		s := ready(status)
		s.Conditions[0].Message = message
		if err := w.Set(ref, []claimstatus.Device{{Pool: e.node, Device: "cpu-0", Status: s}}); err != nil {
			t.Fatal(err)
		}
		w.wait(t)
		c := entries(e.get(t, ref), driver)["cpu-0"]
		if len(c.Conditions) != 1 || c.Conditions[0].Message != message {
			t.Fatalf("conditions %+v, want message %q", c.Conditions, message)
		}
		return c.Conditions[0].LastTransitionTime
	}
	t1 := set("False", "waiting")
	time.Sleep(1100 * time.Millisecond) // times have a resolution of a second
	if t2 := set("False", "still waiting"); !t2.Equal(&t1) {
		t.Errorf("unchanged status: time moved from %v to %v", t1, t2)
	}
	if t3 := set("True", "ready"); !t3.After(t1.Time) {
		t.Errorf("changed status: time %v, want after %v", t3, t1)
	}
}

// TestTheServerWantsCanonicalIPs: the API server itself refuses an IP that
// is not canonical, which is why the writer canonicalizes.
func TestTheServerWantsCanonicalIPs(t *testing.T) {
	e := newEnv(t)
	ref := e.claim(t, "canonical", e.node, "nic-0")
	apply := func(ip string) error {
		c := resourceapply.ResourceClaim(ref.Name, ref.Namespace).WithStatus(resourceapply.ResourceClaimStatus().WithDevices(
			resourceapply.AllocatedDeviceStatus().WithDriver(driver).WithPool(e.node).WithDevice("nic-0").
				WithNetworkData(resourceapply.NetworkDeviceData().WithIPs(ip))))
		_, err := e.driver.ResourceV1().ResourceClaims(ref.Namespace).ApplyStatus(context.Background(), c, metav1.ApplyOptions{FieldManager: driver, Force: true})
		return err
	}
	raw := "FD00:0:0::1/64"
	if err := apply(raw); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "canonical") {
		t.Errorf("applying %s: %v, want Invalid (not canonical)", raw, err)
	}
	canonical, err := claimstatus.CanonicalCIDR(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := apply(canonical); err != nil {
		t.Errorf("applying %s (canonical of %s): %v", canonical, raw, err)
	}
}

// TestClaimOnAnotherNodeRefused: the driver on one node may not write the
// status of a claim allocated on another; the writer reports that once and
// does not retry it.
func TestClaimOnAnotherNodeRefused(t *testing.T) {
	e := newEnv(t)
	other := e.s.UniqueName("other-node")
	e.s.CreateNode(t, other)
	w := startWriter(t, e.driver)
	ref := e.claim(t, "elsewhere", other, "cpu-0")
	if err := w.Set(ref, []claimstatus.Device{{Pool: other, Device: "cpu-0", Status: ready("True")}}); err != nil {
		t.Fatal(err)
	}
	w.wait(t)
	time.Sleep(500 * time.Millisecond) // ten times the first retry delay
	// Right after an API server restart RBAC may answer 403 a few times
	// (retried); then the refusal is final, reported once.
	f := w.failed()
	if len(f) == 0 {
		t.Fatal("no failure reported")
	}
	for _, x := range f[:len(f)-1] {
		if !x.retry || !apierrors.IsForbidden(x.err) {
			t.Errorf("failure before the final one: %v, want a retried 403", x)
		}
	}
	last := f[len(f)-1]
	if last.claim != ref || last.retry || !apierrors.IsInvalid(last.err) || !strings.Contains(last.err.Error(), "resourceclaims/driver") {
		t.Errorf("final failure %v, want the claim refused (Invalid) for lack of resourceclaims/driver, not retried", last)
	}
	if got := entries(e.get(t, ref), driver); len(got) != 0 {
		t.Errorf("entries written anyway: %+v", got)
	}
}

// TestOtherDriversEntriesKept: Set and Clear touch only this driver's
// entries of a claim that also has another driver's devices.
func TestOtherDriversEntriesKept(t *testing.T) {
	e := newEnv(t)
	w := startWriter(t, e.driver)
	c := e.s.CreateAllocatedClaim(t, e.ns, "shared", e.node,
		kubeapi.Result("req", driver, e.node, "cpu-0"),
		kubeapi.Result("req", otherDriver, e.node, "gpu-0"))
	ref := claimstatus.ClaimRef{Namespace: c.Namespace, Name: c.Name, UID: c.UID}
	// The other driver's entry, applied under its own field manager.
	theirs := resourceapply.ResourceClaim(c.Name, c.Namespace).WithStatus(resourceapply.ResourceClaimStatus().WithDevices(
		resourceapply.AllocatedDeviceStatus().WithDriver(otherDriver).WithPool(e.node).WithDevice("gpu-0").WithData(runtime.RawExtension{Raw: []byte(`{"vendor":"x"}`)})))
	if _, err := e.s.Client().ResourceV1().ResourceClaims(c.Namespace).ApplyStatus(context.Background(), theirs, metav1.ApplyOptions{FieldManager: otherDriver, Force: true}); err != nil {
		t.Fatalf("the other driver's apply: %v", err)
	}
	check := func(when string, ours int) {
		t.Helper()
		claim := e.get(t, ref)
		if got := entries(claim, otherDriver); len(got) != 1 || string(got["gpu-0"].Data.Raw) != `{"vendor":"x"}` {
			t.Errorf("%s: the other driver's entries %+v, want its gpu-0 unchanged", when, got)
		}
		if got := entries(claim, driver); len(got) != ours {
			t.Errorf("%s: %d entries of ours, want %d", when, len(got), ours)
		}
	}
	if err := w.Set(ref, []claimstatus.Device{{Pool: e.node, Device: "cpu-0", Status: ready("True")}}); err != nil {
		t.Fatal(err)
	}
	w.wait(t)
	check("after Set", 1)
	w.Clear(ref)
	w.wait(t)
	check("after Clear", 0)
	if f := w.failed(); len(f) > 0 {
		t.Errorf("failures: %+v", f)
	}
}

// TestSetDropsEntriesNoLongerReported: a Set without a device removes that
// device's entry (an apply that omits an entry deletes it).
func TestSetDropsEntriesNoLongerReported(t *testing.T) {
	e := newEnv(t)
	w := startWriter(t, e.driver)
	ref := e.claim(t, "shrink", e.node, "cpu-0", "cpu-1")
	both := []claimstatus.Device{{Pool: e.node, Device: "cpu-0", Status: ready("True")}, {Pool: e.node, Device: "cpu-1", Status: ready("True")}}
	if err := w.Set(ref, both); err != nil {
		t.Fatal(err)
	}
	w.wait(t)
	if n := len(entries(e.get(t, ref), driver)); n != 2 {
		t.Fatalf("%d entries, want 2", n)
	}
	if err := w.Set(ref, both[1:]); err != nil {
		t.Fatal(err)
	}
	w.wait(t)
	got := entries(e.get(t, ref), driver)
	if _, ok := got["cpu-1"]; len(got) != 1 || !ok {
		t.Errorf("entries %v, want only cpu-1", got)
	}
}

// TestRecreatedClaimNotWritten: a Set for a claim that was deleted and
// created again under the same name is not applied to the new claim (the
// UID is a precondition), and is not retried.
func TestRecreatedClaimNotWritten(t *testing.T) {
	e := newEnv(t)
	w := startWriter(t, e.driver)
	old := e.claim(t, "again", e.node, "cpu-0")
	if err := e.s.Client().ResourceV1().ResourceClaims(e.ns).Delete(context.Background(), old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the claim to be gone", func() bool {
		_, err := e.s.Client().ResourceV1().ResourceClaims(e.ns).Get(context.Background(), old.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	ref := e.claim(t, "again", e.node, "cpu-0")
	if ref.UID == old.UID {
		t.Fatal("the recreated claim has the old UID")
	}
	if err := w.Set(old, []claimstatus.Device{{Pool: e.node, Device: "cpu-0", Status: ready("True")}}); err != nil {
		t.Fatal(err)
	}
	w.wait(t)
	if got := entries(e.get(t, ref), driver); len(got) != 0 {
		t.Errorf("the new claim got the old claim's status: %+v", got)
	}
	if f := w.failed(); len(f) != 0 {
		t.Errorf("failures reported for a claim that is gone: %+v", f)
	}
	// A Clear of a claim that no longer exists at all is done too.
	w.Clear(claimstatus.ClaimRef{Namespace: e.ns, Name: "never-was", UID: "0b7c1a4e-2f3d-4c5b-8a9e-1f2e3d4c5b6a"})
	w.wait(t)
	if f := w.failed(); len(f) != 0 {
		t.Errorf("failures reported for a missing claim: %+v", f)
	}
}

// TestWritesWaitForTheAPIServer: while the API server is down, Sets and a
// Clear queue (the latest per claim wins) and land once it is back.
func TestWritesWaitForTheAPIServer(t *testing.T) {
	e := newEnv(t)
	w := startWriter(t, e.driver, claimstatus.WithBackoff(100*time.Millisecond, 500*time.Millisecond))
	a := e.claim(t, "during-a", e.node, "cpu-0")
	b := e.claim(t, "during-b", e.node, "cpu-1")
	if err := w.Set(b, []claimstatus.Device{{Pool: e.node, Device: "cpu-1", Status: ready("True")}}); err != nil {
		t.Fatal(err)
	}
	w.wait(t)

	e.s.StopAPIServer(t)
	restarted := false
	defer func() {
		if !restarted {
			e.s.StartAPIServer(t) // leave the shared server running for the other tests
		}
	}()
	if err := w.Set(a, []claimstatus.Device{{Pool: e.node, Device: "cpu-0", Status: ready("Unknown")}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Set(a, []claimstatus.Device{{Pool: e.node, Device: "cpu-0", Status: ready("True")}}); err != nil {
		t.Fatal(err)
	}
	w.Clear(b)
	testkit.Eventually(t, "failed attempts while the API server is down", func() bool { return len(w.failed()) >= 4 })
	if n := w.Pending(); n != 2 {
		t.Errorf("Pending() = %d while the API server is down, want 2", n)
	}
	for _, f := range w.failed() {
		if !f.retry {
			t.Errorf("failure not retried: %+v", f)
		}
	}
	e.s.StartAPIServer(t)
	restarted = true
	w.wait(t)
	for _, f := range w.failed() {
		if !f.retry {
			t.Errorf("failure not retried: %v", f)
		}
	}
	if got := entries(e.get(t, a), driver)["cpu-0"]; len(got.Conditions) != 1 || got.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("claim a after the restart: %+v, want the latest Set (True)", got)
	}
	if got := entries(e.get(t, b), driver); len(got) != 0 {
		t.Errorf("claim b after the restart: %+v, want cleared", got)
	}
}

// BenchmarkApplyStatus measures status applies per second through the
// writer as the driver against the real API server: rounds of one Set per
// claim over 64 claims, each with two devices (a Ready condition each, one
// with network data), statuses alternating so that every apply changes the
// claim.
func BenchmarkApplyStatus(b *testing.B) {
	for _, workers := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			e := newEnv(b)
			w := startWriter(b, e.driver, claimstatus.WithWorkers(workers))
			const claims = 64
			var refs []claimstatus.ClaimRef
			for range claims {
				refs = append(refs, e.claim(b, e.s.UniqueName("bench"), e.node, "cpu-0", "nic-0"))
			}
			statuses := []string{"True", "False"}
			b.ResetTimer()
			start := time.Now()
			for done, round := 0, 0; done < b.N; round++ {
				for _, ref := range refs[:min(claims, b.N-done)] {
					nic := ready(statuses[round%2])
					nic.NetworkData = &abi.NetworkDeviceData{InterfaceName: "net1", Ips: []string{"10.0.0.5/24", "fd00::5/64"}}
					if err := w.Set(ref, []claimstatus.Device{
						{Pool: e.node, Device: "cpu-0", Status: ready(statuses[round%2])},
						{Pool: e.node, Device: "nic-0", Status: nic},
					}); err != nil {
						b.Fatal(err)
					}
					done++
				}
				w.wait(b)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "applies/s")
			if f := w.failed(); len(f) > 0 {
				b.Fatalf("%d failed applies, first: %v", len(f), f[0].err)
			}
		})
	}
}
