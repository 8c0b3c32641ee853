package wasm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
)

var startEntries = []string{wasmtest.EntryStart, wasmtest.EntryInitialize, wasmtest.EntryVersion}

// TestStartUpDeadline loads modules that loop forever in each entry point of
// start-up: Load must fail with ErrDeadline, naming the start-up limit.
func TestStartUpDeadline(t *testing.T) {
	for _, engine := range []wasm.Engine{wasm.EngineCompiler, wasm.EngineInterpreter} {
		for _, mode := range []wasm.Interrupt{wasm.InterruptInstrumented, wasm.InterruptWazero} {
			for _, entry := range startEntries {
				t.Run(engine.String()+"/"+entry, func(t *testing.T) {
					ctx := context.Background()
					p, err := wasm.Load(ctx, "looping", wasmtest.LoopingModule(entry),
						wasm.WithEngine(engine), wasm.WithInterrupt(mode), wasm.WithStartTimeout(50*time.Millisecond), wasm.WithLogger(logr.Discard()))
					if err == nil {
						p.Close(ctx)
						t.Fatal("Load succeeded, want a start-up deadline error")
					}
					if !errors.Is(err, wasm.ErrDeadline) || !strings.Contains(err.Error(), "start-up limit 50ms") {
						t.Fatalf("Load error = %v, want %v naming the start-up limit", err, wasm.ErrDeadline)
					}
					step := entry
					if entry == wasmtest.EntryStart {
						step = "instantiate"
					}
					if !strings.Contains(err.Error(), step) {
						t.Fatalf("Load error = %v, want it to name %q", err, step)
					}
				})
			}
		}
	}
}

// TestStartUpCancel cancels the context of a Load that hangs in start-up, as
// the CLI does on SIGTERM, with a start-up limit far away: Load must return.
func TestStartUpCancel(t *testing.T) {
	for _, entry := range startEntries {
		t.Run(entry, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			p, err := wasm.Load(ctx, "looping", wasmtest.LoopingModule(entry),
				wasm.WithStartTimeout(time.Hour), wasm.WithLogger(logr.Discard()))
			if err == nil {
				p.Close(context.Background())
				t.Fatal("Load succeeded, want an error")
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Load error = %v, want %v", err, context.Canceled)
			}
		})
	}
}

// TestAnsweringModule checks the hand-assembled fixture: it loads and its
// call answers the bytes it was built with.
func TestAnsweringModule(t *testing.T) {
	ctx := context.Background()
	want := &abi.Response{Result: &abi.Response_Init{Init: &abi.InitResponse{}}}
	answer, err := want.MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	p, err := wasm.Load(ctx, "answering", wasmtest.AnsweringModule(answer, 0), wasm.WithLogger(logr.Discard()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	got, err := p.Call(ctx, abi.Method_METHOD_INIT, &abi.InitRequest{NodeName: "node"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.EqualVT(want) {
		t.Fatalf("answer = %v, want %v", got, want)
	}
}
