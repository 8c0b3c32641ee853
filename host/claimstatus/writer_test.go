package claimstatus_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/claimstatus"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

const driver = "topology-aware.nri.io"

var ref = claimstatus.ClaimRef{Namespace: "ns", Name: "claim", UID: "uid-1"}

var claimsResource = schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaims"}

// apply is one ApplyStatus the fake API server received.
type apply struct {
	Namespace, Name string
	Opts            metav1.PatchOptions
	Claim           resourcev1.ResourceClaim // the apply body, decoded
}

// api is a fake API server that records every apply of a claim's status and
// answers with what respond returns (nil: success).
type api struct {
	mu      sync.Mutex
	applies []apply
	respond func(n int, a apply) error // n counts from 0
}

func newAPI(t *testing.T, respond func(n int, a apply) error) (*fake.Clientset, *api) {
	a := &api{respond: respond}
	c := fake.NewClientset()
	c.PrependReactor("patch", "resourceclaims", func(action k8stesting.Action) (bool, runtime.Object, error) {
		p := action.(k8stesting.PatchActionImpl)
		if p.GetSubresource() != "status" || p.GetPatchType() != types.ApplyPatchType {
			t.Errorf("unexpected patch of resourceclaims/%s, type %s", p.GetSubresource(), p.GetPatchType())
		}
		got := apply{Namespace: p.GetNamespace(), Name: p.GetName(), Opts: p.GetPatchOptions()}
		if err := json.Unmarshal(p.GetPatch(), &got.Claim); err != nil {
			t.Errorf("apply body: %v", err)
		}
		a.mu.Lock()
		n := len(a.applies)
		a.applies = append(a.applies, got)
		a.mu.Unlock()
		var err error
		if a.respond != nil {
			err = a.respond(n, got)
		}
		if err != nil {
			return true, nil, err
		}
		return true, got.Claim.DeepCopy(), nil
	})
	return c, a
}

func (a *api) all() []apply {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]apply(nil), a.applies...)
}

// run starts w.Run and returns a stop that ends it and waits until Run has
// returned (every worker done with its claim, callbacks included); the test's
// end stops it too.
func run(t *testing.T, w *claimstatus.Writer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(stop)
	return stop
}

