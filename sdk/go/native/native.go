// Package native runs a Go policy in-process through the same encode and decode
// path its Wasm build uses, so a policy is unit-tested natively and the same
// scenario can be replayed through the .wasm and compared decision by decision.
//
//	r, err := native.New(&myPolicy{})
//	client := abi.NewClient(r)
//	resp, err := client.CreateContainer(ctx, req)
package native

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// Runner drives one policy value. It implements abi.Transport; calls are
// serialized like calls on a Wasm instance.
type Runner struct {
	mu         sync.Mutex
	dispatcher *policy.Dispatcher
}

var _ abi.Transport = (*Runner)(nil)

// New returns a Runner for p, or the error that would fail its Wasm build at
// load time (an invalid Description).
func New(p policy.Policy) (*Runner, error) {
	d, err := policy.NewDispatcher(p)
	if err != nil {
		return nil, fmt.Errorf("native runner: %w", err)
	}
	return &Runner{dispatcher: d}, nil
}

// Call encodes the request, dispatches it, and decodes the encoded response, as
// the Wasm exports and the host do. A panic in the policy is returned as an error,
// where the Wasm build would trap.
func (r *Runner) Call(ctx context.Context, method abi.Method, request abi.Message) (resp *abi.Response, err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("native %s: %w", method.Short(), err)
	}
	raw := make([]byte, request.SizeVT())
	if _, err := request.MarshalToSizedBufferVT(raw); err != nil {
		return nil, fmt.Errorf("native %s: encode request: %w", method.Short(), err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("native %s: policy panicked: %v\n%s", method.Short(), p, debug.Stack())
		}
	}()
	encoded, err := r.dispatcher.Dispatch(method, raw).MarshalVT()
	if err != nil {
		return nil, fmt.Errorf("native %s: encode response: %w", method.Short(), err)
	}
	resp = &abi.Response{}
	if err := resp.UnmarshalVT(encoded); err != nil {
		return nil, fmt.Errorf("native %s: decode response: %w", method.Short(), err)
	}
	return resp, nil
}
