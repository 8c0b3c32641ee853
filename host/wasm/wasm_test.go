package wasm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
)

// logLines collects what a Policy logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{Verbosity: 10})
}

func (l *logLines) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// load loads the conformance policy with a restore hook that calls Init and
// counts its runs.
func load(t *testing.T, opts ...wasm.Option) (*wasm.Policy, *abi.Client, *int) {
	t.Helper()
	restores := new(int)
	restore := func(ctx context.Context, tr abi.Transport) error {
		*restores++
		_, err := abi.NewClient(tr).Init(ctx, &abi.InitRequest{NodeName: "node-1"})
		return err
	}
	opts = append([]wasm.Option{wasm.WithCacheDir(sharedCache), wasm.WithRestore(restore)}, opts...)
	p, err := wasm.Load(context.Background(), "conformance", conformanceModule(t), opts...)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p, abi.NewClient(p), restores
}

func createContainer(name string, env ...string) *abi.CreateContainerRequest {
	c := &abi.Container{Id: "id-" + name, Name: name, Annotations: map[string]string{conformance.CPUSetAnnotation: "0-1"}}
	for i := 0; i+1 < len(env); i += 2 {
		c.Env = append(c.Env, &abi.KeyValue{Key: env[i], Value: env[i+1]})
	}
	return &abi.CreateContainerRequest{Pod: &abi.PodSandbox{Id: "pod", Namespace: "default"}, Container: c}
}

func TestCallsReachThePolicy(t *testing.T) {
	ctx := context.Background()
	p, client, restores := load(t)
	if *restores != 1 {
		t.Fatalf("restore ran %d times at Load, want 1", *restores)
	}
	if got := p.Version(); got != abi.Version(1, 0) {
		t.Fatalf("Version = %#x, want %#x", got, abi.Version(1, 0))
	}
	info, err := client.Info(ctx, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor})
	if err != nil {
		t.Fatal(err)
	}
	md := info.GetMetadata()
	if md.Name != "conformance" || md.Version != "1.0.0" || md.AbiMajor != 1 || len(md.Capabilities) != 14 {
		t.Fatalf("Info metadata = %v", md)
	}
	resp, err := client.CreateContainer(ctx, createContainer("c1", "A", "1", "B", "2"))
	if err != nil {
		t.Fatal(err)
	}
	adj := resp.GetAdjustment()
	if adj.CpusetCpus != "0-1" || len(adj.Env) != 2 || adj.Env[0].Key != "B" || adj.Annotations[conformance.SeenAnnotation] != "1" {
		t.Fatalf("adjustment = %v", adj)
	}
	if _, err := client.StopContainer(ctx, &abi.StopContainerRequest{}); err != nil {
		t.Fatal(err)
	}
	dump, err := client.DumpState(ctx, &abi.DumpStateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(dump.Json); got != `["Init","StopContainer"]` {
		t.Fatalf("DumpState = %s", got)
	}
}

func TestPolicyErrorIsAnAnswer(t *testing.T) {
	_, client, restores := load(t)
	_, err := client.CreateContainer(context.Background(), createContainer("refuse"))
	pe, ok := errors.AsType[*abi.PolicyError](err)
	if !ok {
		t.Fatalf("error = %v, want a *abi.PolicyError", err)
	}
	if pe.Code != abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED || pe.Field != "container.name" || pe.Method != abi.Method_METHOD_CREATE_CONTAINER {
		t.Fatalf("PolicyError = %+v", pe)
	}
	if *restores != 1 {
		t.Fatalf("a policy error rebuilt the instance (restores = %d)", *restores)
	}
}

