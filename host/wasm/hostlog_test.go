package wasm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
)

func initAnswer(t *testing.T) []byte {
	t.Helper()
	b, err := (&abi.Response{Result: &abi.Response_Init{Init: &abi.InitResponse{}}}).MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLogFlood has one call log 40,000 messages: at most
// MaxLogMessagesPerCall reach the log, followed by one line that counts the
// rest, and DroppedLogs counts them.
func TestLogFlood(t *testing.T) {
	ctx := context.Background()
	var logs logLines
	p, err := wasm.Load(ctx, "flood", wasmtest.LoggingModule(40000, []byte("flood"), initAnswer(t)), wasm.WithLogger(logs.logger()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if _, err := p.Call(ctx, abi.Method_METHOD_INIT, &abi.InitRequest{}); err != nil {
		t.Fatal(err)
	}
	floods := 0
	for _, l := range logs.lines {
		if strings.Contains(l, `"msg"="flood"`) {
			floods++
		}
	}
	if floods != wasm.MaxLogMessagesPerCall {
		t.Fatalf("%d messages logged, want %d", floods, wasm.MaxLogMessagesPerCall)
	}
	if got, want := p.DroppedLogs(), uint64(40000-wasm.MaxLogMessagesPerCall); got != want {
		t.Fatalf("DroppedLogs = %d, want %d", got, want)
	}
	if !logs.contains(`"dropped"=39900`) {
		t.Fatalf("no line counts the dropped messages: %q", logs.lines[len(logs.lines)-1])
	}
}

// TestLogRate has calls log 4 KiB messages back to back: what reaches the log
// stays within the burst plus the sustained rate over the time taken.
func TestLogRate(t *testing.T) {
	ctx := context.Background()
	var logs logLines
	msg := []byte(strings.Repeat("r", abi.MaxLogMessage))
	p, err := wasm.Load(ctx, "rate", wasmtest.LoggingModule(wasm.MaxLogMessagesPerCall, msg, initAnswer(t)), wasm.WithLogger(logs.logger()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	start := time.Now()
	const calls = 5
	for range calls {
		if _, err := p.Call(ctx, abi.Method_METHOD_INIT, &abi.InitRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	logged := 0
	for _, l := range logs.lines {
		if strings.Contains(l, string(msg[:64])) {
			logged++
		}
	}
	bound := (wasm.LogBurstBytes + int(elapsed.Seconds()*wasm.LogBytesPerSecond) + abi.MaxLogMessage) / abi.MaxLogMessage
	if logged > bound {
		t.Fatalf("%d messages of %d bytes logged in %v, want at most %d", logged, abi.MaxLogMessage, elapsed, bound)
	}
	if want := uint64(calls*wasm.MaxLogMessagesPerCall - logged); p.DroppedLogs() != want {
		t.Fatalf("DroppedLogs = %d, want %d", p.DroppedLogs(), want)
	}
}