// newWriter is claimstatus.New for tests: an option's error fails t.
func newWriter(t testing.TB, client kubernetes.Interface, driver string, opts ...claimstatus.Option) *claimstatus.Writer {
	t.Helper()
	w, err := claimstatus.New(client, driver, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func ready(status string) *abi.DeviceStatus {
	return &abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Ready", Status: status, Reason: "Prepared", Message: "cpus 2-3"}}}
}

func TestApplyBody(t *testing.T) {
	c, a := newAPI(t, nil)
	w := newWriter(t, c, driver)
	run(t, w)
	err := w.Set(ref, []claimstatus.Device{
		{Pool: "node-1", Device: "cpu-0", Status: &abi.DeviceStatus{
			Conditions:  ready("True").Conditions,
			Data:        []byte(`{ "z": 1.50, "a": {"b": [1, 2]} }`),
			NetworkData: &abi.NetworkDeviceData{InterfaceName: "eth1", HardwareAddress: "02:00:00:00:00:01", Ips: []string{"10.0.0.1/24", "FD00:0::1/64"}},
		}},
		{Pool: "node-1", Device: "cpu-1", ShareID: "0b7c1a4e-2f3d-4c5b-8a9e-1f2e3d4c5b6a", Status: &abi.DeviceStatus{}},
		{Pool: "node-1", Device: "cpu-2"}, // no status: no entry
	})
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the apply", func() bool { return w.Pending() == 0 })
	got := a.all()
	if len(got) != 1 {
		t.Fatalf("%d applies, want 1 for the claim's devices", len(got))
	}
	ap := got[0]
	if ap.Namespace != "ns" || ap.Name != "claim" || ap.Claim.UID != "uid-1" {
		t.Errorf("applied to %s/%s uid %q, want ns/claim uid uid-1", ap.Namespace, ap.Name, ap.Claim.UID)
	}
	if ap.Opts.FieldManager != driver || ap.Opts.Force == nil || !*ap.Opts.Force {
		t.Errorf("apply options %+v, want field manager %s and force", ap.Opts, driver)
	}
	devs := ap.Claim.Status.Devices
	if len(devs) != 2 {
		t.Fatalf("%d entries, want 2: %+v", len(devs), devs)
	}
	d := devs[0]
	if d.Driver != driver || d.Pool != "node-1" || d.Device != "cpu-0" || d.ShareID != nil {
		t.Errorf("entry 0 is %s/%s/%s share %v", d.Driver, d.Pool, d.Device, d.ShareID)
	}
	if len(d.Conditions) != 1 || d.Conditions[0].Type != "Ready" || d.Conditions[0].Status != "True" ||
		d.Conditions[0].Reason != "Prepared" || d.Conditions[0].Message != "cpus 2-3" || d.Conditions[0].LastTransitionTime.IsZero() {
		t.Errorf("conditions %+v", d.Conditions)
	}
	if d.Data == nil || string(d.Data.Raw) != `{"a":{"b":[1,2]},"z":1.50}` {
		t.Errorf("data %s, want the canonical form", d.Data.Raw)
	}
	nd := d.NetworkData
	if nd == nil || nd.InterfaceName != "eth1" || nd.HardwareAddress != "02:00:00:00:00:01" ||
		len(nd.IPs) != 2 || nd.IPs[0] != "10.0.0.1/24" || nd.IPs[1] != "fd00::1/64" {
		t.Errorf("network data %+v", nd)
	}
	if s := devs[1]; s.Device != "cpu-1" || s.ShareID == nil || *s.ShareID != "0b7c1a4e-2f3d-4c5b-8a9e-1f2e3d4c5b6a" {
		t.Errorf("entry 1 is %s share %v", s.Device, s.ShareID)
	}
}

func TestClearAppliesNoDevices(t *testing.T) {
	c, a := newAPI(t, nil)
	w := newWriter(t, c, driver)
	run(t, w)
	w.Clear(ref)
	testkit.Eventually(t, "the apply", func() bool { return w.Pending() == 0 })
	got := a.all()
	if len(got) != 1 {
		t.Fatalf("%d applies, want 1", len(got))
	}
	if got[0].Claim.UID != ref.UID || got[0].Opts.FieldManager != driver || got[0].Claim.Status.Devices != nil {
		t.Errorf("Clear applied uid %q manager %q devices %+v; want our uid and manager, no devices", got[0].Claim.UID, got[0].Opts.FieldManager, got[0].Claim.Status.Devices)
	}
}

func TestConditionKeepsItsTimeWhileStatusStays(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	c, a := newAPI(t, nil)
	w := newWriter(t, c, driver, claimstatus.WithClock(clk))
	run(t, w)
	dev := func(s *abi.DeviceStatus) []claimstatus.Device {
		return []claimstatus.Device{{Pool: "node-1", Device: "cpu-0", Status: s}}
	}
	step := func(s *abi.DeviceStatus) time.Time {
		t.Helper()
		n := len(a.all())
		clk.Step(time.Minute)
		if err := w.Set(ref, dev(s)); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, "the apply", func() bool { return len(a.all()) == n+1 && w.Pending() == 0 })
		return a.all()[n].Claim.Status.Devices[0].Conditions[0].LastTransitionTime.UTC()
	}
	t1 := step(ready("False"))
	if want := time.Date(2026, 1, 1, 10, 1, 0, 0, time.UTC); !t1.Equal(want) {
		t.Fatalf("first time %v, want the clock's %v", t1, want)
	}
	changedMessage := ready("False")
	changedMessage.Conditions[0].Message = "still waiting"
	if t2 := step(changedMessage); !t2.Equal(t1) {
		t.Errorf("status unchanged: time %v, want the old %v", t2, t1)
	}
	t3 := step(ready("True"))
	if want := time.Date(2026, 1, 1, 10, 3, 0, 0, time.UTC); !t3.Equal(want) {
		t.Errorf("status changed: time %v, want %v", t3, want)
	}
	w.Clear(ref)
	testkit.Eventually(t, "the Clear", func() bool { return w.Pending() == 0 })
	if t4 := step(ready("True")); !t4.After(t3) {
		t.Errorf("after Clear: time %v, want a new one after %v", t4, t3)
	}
}

func TestRetriesWhileTheAPIServerIsAway(t *testing.T) {
	const failures = 5
	c, a := newAPI(t, func(n int, _ apply) error {
		if n < failures {
			return errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
		}
		return nil
	})
	var mu sync.Mutex
	var retried []bool
	w := newWriter(t, c, driver, claimstatus.WithBackoff(time.Millisecond, 4*time.Millisecond),
		claimstatus.WithFailureFunc(func(_ claimstatus.ClaimRef, err error, retry bool) {
			mu.Lock()
			defer mu.Unlock()
			retried = append(retried, retry)
		}))
	if err := w.Set(ref, []claimstatus.Device{{Pool: "node-1", Device: "cpu-0", Status: ready("True")}}); err != nil {
		t.Fatal(err)
	}
	if n := w.Pending(); n != 1 {
		t.Fatalf("Pending() = %d before Run, want 1", n)
	}
	run(t, w)
	testkit.Eventually(t, "the write to land", func() bool { return w.Pending() == 0 })
	if n := len(a.all()); n != failures+1 {
		t.Errorf("%d applies, want %d failures and a success", n, failures+1)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(retried) != failures {
		t.Errorf("failure func called %d times, want %d", len(retried), failures)
	}
	for i, r := range retried {
		if !r {
			t.Errorf("failure %d not retried", i)
		}
	}
}

func TestLatestSetOrClearWins(t *testing.T) {
	release := make(chan struct{})
	first := make(chan struct{})
	c, a := newAPI(t, func(n int, _ apply) error {
		if n == 0 {
			close(first)
			<-release
			return apierrors.NewServiceUnavailable("etcd away")
		}
		return nil
	})
	w := newWriter(t, c, driver, claimstatus.WithBackoff(time.Millisecond, time.Millisecond))
	run(t, w)
	set := func(status string) {
		t.Helper()
		if err := w.Set(ref, []claimstatus.Device{{Pool: "node-1", Device: "cpu-0", Status: ready(status)}}); err != nil {
			t.Fatal(err)
		}
	}
	set("Unknown")
	<-first // the first apply is in flight and will fail
	set("False")
	w.Clear(ref)
	set("True")
	if n := w.Pending(); n != 1 {
		t.Errorf("Pending() = %d, want 1 claim", n)
	}
	close(release)
	testkit.Eventually(t, "the latest to land", func() bool { return w.Pending() == 0 })
	got := a.all()
	if len(got) != 2 {
		t.Fatalf("%d applies, want the failed first and the latest", len(got))
	}
	if c := got[1].Claim.Status.Devices[0].Conditions[0]; c.Status != "True" {
		t.Errorf("second apply wrote status %s, want the latest True", c.Status)
	}
}

func TestRefusedWritesAreReportedNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaim"}, "claim", nil)},
		{"bad request", apierrors.NewBadRequest("no")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := claimstatus.ClaimRef{Namespace: "ns", Name: "other", UID: "uid-2"}
			c, a := newAPI(t, func(_ int, ap apply) error {
				if ap.Name == ref.Name {
					return tc.err
				}
				return nil
			})
			var mu sync.Mutex
			var reports []error
			w := newWriter(t, c, driver, claimstatus.WithWorkers(1), claimstatus.WithBackoff(time.Millisecond, time.Millisecond),
				claimstatus.WithFailureFunc(func(claim claimstatus.ClaimRef, err error, retry bool) {
					mu.Lock()
					defer mu.Unlock()
					if claim != ref || retry {
						t.Errorf("failure of %v, retry %v; want %v not retried", claim, retry, ref)
					}
					reports = append(reports, err)
				}))
			stop := run(t, w)
			if err := w.Set(ref, []claimstatus.Device{{Pool: "node-1", Device: "cpu-0", Status: ready("True")}}); err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, "the refusal", func() bool { return w.Pending() == 0 })
			// Another claim written after it, then time for many retries.
			if err := w.Set(other, []claimstatus.Device{{Pool: "node-1", Device: "cpu-1", Status: ready("True")}}); err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, "the other claim", func() bool { return w.Pending() == 0 })
			stop() // nothing more can happen: every worker has returned
			if n := len(a.all()); n != 2 {
				t.Errorf("%d applies, want 2 (the refused claim once)", n)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reports) != 1 || !errors.Is(reports[0], tc.err) {
				t.Errorf("reports %v, want the API server's error once", reports)
			}
		})
	}
}

