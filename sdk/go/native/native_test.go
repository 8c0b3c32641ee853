package native_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// counter implements Init and CreateContainer. CreateContainer counts with a
// plain int, so only serialized calls give an exact total (and -race flags
// anything else), and panics for a container named "panic".
type counter struct {
	inits     int
	count     int
	panicInit bool
	lastReq   *abi.CreateContainerRequest
}

func (*counter) Describe() policy.Description {
	return policy.Description{Name: "counter", Version: "1.0.0", Summary: "counts containers"}
}

func (c *counter) Init(*abi.InitRequest) (*abi.InitResponse, error) {
	if c.panicInit {
		panic("init exploded")
	}
	c.inits++
	return &abi.InitResponse{WantsDra: true}, nil
}

func (c *counter) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	c.lastReq = r
	switch r.GetContainer().GetName() {
	case "panic":
		panic("handler exploded")
	case "refuse":
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.name", "full")
	case "fail":
		return nil, errors.New("plain failure")
	case "nil":
		return nil, nil
	}
	c.count++
	return &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{
		CpusetCpus:  "0-1",
		Annotations: map[string]string{"count": strconv.Itoa(c.count)},
	}}, nil
}

func newRunner(t *testing.T, p policy.Policy) (*native.Runner, *abi.Client) {
	t.Helper()
	r, err := native.New(p)
	if err != nil {
		t.Fatalf("native.New: %v", err)
	}
	return r, abi.NewClient(r)
}

func initClient(t *testing.T, c *abi.Client) {
	t.Helper()
	if _, err := c.Init(context.Background(), &abi.InitRequest{}); err != nil {
		t.Fatalf("Init: %v", err)
	}
}

func createReq(name string) *abi.CreateContainerRequest {
	return &abi.CreateContainerRequest{
		Pod:       &abi.PodSandbox{Id: "pod-id", Name: "pod", Namespace: "ns", Labels: map[string]string{"app": "x"}},
		Container: &abi.Container{Id: "ctr-id", Name: name, Env: []*abi.KeyValue{{Key: "A", Value: "1"}}},
	}
}

func TestNewInvalidDescription(t *testing.T) {
	tests := []struct {
		name string
		desc policy.Description
	}{
		{"uppercase", policy.Description{Name: "Bad", Version: "1"}},
		{"empty version", policy.Description{Name: "good"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := native.New(described(tt.desc))
			if err == nil {
				t.Fatal("New succeeded on an invalid description")
			}
			if r != nil {
				t.Errorf("New returned a runner with error %v", err)
			}
			if !strings.Contains(err.Error(), "native runner") || !strings.Contains(err.Error(), tt.desc.Validate().Error()) {
				t.Errorf("error = %v, want the runner's prefix and Validate's reason", err)
			}
		})
	}
}

type described policy.Description

func (d described) Describe() policy.Description { return policy.Description(d) }

func TestRoundTrip(t *testing.T) {
	p := &counter{}
	_, c := newRunner(t, p)
	ctx := context.Background()

	info, err := c.Info(ctx, &abi.InfoRequest{})
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	want := &abi.PolicyMetadata{
		Name: "counter", Version: "1.0.0", Description: "counts containers",
		AbiMajor: abi.ABIMajor, AbiMinor: abi.ABIMinor, Sdk: policy.SDKName,
		Capabilities: []abi.Method{abi.Method_METHOD_INIT, abi.Method_METHOD_CREATE_CONTAINER},
	}
	if !info.GetMetadata().EqualVT(want) {
		t.Errorf("Info = %v, want %v", info.GetMetadata(), want)
	}

	ir, err := c.Init(ctx, &abi.InitRequest{NodeName: "node"})
	if err != nil || !ir.GetWantsDra() {
		t.Fatalf("Init = %v, %v; want wants_dra", ir, err)
	}

	req := createReq("web")
	resp, err := c.CreateContainer(ctx, req)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	wantResp := &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{
		CpusetCpus: "0-1", Annotations: map[string]string{"count": "1"},
	}}
	if !resp.EqualVT(wantResp) {
		t.Errorf("CreateContainer = %v, want %v", resp, wantResp)
	}
	if !p.lastReq.EqualVT(req) {
		t.Errorf("policy saw %v, want %v", p.lastReq, req)
	}
	if p.lastReq == req {
		t.Error("policy saw the caller's request value, not a decoded copy")
	}
}

