package wasm

import (
	"context"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// TestGuestHeapStaysBounded: a long-lived Go guest must keep collecting its
// garbage. Go's runtime in a Wasm reactor runs no goroutine between calls, and
// a collection that waited for its background workers used to never finish,
// so linear memory grew with every call until the memory cap (the SDK now
// yields at the end of each call). Each request here leaves 64 KiB of garbage
// in the guest; 8,000 of them are 500 MiB, far past the cap had none been
// collected.
func TestGuestHeapStaysBounded(t *testing.T) {
	module, ok := builtin.Module("conformance")
	if !ok {
		t.Fatal("no built-in conformance module")
	}
	ctx := context.Background()
	p, err := Load(ctx, "conformance", module)
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
		if size := p.inst.mem.Size(); size > limit {
			t.Fatalf("after %d calls the guest's memory is %d MiB (limit %d MiB): its collector stopped", i+1, size>>20, limit>>20)
		}
	}
	if n := p.Rebuilds(); n != 0 {
		t.Errorf("the instance was rebuilt %d times", n)
	}
}
