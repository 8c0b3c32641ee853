package claimstatus

import (
	"context"
	"errors"
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
	if outcome == forbidden {
		// RBAC may refuse for a moment while an API server starts (its
		// caches are filling); a lasting refusal is final.
		outcome = refused
		if w.queue.NumRequeues(uid) < w.opts.forbiddenRetries {
			outcome = retry
		}
	}

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
	done      outcome = iota // written
	gone                     // the claim no longer exists (or is another one now)
	refused                  // the API server will refuse it again: report, drop
	retry                    // the API server was away or busy: try again later
	forbidden                // 403: retried a few times, then refused
)

// classify decides what a failed apply means. A claim of that name that
// was deleted and created again fails the UID precondition: the API server
// answers Invalid with a metadata.uid cause ("field is immutable"), or
// Conflict when no object is found. A claim allocated on another node is
// Invalid too (a Forbidden cause on status.devices). Unauthorized is
// retried: a service account token may be being rotated.
func classify(err error) outcome {
	switch {
	case err == nil:
		return done
	case apierrors.IsNotFound(err), apierrors.IsConflict(err), otherUID(err):
		return gone
	case apierrors.IsForbidden(err):
		return forbidden
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err),
		apierrors.IsRequestEntityTooLargeError(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsNotAcceptable(err), apierrors.IsUnsupportedMediaType(err):
		return refused
	}
	return retry
}

// otherUID reports whether the API server refused the apply because the
// claim's UID is not the one in the apply.
func otherUID(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}
