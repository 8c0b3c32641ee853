package balloons_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// guestMeter is a transport that runs the policy natively and counts what
// the guest's side of each call allocates: decoding the request, the
// decision and encoding the answer, as the Wasm exports do. In Wasm those
// bytes set how often the collector runs, and a whole mark of the live heap
// lands on the call that ends a cycle.
type guestMeter struct {
	d             *policy.Dispatcher
	on            bool
	bytes, allocs uint64
	calls         int
}

func (g *guestMeter) Call(_ context.Context, method abi.Method, request abi.Message) (*abi.Response, error) {
	raw := make([]byte, request.SizeVT())
	if _, err := request.MarshalToSizedBufferVT(raw); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	var before, after runtime.MemStats
	if g.on {
		runtime.ReadMemStats(&before)
	}
	encoded, err := g.d.Dispatch(method, raw).MarshalVT()
	if g.on {
		runtime.ReadMemStats(&after)
		g.bytes += after.TotalAlloc - before.TotalAlloc
		g.allocs += after.Mallocs - before.Mallocs
		g.calls++
	}
	if err != nil {
		return nil, fmt.Errorf("encode response: %w", err)
	}
	resp := &abi.Response{}
	return resp, resp.UnmarshalVT(encoded)
}

// BenchmarkGuestAllocs4096 reports what the policy's side of a
// CreateContainer and RemoveContainer pair allocates in
// BenchmarkCreateRemove4096's cases (guest-B/op, guest-allocs/op), with a
// host of ABI v1.1: the figure that sets how often the guest's collector
// runs through Wasm.
func BenchmarkGuestAllocs4096(b *testing.B) {
	for _, bc := range createRemoveCases {
		b.Run(bc.name, func(b *testing.B) {
			d, err := policy.NewDispatcher(balloons.New())
			if err != nil {
				b.Fatal(err)
			}
			g := &guestMeter{d: d}
			h := live4096(b, g, 2000)
			req := bc.s.Request()
			rm := &abi.RemoveContainerRequest{Pod: req.Pod, Container: req.Container}
			ctx := context.Background()
			g.on = true
			for range b.N {
				if _, err := h.Client.CreateContainer(ctx, req); err != nil {
					b.Fatal(err)
				}
				if _, err := h.Client.RemoveContainer(ctx, rm); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(g.bytes)/float64(b.N), "guest-B/op")
			b.ReportMetric(float64(g.allocs)/float64(b.N), "guest-allocs/op")
		})
	}
}