// TestForbiddenRetriedAFewTimes: 403 is retried (an API server that has just
// started refuses until its RBAC caches are filled), then dropped.
func TestForbiddenRetriedAFewTimes(t *testing.T) {
	forbidden := apierrors.NewForbidden(claimsResource, "claim", errors.New("RBAC: not yet"))
	t.Run("lasting", func(t *testing.T) {
		c, a := newAPI(t, func(int, apply) error { return forbidden })
		var mu sync.Mutex
		var retried []bool
		w := newWriter(t, c, driver, claimstatus.WithBackoff(time.Millisecond, time.Millisecond), claimstatus.WithForbiddenRetries(3),
			claimstatus.WithFailureFunc(func(_ claimstatus.ClaimRef, err error, retry bool) {
				mu.Lock()
				defer mu.Unlock()
				retried = append(retried, retry)
			}))
		stop := run(t, w)
		w.Clear(ref)
		testkit.Eventually(t, "the claim to be dropped", func() bool { return w.Pending() == 0 })
		stop() // nothing more can happen: every worker has returned
		mu.Lock()
		defer mu.Unlock()
		if n := len(a.all()); n != 4 || len(retried) != 4 || !retried[0] || !retried[2] || retried[3] {
			t.Errorf("%d applies, retries reported %v; want 4, [true true true false]", n, retried)
		}
	})
	t.Run("passing", func(t *testing.T) {
		c, a := newAPI(t, func(n int, _ apply) error {
			if n < 2 {
				return forbidden
			}
			return nil
		})
		w := newWriter(t, c, driver, claimstatus.WithBackoff(time.Millisecond, time.Millisecond))
		run(t, w)
		if err := w.Set(ref, []claimstatus.Device{{Pool: "node-1", Device: "cpu-0", Status: ready("True")}}); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, "the write", func() bool { return w.Pending() == 0 })
		if n := len(a.all()); n != 3 {
			t.Errorf("%d applies, want 2 refused and 1 written", n)
		}
	})
}

