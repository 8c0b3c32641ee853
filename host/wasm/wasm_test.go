package wasm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

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

// load loads a conformance module with a restore hook that calls Init and
// counts its runs.
func load(t *testing.T, module []byte, opts ...wasm.Option) (*wasm.Policy, *abi.Client, *int) {
	t.Helper()
	restores := new(int)
	restore := func(ctx context.Context, tr abi.Transport) error {
		*restores++
		_, err := abi.NewClient(tr).Init(ctx, &abi.InitRequest{NodeName: "node-1"})
		return err
	}
	opts = append([]wasm.Option{wasm.WithCacheDir(sharedCache), wasm.WithRestore(restore)}, opts...)
	p, err := wasm.Load(context.Background(), "conformance", module, opts...)
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

func TestClosedPolicyRefusesCalls(t *testing.T) {
	p, client, _ := load(t, conformanceModule(t))
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Info(context.Background(), &abi.InfoRequest{}); !errors.Is(err, wasm.ErrClosed) {
		t.Fatalf("error = %v, want ErrClosed", err)
	}
}