func TestRunnerAnswers(t *testing.T) {
	tests := []struct {
		name      string
		container string
		wantCode  abi.ErrorCode // UNSPECIFIED: success
		wantField string
		wantMsg   string
		wantEmpty bool
	}{
		{name: "ok", container: "web"},
		{name: "nil response", container: "nil", wantEmpty: true},
		{name: "policy error", container: "refuse",
			wantCode: abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, wantField: "container.name", wantMsg: "full"},
		{name: "plain error", container: "fail",
			wantCode: abi.ErrorCode_ERROR_CODE_INTERNAL, wantMsg: "plain failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newRunner(t, &counter{})
			initClient(t, c)
			resp, err := c.CreateContainer(context.Background(), createReq(tt.container))
			if tt.wantCode == abi.ErrorCode_ERROR_CODE_UNSPECIFIED {
				if err != nil {
					t.Fatalf("CreateContainer: %v", err)
				}
				if resp == nil {
					t.Fatal("nil response with nil error")
				}
				if tt.wantEmpty && resp.SizeVT() != 0 {
					t.Errorf("response %v, want an empty one", resp)
				}
				return
			}
			pe, ok := errors.AsType[*abi.PolicyError](err)
			if !ok {
				t.Fatalf("error %v (%T), want a *PolicyError", err, err)
			}
			want := abi.PolicyError{Method: abi.Method_METHOD_CREATE_CONTAINER, Code: tt.wantCode, Field: tt.wantField, Message: tt.wantMsg}
			if *pe != want {
				t.Errorf("PolicyError = %+v, want %+v", *pe, want)
			}
		})
	}
}

func TestBeforeInitAndUnknownMethod(t *testing.T) {
	r, c := newRunner(t, &counter{})
	ctx := context.Background()

	_, err := c.CreateContainer(ctx, createReq("web"))
	if pe, ok := errors.AsType[*abi.PolicyError](err); !ok || pe.Code != abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION {
		t.Errorf("CreateContainer before Init: %v, want FAILED_PRECONDITION", err)
	}

	resp, err := r.Call(ctx, abi.Method(99), &abi.InfoRequest{})
	if err != nil {
		t.Fatalf("Call(99): %v", err)
	}
	if resp.GetError().GetCode() != abi.ErrorCode_ERROR_CODE_UNIMPLEMENTED {
		t.Errorf("Call(99) = %v, want UNIMPLEMENTED", resp)
	}
}

func TestPanic(t *testing.T) {
	p := &counter{}
	_, c := newRunner(t, p)
	initClient(t, c)
	ctx := context.Background()

	for i := range 3 {
		resp, err := c.CreateContainer(ctx, createReq("panic"))
		if err == nil {
			t.Fatalf("call %d: a panicking handler answered %v", i, resp)
		}
		for _, part := range []string{"native CreateContainer", "policy panicked", "handler exploded"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("call %d: error %q does not contain %q", i, err, part)
			}
		}
		if _, ok := errors.AsType[*abi.PolicyError](err); ok {
			t.Errorf("call %d: a panic must not look like a policy's refusal", i)
		}
		// The runner keeps working (and its lock was released).
		if _, err := c.CreateContainer(ctx, createReq("web")); err != nil {
			t.Fatalf("call %d: CreateContainer after a panic: %v", i, err)
		}
	}
	if p.count != 3 {
		t.Errorf("count = %d, want 3", p.count)
	}
}

func TestPanicInInit(t *testing.T) {
	p := &counter{panicInit: true}
	_, c := newRunner(t, p)
	ctx := context.Background()
	if _, err := c.Init(ctx, &abi.InitRequest{}); err == nil || !strings.Contains(err.Error(), "policy panicked") {
		t.Fatalf("Init = %v, want a panic error", err)
	}
	// A panicked Init did not initialize the policy.
	_, err := c.CreateContainer(ctx, createReq("web"))
	if pe, ok := errors.AsType[*abi.PolicyError](err); !ok || pe.Code != abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION {
		t.Errorf("CreateContainer after a panicked Init: %v, want FAILED_PRECONDITION", err)
	}
	p.panicInit = false
	initClient(t, c)
	if _, err := c.CreateContainer(ctx, createReq("web")); err != nil {
		t.Errorf("CreateContainer after Init: %v", err)
	}
}

func TestContextDone(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"cancelled", cancelled, context.Canceled},
		{"deadline exceeded", expired, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &counter{}
			r, c := newRunner(t, p)
			initClient(t, c)
			resp, err := c.CreateContainer(tt.ctx, createReq("web"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("CreateContainer = %v, %v; want an error wrapping %v", resp, err, tt.want)
			}
			if !strings.Contains(err.Error(), "native CreateContainer") {
				t.Errorf("error %q does not name the call", err)
			}
			if p.count != 0 || p.lastReq != nil {
				t.Error("the handler ran under a done context")
			}
			// Also through the transport directly.
			if _, err := r.Call(tt.ctx, abi.Method_METHOD_INFO, &abi.InfoRequest{}); !errors.Is(err, tt.want) {
				t.Errorf("Call(Info) = %v, want an error wrapping %v", err, tt.want)
			}
		})
	}
}

func TestConcurrentCallsAreSerialized(t *testing.T) {
	const goroutines, calls = 8, 50
	p := &counter{}
	_, c := newRunner(t, p)
	initClient(t, c)

	var wg sync.WaitGroup
	errs := make(chan error, goroutines*calls)
	for range goroutines {
		wg.Go(func() {
			for range calls {
				if _, err := c.CreateContainer(context.Background(), createReq("web")); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("CreateContainer: %v", err)
	}
	if p.count != goroutines*calls {
		t.Errorf("count = %d, want %d", p.count, goroutines*calls)
	}
}
