package wasm

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/internal/testkit"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// TestGuestHeapStaysBounded: a long-lived Go guest must keep collecting its
// garbage. Go's runtime in a Wasm reactor runs no goroutine between calls, and
// a collection that waited for its background workers used to never finish,
// so linear memory grew with every call until the memory cap (the SDK now
// yields at the end of a call that no nriwasm_idle preceded). Each request
// here leaves 64 KiB of garbage in the guest; 8,000 of them are 500 MiB, far
// past the cap had none been collected. "back-to-back" never idles (an
// agent that is never idle, or an old host); "idle" runs the idle work after
// every call, so the calls themselves never yield.
func TestGuestHeapStaysBounded(t *testing.T) {
	module, ok := builtin.Module("conformance")
	if !ok {
		t.Fatal("no built-in conformance module")
	}
	for _, idle := range []bool{false, true} {
		name := "back-to-back"
		if idle {
			name = "idle"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			p, err := Load(ctx, "conformance", module, WithIdleDelay(0))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			client := abi.NewClient(p)
			if _, err := client.Init(ctx, &abi.InitRequest{}); err != nil {
				t.Fatal(err)
			}
			req := &abi.CreateContainerRequest{
				Pod:       &abi.PodSandbox{Id: "pod", Annotations: map[string]string{"padding": strings.Repeat("x", 64<<10)}},
				Container: &abi.Container{Id: "c", PodSandboxId: "pod"},
			}
			const calls, limit = 8000, 64 << 20
			for i := range calls {
				if _, err := client.CreateContainer(ctx, req); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if idle {
					if ran, err := p.Idle(ctx); err != nil || !ran {
						t.Fatalf("idle after call %d: ran %v, %v", i, ran, err)
					}
				}
				if size := p.inst.mem.Size(); size > limit {
					t.Fatalf("after %d calls the guest's memory is %d MiB (limit %d MiB): its collector stopped", i+1, size>>20, limit>>20)
				}
			}
			if n := p.Rebuilds(); n != 0 {
				t.Errorf("the instance was rebuilt %d times", n)
			}
		})
	}
}

// TestIdle: Policy.Idle runs nriwasm_idle once after each call, and not for a
// module without the export (an older Go guest, a Rust one).
func TestIdle(t *testing.T) {
	ctx := context.Background()
	conformance, ok := builtin.Module("conformance")
	if !ok {
		t.Fatal("no built-in conformance module")
	}
	rust, err := os.ReadFile("testdata/conformance-rust.wasm")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		module []byte
		idles  bool
	}{{"go", conformance, true}, {"rust", rust, false}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Load(ctx, tc.name, tc.module, WithIdleDelay(0))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			if _, err := abi.NewClient(p).Info(ctx, &abi.InfoRequest{}); err != nil {
				t.Fatal(err)
			}
			for i, want := range []bool{tc.idles, false} {
				ran, err := p.Idle(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if ran != want {
					t.Errorf("Idle %d after a call: ran = %v, want %v", i+1, ran, want)
				}
			}
		})
	}
}

// TestIdleAfterDelay: without explicit Idle calls, the idle work runs on its
// own once the policy has had no call for WithIdleDelay.
func TestIdleAfterDelay(t *testing.T) {
	ctx := context.Background()
	module, ok := builtin.Module("conformance")
	if !ok {
		t.Fatal("no built-in conformance module")
	}
	p, err := Load(ctx, "conformance", module, WithIdleDelay(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if _, err := abi.NewClient(p).Info(ctx, &abi.InfoRequest{}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the idle work to run after the call", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.inst.idled
	})
}
