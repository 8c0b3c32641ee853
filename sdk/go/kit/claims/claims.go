// Package claims finds the prepared DRA claims a container holds, for a
// policy that keeps its claims in a map by uid.
//
// The CDI devices the host names for the policy's claims decide
// (policy.ContainerClaims); only a container without CDI devices (a runtime
// that does not report them) is matched by an environment variable
// "<prefix><uid>" (policy.ClaimEnvName) whose value is what the policy
// wrote for the claim. Repeated does the checks every Allocate starts with;
// Allocate and Release are whole Allocate and Release answers around the
// policy's own allocation and release.
package claims

import (
	"maps"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// EnvName is the environment variable naming a claim as dra-driver-cpu and
// nri-plugins name theirs (DRA_CPUSET_<uid>): prefix and the claim's uid as
// it is, '-' included. Kubernetes and the runtimes take '-' in a variable's
// name (apimachinery's IsEnvVarName); only a shell cannot expand it.
// policy.ClaimEnvName is the shell-safe form, '-' written as '_'.
func EnvName(prefix, uid string) string { return prefix + uid }

// Finder looks claims of type C up in a policy's map of prepared claims.
type Finder[C any] struct {
	// Driver is the DRA driver name the policy's claims are allocated by.
	Driver string
	// EnvPrefix starts the environment variable naming a claim; empty
	// disables the environment fallback.
	EnvPrefix string
	// EnvValue is the value the policy gives a claim's variable: a
	// variable matches only with exactly that value.
	EnvValue func(C) string
	// EnvName, when set, names a claim's variable from its uid; by default
	// policy.ClaimEnvName(EnvPrefix, uid).
	EnvName func(uid string) string
}

// Of are the claims container c holds, in the order they first appear. A
// CDI device of the driver naming a claim that is not in prepared is a
// FAILED_PRECONDITION error naming it.
func (f Finder[C]) Of(c *abi.Container, prepared map[string]C) ([]C, error) {
	var env func(key, value string) (string, bool)
	if f.EnvPrefix != "" {
		env = func(key, value string) (string, bool) { return f.envClaim(prepared, key, value) }
	}
	uids, err := policy.ContainerClaims(f.Driver, c, func(uid string) bool { _, ok := prepared[uid]; return ok }, env)
	if err != nil {
		return nil, err
	}
	out := make([]C, len(uids))
	for i, uid := range uids {
		out[i] = prepared[uid]
	}
	return out, nil
}

// envClaim is the claim whose environment variable key is, with exactly
// the claim's value. Uids are tried in sorted order: two uids that differ
// only where ClaimEnvName writes '_' name the same variable, and the
// answer must not depend on map order.
func (f Finder[C]) envClaim(prepared map[string]C, key, value string) (string, bool) {
	if !strings.HasPrefix(key, f.EnvPrefix) {
		return "", false
	}
	for _, uid := range slices.Sorted(maps.Keys(prepared)) {
		name := policy.ClaimEnvName(f.EnvPrefix, uid)
		if f.EnvName != nil {
			name = f.EnvName(uid)
		}
		if name == key && f.EnvValue(prepared[uid]) == value {
			return uid, true
		}
	}
	return "", false
}

// Repeated answers an Allocate of claim that repeats an earlier one, from
// the policy's allocations, prepared by uid, spec giving the claim each was
// allocated for and answer the devices the policy answered for it. It
// refuses an empty uid (INVALID_ARGUMENT on claim.uid) and a repeat with
// other results than the first (FAILED_PRECONDITION on claim.results); a
// repeat with the same results gets what the first Allocate got; a claim
// not allocated yet gets a nil response and a nil error, for the policy to
// allocate:
//
//	if resp, err := claims.Repeated(r.GetClaim(), s.claims, spec, answer); resp != nil || err != nil {
//		return resp, err
//	}
func Repeated[C any](claim *abi.Claim, prepared map[string]C, spec func(C) *abi.Claim, answer func(C) []*abi.PreparedDevice) (*abi.AllocateResponse, error) {
	if claim.GetUid() == "" {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "claim.uid", "empty claim uid")
	}
	old, ok := prepared[claim.GetUid()]
	if !ok {
		return nil, nil
	}
	if !abi.SameResults(spec(old), claim) {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "claim.results", "claim %s is allocated already, with other results", claim.GetUid())
	}
	return &abi.AllocateResponse{Devices: answer(old)}, nil
}

// Allocate is a whole Allocate: a repeat answers as Repeated does; a new
// claim is allocated (allocate, whose error is the answer's) and answered
// with its devices (answer) and, when updates is set, the updates the
// allocation makes for running containers, read after it:
//
//	func (p *Policy) Allocate(r *abi.AllocateRequest) (*abi.AllocateResponse, error) {
//		return claims.Allocate(r.GetClaim(), p.st.claims, (*claim).spec, (*claim).answer, p.st.allocate, nil)
//	}
func Allocate[C any](claim *abi.Claim, prepared map[string]C, spec func(C) *abi.Claim, answer func(C) []*abi.PreparedDevice,
	allocate func(*abi.Claim) (C, error), updates func() []*abi.ContainerUpdate) (*abi.AllocateResponse, error) {
	if resp, err := Repeated(claim, prepared, spec, answer); resp != nil || err != nil {
		return resp, err
	}
	c, err := allocate(claim)
	if err != nil {
		return nil, err
	}
	resp := &abi.AllocateResponse{Devices: answer(c)}
	if updates != nil {
		resp.Updates = updates()
	}
	return resp, nil
}

// Release is a whole Release: a claim not in prepared is released already
// (an empty answer); one in it is released (release, whose error is the
// answer's: a claim live containers still hold is refused, say) and
// answered with the updates the release makes for running containers, read
// after it when updates is set:
//
//	func (p *Policy) Release(r *abi.ReleaseRequest) (*abi.ReleaseResponse, error) {
//		return claims.Release(r.GetClaim(), p.st.claims, p.st.release, nil)
//	}
func Release[C any](claim *abi.Claim, prepared map[string]C, release func(C) error, updates func() []*abi.ContainerUpdate) (*abi.ReleaseResponse, error) {
	c, ok := prepared[claim.GetUid()]
	if !ok {
		return &abi.ReleaseResponse{}, nil
	}
	if err := release(c); err != nil {
		return nil, err
	}
	resp := &abi.ReleaseResponse{}
	if updates != nil {
		resp.Updates = updates()
	}
	return resp, nil
}