func TestGoneClaimIsDone(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"not found", apierrors.NewNotFound(claimsResource, "claim")},
		{"recreated (uid precondition)", apierrors.NewInvalid(schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaim"}, "claim",
			field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "uid-1", "field is immutable")})},
		{"uid given, claim missing", apierrors.NewConflict(claimsResource, "claim", errors.New("uid mismatch: the provided object specified uid uid-1, and no existing object was found"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, a := newAPI(t, func(int, apply) error { return tc.err })
			var failures atomic.Int32
			w := newWriter(t, c, driver, claimstatus.WithBackoff(time.Millisecond, time.Millisecond),
				claimstatus.WithFailureFunc(func(claimstatus.ClaimRef, error, bool) { failures.Add(1) }))
			stop := run(t, w)
			w.Clear(ref)
			testkit.Eventually(t, "the claim to be done", func() bool { return w.Pending() == 0 })
			stop() // nothing more can happen: every worker has returned
			if n := len(a.all()); n != 1 || failures.Load() != 0 {
				t.Errorf("%d applies and %d failures reported, want 1 and 0", n, failures.Load())
			}
		})
	}
}

func TestRunOnce(t *testing.T) {
	w := newWriter(t, fake.NewClientset(), driver)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatalf("first Run: %v", err)
	}
	if err := w.Run(ctx); err == nil {
		t.Fatal("second Run accepted")
	}
}

