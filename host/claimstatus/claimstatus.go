// Package claimstatus writes this driver's entries of a ResourceClaim's
// status.devices (KEP-4817) from the policy's answer to Allocate.
//
// A Writer checks and canonicalizes a claim's device statuses at once, in Set,
// so that bad policy output is refused with an error naming the field and the
// limit before anything is queued. The write itself happens later, on Run's
// workers: one server-side apply per claim, field manager = the driver name,
// Force, holding all of this driver's devices of the claim, with the claim's
// UID as a precondition so that a recreated claim of the same name is never
// written. Set and Clear never block on the API server: while it is away the
// latest Set or Clear of each claim waits and is retried with exponential
// backoff. Clear (Unprepare) applies an empty list, which removes exactly the
// entries this driver's field manager owns; other drivers' entries stay.
//
// Errors the API server will not change its mind about (Invalid — a claim
// allocated on another node, for one —, BadRequest, …) are reported and
// dropped, not retried; 403 Forbidden is retried a few times first (a
// restarted API server refuses until its RBAC caches fill). A claim that no
// longer exists (NotFound, or a different UID) is done. RATIONALE.md says
// why.
//
//	w, err := claimstatus.New(client, "topology-aware.nri.io", claimstatus.WithLogger(log))
//	go w.Run(ctx)
//	err := w.Set(claimstatus.ClaimRef{Namespace: ns, Name: name, UID: uid}, devices)
//	...
//	w.Clear(ref)
package claimstatus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourceapply "k8s.io/client-go/applyconfigurations/resource/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// ClaimRef names a claim: namespace, name, uid.
type ClaimRef struct {
	Namespace, Name string
	UID             types.UID
}

func (c ClaimRef) String() string { return c.Namespace + "/" + c.Name + " (" + string(c.UID) + ")" }

// Device is one allocated device's status. A nil Status means the policy
// reported nothing for the device: it gets no entry.
type Device struct {
	Pool, Device, ShareID string
	Status                *abi.DeviceStatus
}

// Writer queues and writes this driver's status.devices entries. Create it
// with New; its methods are safe for concurrent use.
type Writer struct {
	client kubernetes.Interface
	driver string
	opts   options
	queue  workqueue.TypedRateLimitingInterface[types.UID]
	ran    atomic.Bool

	mu sync.Mutex
	// pending holds the latest Set or Clear of each claim not yet written.
	pending map[types.UID]*request
	// conditions holds the conditions last Set per claim and device, so that
	// a condition whose status did not change keeps its lastTransitionTime.
	conditions map[types.UID]map[deviceKey][]metav1.Condition
}

// request is one Set (devices, possibly empty) or Clear (clear = true).
type request struct {
	ref     ClaimRef
	clear   bool
	devices []*resourceapply.AllocatedDeviceStatusApplyConfiguration
}

// New returns a Writer that writes driverName's entries through client, or
// the first option's error. Call Run to start writing.
func New(client kubernetes.Interface, driverName string, opts ...Option) (*Writer, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[types.UID](o.baseDelay, o.maxDelay)
	return &Writer{
		client: client,
		driver: driverName,
		opts:   o,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[types.UID]{
			Name:  "claimstatus",
			Clock: o.clock,
		}),
		pending:    map[types.UID]*request{},
		conditions: map[types.UID]map[deviceKey][]metav1.Condition{},
	}, nil
}

// Set checks and canonicalizes devices and queues one apply of claim's
// status.devices holding exactly these entries for this driver (an entry
// Set before and missing now is removed). It replaces any Set or Clear of
// the claim not yet written. It never blocks on the API server; bad input
// is refused with an error naming the field and the limit, and nothing is
// queued.
func (w *Writer) Set(claim ClaimRef, devices []Device) error {
	if err := claim.check(); err != nil {
		return fmt.Errorf("claim status of %s: %w", claim, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	entries, conds, err := build(w.driver, devices, w.conditions[claim.UID], now(w.opts.clock))
	if err != nil {
		return fmt.Errorf("claim status of %s: %w", claim, err)
	}
	w.conditions[claim.UID] = conds
	w.pending[claim.UID] = &request{ref: claim, devices: entries}
	w.queue.Add(claim.UID)
	return nil
}

// Clear queues the removal of this driver's entries from claim's
// status.devices (Unprepare), replacing any Set not yet written.
func (w *Writer) Clear(claim ClaimRef) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.conditions, claim.UID)
	w.pending[claim.UID] = &request{ref: claim, clear: true}
	w.queue.Add(claim.UID)
}

// Pending returns the number of claims whose latest Set or Clear is not yet
// written (queued, waiting for a retry, or being written).
func (w *Writer) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// Run writes queued claims on the configured number of workers until ctx
// ends; it returns nil then. What is still pending stays unwritten. Run may
// be called once.
func (w *Writer) Run(ctx context.Context) error {
	if !w.ran.CompareAndSwap(false, true) {
		return errors.New("claim status writer: Run called twice")
	}
	stop := context.AfterFunc(ctx, w.queue.ShutDown)
	defer stop()
	w.opts.logger.V(1).Info("claim status writer started", "driver", w.driver, "workers", w.opts.workers)
	var wg sync.WaitGroup
	for range w.opts.workers {
		wg.Go(func() {
			for w.next(ctx) {
			}
		})
	}
	wg.Wait()
	w.opts.logger.V(1).Info("claim status writer stopped", "driver", w.driver, "pending", w.Pending())
	return nil
}

func (c ClaimRef) check() error {
	switch {
	case c.Namespace == "":
		return errors.New("claim namespace: required")
	case c.Name == "":
		return errors.New("claim name: required")
	case c.UID == "":
		return errors.New("claim uid: required")
	}
	return nil
}

// now is a clock reading truncated to what metav1.Time serializes (seconds),
// so that a remembered time equals the one written.
func now(c clock.PassiveClock) metav1.Time {
	return metav1.NewTime(c.Now().Truncate(time.Second))
}
