package wasm_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// TestGarbageCollectionDuringARunawayCall: a stop-the-world pause must not wait
// forever for a goroutine spinning in Wasm, or the whole agent (the deadline
// timer included) freezes.
func TestGarbageCollectionDuringARunawayCall(t *testing.T) {
	for _, engine := range []wasm.Engine{wasm.EngineCompiler, wasm.EngineInterpreter} {
		for _, mode := range []wasm.Interrupt{wasm.InterruptInstrumented, wasm.InterruptWazero} {
			t.Run(engine.String()+"/"+mode.String(), func(t *testing.T) {
				_, client, _ := load(t, conformanceModule(t), wasm.WithEngine(engine), wasm.WithInterrupt(mode), wasm.WithCallTimeout(500*time.Millisecond))
				done := make(chan error, 1)
				go func() {
					_, err := client.CreateContainer(context.Background(), createContainer("loop"))
					done <- err
				}()
				gcDone := make(chan struct{})
				go func() {
					time.Sleep(100 * time.Millisecond)
					runtime.GC()
					close(gcDone)
				}()
				select {
				case err := <-done:
					if !errors.Is(err, wasm.ErrDeadline) {
						t.Fatalf("error = %v, want ErrDeadline", err)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("the runaway call was not stopped: a GC pause is waiting for the spinning goroutine")
				}
				<-gcDone
				if _, err := client.Info(context.Background(), &abi.InfoRequest{}); err != nil {
					t.Fatalf("call after the deadline: %v", err)
				}
			})
		}
	}
}
