package claimstatus

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourceapply "k8s.io/client-go/applyconfigurations/resource/v1"
)

// next writes one queued claim; it returns false once the queue is shut down.
func (w *Writer) next(ctx context.Context) bool {
	uid, shutdown := w.queue.Get()
	if shutdown {
		return false
	}
	defer w.queue.Done(uid)

	w.mu.Lock()
	req := w.pending[uid]
	w.mu.Unlock()
	if req == nil {
		w.queue.Forget(uid)
		return true
	}

	err := w.apply(ctx, req)
	outcome := classify(err)

	w.mu.Lock()
	// A Set or Clear that came in meanwhile replaced req and queued the
	// claim again: leave it for the next round.
	latest := w.pending[uid] == req
	if latest && outcome != retry {
		delete(w.pending, uid)
	}
	if outcome == gone && latest {
		// The claim is gone: forget its conditions too.
		delete(w.conditions, uid)
	}
	w.mu.Unlock()

	log := w.opts.logger.WithValues("claim", req.ref.Namespace+"/"+req.ref.Name, "uid", req.ref.UID, "clear", req.clear)
	switch outcome {
	case done:
		w.queue.Forget(uid)
		log.V(2).Info("claim status written", "devices", len(req.devices))
	case gone:
		w.queue.Forget(uid)
		log.V(1).Info("claim gone, status not written", "reason", err.Error())
	case refused:
		w.queue.Forget(uid)
		log.Error(err, "API server refused the claim status; not retrying")
		w.failed(req.ref, err, false)
	case retry:
		if latest {
			w.queue.AddRateLimited(uid)
		} else {
			w.queue.Forget(uid)
		}
		log.V(1).Info("claim status not written, retrying", "err", err.Error(), "attempts", w.queue.NumRequeues(uid))
		w.failed(req.ref, err, true)
	}
	return true
}

func (w *Writer) failed(ref ClaimRef, err error, retry bool) {
	if w.opts.onFailure != nil {
		w.opts.onFailure(ref, err, retry)
	}
}

// apply writes req: this driver's entries of the claim's status.devices in
// one server-side apply, the claim's UID as a precondition.
func (w *Writer) apply(ctx context.Context, req *request) error {
	ctx, cancel := context.WithTimeout(ctx, w.opts.requestTimeout)
	defer cancel()
	status := resourceapply.ResourceClaimStatus()
	if !req.clear {
		status.WithDevices(req.devices...)
	}
	claim := resourceapply.ResourceClaim(req.ref.Name, req.ref.Namespace).WithUID(req.ref.UID).WithStatus(status)
	_, err := w.client.ResourceV1().ResourceClaims(req.ref.Namespace).ApplyStatus(ctx, claim,
		metav1.ApplyOptions{FieldManager: w.driver, Force: true})
	if err != nil {
		verb := "applying"
		if req.clear {
			verb = "clearing"
		}
		return fmt.Errorf("%s status.devices of claim %s for driver %s: %w", verb, req.ref, w.driver, err)
	}
	return nil
}

type outcome int

const (
	done    outcome = iota // written
	gone                   // the claim no longer exists (or is another one now)
	refused                // the API server will refuse it again: report, drop
	retry                  // the API server was away or busy: try again later
)

// classify decides what a failed apply means. A UID precondition that fails
// is a Conflict: the claim of that name was deleted and created again.
// Unauthorized is retried: a service account token may be being rotated.
func classify(err error) outcome {
	switch {
	case err == nil:
		return done
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return gone
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err),
		apierrors.IsRequestEntityTooLargeError(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsNotAcceptable(err), apierrors.IsUnsupportedMediaType(err):
		return refused
	}
	return retry
}