// TestHammer sets and clears many claims from many goroutines while the API
// server fails now and then; in the end every claim's latest request landed.
func TestHammer(t *testing.T) {
	var mu sync.Mutex
	last := map[string]apply{}
	c, _ := newAPI(t, func(n int, ap apply) error {
		if n%7 == 3 {
			return apierrors.NewTooManyRequests("busy", 0)
		}
		mu.Lock()
		defer mu.Unlock()
		last[ap.Name] = ap
		return nil
	})
	w := newWriter(t, c, driver, claimstatus.WithWorkers(4), claimstatus.WithBackoff(time.Millisecond, 2*time.Millisecond))
	run(t, w)
	const claims, rounds = 20, 50
	clear := func(round int) bool { return round%5 == 4 }
	status := func(round int) string { return []string{"True", "False"}[round%2] }
	var wg sync.WaitGroup
	for i := range claims {
		wg.Go(func() {
			r := claimstatus.ClaimRef{Namespace: "ns", Name: string(rune('a' + i)), UID: types.UID(string(rune('a' + i)))}
			for j := range rounds {
				if clear(j) {
					w.Clear(r)
					continue
				}
				if err := w.Set(r, []claimstatus.Device{{Pool: "p", Device: "d", Status: ready(status(j))}}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	testkit.Eventually(t, "every claim written", func() bool { return w.Pending() == 0 })
	mu.Lock()
	defer mu.Unlock()
	for i := range claims {
		ap, ok := last[string(rune('a'+i))]
		switch {
		case !ok:
			t.Errorf("claim %c never written", 'a'+i)
		case clear(rounds - 1):
			if len(ap.Claim.Status.Devices) != 0 {
				t.Errorf("claim %c: last write %+v, want the final Clear", 'a'+i, ap.Claim.Status)
			}
		case len(ap.Claim.Status.Devices) != 1 || string(ap.Claim.Status.Devices[0].Conditions[0].Status) != status(rounds-1):
			t.Errorf("claim %c: last write %+v, want status %s", 'a'+i, ap.Claim.Status, status(rounds-1))
		}
	}
}

// TestOptionsRefuseBadValues: a bad option value is New's error, naming the
// option and its limit, instead of a default kept silently.
func TestOptionsRefuseBadValues(t *testing.T) {
	for _, tc := range []struct {
		opt  claimstatus.Option
		want string
	}{
		{claimstatus.WithBackoff(0, time.Second), "backoff 0s to 1s: base must be positive"},
		{claimstatus.WithBackoff(time.Second, time.Millisecond), "max at least base"},
		{claimstatus.WithWorkers(0), "workers 0: must be at least 1"},
		{claimstatus.WithRequestTimeout(-time.Second), "request timeout -1s: must be positive"},
		{claimstatus.WithForbiddenRetries(-1), "forbidden retries -1: must not be negative"},
		{claimstatus.WithClock(nil), "clock: nil"},
	} {
		if w, err := claimstatus.New(fake.NewClientset(), driver, tc.opt); err == nil || w != nil {
			t.Errorf("New = %v, %v; want an error with %q", w, err, tc.want)
		} else {
			testkit.ErrorContains(t, err, tc.want)
		}
	}
	if _, err := claimstatus.New(fake.NewClientset(), driver, claimstatus.WithForbiddenRetries(0), claimstatus.WithWorkers(1)); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
}
