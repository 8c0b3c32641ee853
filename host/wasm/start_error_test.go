package wasm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// TestFirstStartFailure: a RestoreFunc failing on Load's first instance reads
// as the policy failing to start, not as a restore, and is still ErrRestore
// (the agent falls back on it); the policy's own refusal keeps its text.
func TestFirstStartFailure(t *testing.T) {
	restore := func(ctx context.Context, tr abi.Transport) error {
		_, err := abi.NewClient(tr).Init(ctx, &abi.InitRequest{Config: []byte("reject")})
		return err
	}
	_, err := wasm.Load(context.Background(), "conformance", conformanceModule(t), wasm.WithCacheDir(sharedCache), wasm.WithRestore(restore))
	if err == nil {
		t.Fatal("Load succeeded; the conformance policy refuses the configuration \"reject\"")
	}
	if !errors.Is(err, wasm.ErrRestore) {
		t.Errorf("error %v is not ErrRestore", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, `policy "conformance" failed to start: Init: `) || strings.Contains(msg, "restoring") || strings.Contains(msg, "init: Init") {
		t.Errorf("error = %q, want `policy \"conformance\" failed to start: Init: …`", msg)
	}
}