func TestMisbehavingPolicyIsContained(t *testing.T) {
	tests := []struct {
		name     string
		kind     error
		inError  string
		opts     []wasm.Option
		deadline time.Duration
	}{
		{name: "panic", kind: wasm.ErrTrap, inError: "panic: conformance: panic requested"},
		{name: "print", kind: wasm.ErrTrap, inError: "conformance: to stderr"},
		{name: "loop", kind: wasm.ErrDeadline, opts: []wasm.Option{wasm.WithCallTimeout(200 * time.Millisecond)}},
		{name: "loop", kind: wasm.ErrDeadline, deadline: 200 * time.Millisecond},
		{name: "oom", kind: wasm.ErrOutOfMemory, inError: "out of memory", opts: []wasm.Option{wasm.WithMemoryLimit(64 << 20)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, client, restores := load(t, tc.opts...)
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			_, err := client.CreateContainer(ctx, createContainer(tc.name))
			if !errors.Is(err, tc.kind) {
				t.Fatalf("error = %v, want %v", err, tc.kind)
			}
			if _, ok := errors.AsType[*wasm.CallError](err); !ok {
				t.Fatalf("error %T is not a *wasm.CallError", err)
			}
			if !strings.Contains(err.Error(), tc.inError) || !strings.Contains(err.Error(), `policy "conformance": CreateContainer`) {
				t.Fatalf("error %q does not name the policy, the call and %q", err, tc.inError)
			}
			resp, err := client.CreateContainer(context.Background(), createContainer("ok", "X", "y"))
			if err != nil {
				t.Fatalf("call on the rebuilt instance: %v", err)
			}
			if got := resp.GetAdjustment().GetAnnotations()[conformance.SeenAnnotation]; got != "1" {
				t.Fatalf("rebuilt instance kept state: seen = %s", got)
			}
			if p.Rebuilds() != 1 || *restores != 2 {
				t.Fatalf("rebuilds = %d, restores = %d; want 1 and 2", p.Rebuilds(), *restores)
			}
		})
	}
}

func TestRestoreFailureIsRetriedOnTheNextCall(t *testing.T) {
	fail := true
	restore := func(ctx context.Context, tr abi.Transport) error {
		if fail {
			return errors.New("journal unreadable")
		}
		_, err := abi.NewClient(tr).Init(ctx, &abi.InitRequest{})
		return err
	}
	fail = false
	p, err := wasm.Load(context.Background(), "conformance", conformanceModule(t), wasm.WithCacheDir(sharedCache), wasm.WithRestore(restore))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	client := abi.NewClient(p)
	if _, err := client.CreateContainer(context.Background(), createContainer("panic")); !errors.Is(err, wasm.ErrTrap) {
		t.Fatalf("error = %v, want ErrTrap", err)
	}
	fail = true
	if _, err := client.DumpState(context.Background(), &abi.DumpStateRequest{}); !errors.Is(err, wasm.ErrRestore) || !strings.Contains(err.Error(), "journal unreadable") {
		t.Fatalf("error = %v, want ErrRestore naming the cause", err)
	}
	fail = false
	if _, err := client.DumpState(context.Background(), &abi.DumpStateRequest{}); err != nil {
		t.Fatalf("call after the restore recovered: %v", err)
	}
}

func TestGuestLogsReachTheHostLog(t *testing.T) {
	var logs logLines
	_, client, _ := load(t, wasm.WithLogger(logs.logger()))
	if _, err := client.CreateContainer(context.Background(), createContainer("log")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"msg"="conformance: debug"`, `"msg"="conformance: info"`, `"conformance: warn" "policy"="conformance" "level"="warn"`, `"msg"="conformance: error"`} {
		if !logs.contains(want) {
			t.Errorf("log lacks %s; have %q", want, logs.lines)
		}
	}
}

func TestCallsAreSerialized(t *testing.T) {
	_, client, _ := load(t)
	const goroutines, calls = 4, 25
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range calls {
				if _, err := client.CreateContainer(context.Background(), createContainer("c", "K", "V")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	resp, err := client.CreateContainer(context.Background(), createContainer("last"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resp.GetAdjustment().GetAnnotations()[conformance.SeenAnnotation], "101"; got != want {
		t.Fatalf("seen = %s, want %s: calls interleaved", got, want)
	}
	// The first container's name, decoded without a copy 100 calls ago, survived
	// every later request written into the same guest buffer.
	if got := resp.GetAdjustment().GetAnnotations()[conformance.FirstAnnotation]; got != "c" {
		t.Fatalf("first = %q, want %q: a kept string was overwritten", got, "c")
	}
}

func TestClosedPolicyRefusesCalls(t *testing.T) {
	p, client, _ := load(t)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Info(context.Background(), &abi.InfoRequest{}); !errors.Is(err, wasm.ErrClosed) {
		t.Fatalf("error = %v, want ErrClosed", err)
	}
}
