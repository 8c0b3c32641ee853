package v1_test

import (
	"context"
	"errors"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// fakeTransport answers every call with resp and err, and records what it saw.
type fakeTransport struct {
	resp    *abi.Response
	err     error
	calls   int
	method  abi.Method
	request abi.Message
	ctx     context.Context
}

func (f *fakeTransport) Call(ctx context.Context, method abi.Method, request abi.Message) (*abi.Response, error) {
	f.calls++
	f.ctx, f.method, f.request = ctx, method, request
	return f.resp, f.err
}

type ctxKey struct{}

// clientCall is one typed Client method, reduced to what the tests look at.
type clientCall struct {
	method abi.Method
	// good is a response of the right oneof.
	good *abi.Response
	// call invokes the Client method and reports whether it returned a non-nil result.
	call func(context.Context, *abi.Client) (bool, abi.Message, error)
}

func clientCalls() []clientCall {
	return []clientCall{
		{abi.Method_METHOD_INFO, &abi.Response{Result: &abi.Response_Info{Info: &abi.InfoResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.InfoRequest{HostAbiMinor: 3}
				r, err := c.Info(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_INIT, &abi.Response{Result: &abi.Response_Init{Init: &abi.InitResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.InitRequest{NodeName: "n"}
				r, err := c.Init(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_RECONFIGURE, &abi.Response{Result: &abi.Response_Reconfigure{Reconfigure: &abi.ReconfigureResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.ReconfigureRequest{}
				r, err := c.Reconfigure(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_DEVICES, &abi.Response{Result: &abi.Response_Devices{Devices: &abi.DevicesResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.DevicesRequest{}
				r, err := c.Devices(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_ALLOCATE, &abi.Response{Result: &abi.Response_Allocate{Allocate: &abi.AllocateResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.AllocateRequest{}
				r, err := c.Allocate(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_RELEASE, &abi.Response{Result: &abi.Response_Release{Release: &abi.ReleaseResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.ReleaseRequest{}
				r, err := c.Release(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_SYNCHRONIZE, &abi.Response{Result: &abi.Response_Synchronize{Synchronize: &abi.SynchronizeResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.SynchronizeRequest{}
				r, err := c.Synchronize(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_RUN_POD_SANDBOX, &abi.Response{Result: &abi.Response_RunPodSandbox{RunPodSandbox: &abi.RunPodSandboxResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.RunPodSandboxRequest{}
				r, err := c.RunPodSandbox(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_CREATE_CONTAINER, &abi.Response{Result: &abi.Response_CreateContainer{CreateContainer: &abi.CreateContainerResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.CreateContainerRequest{}
				r, err := c.CreateContainer(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_UPDATE_CONTAINER, &abi.Response{Result: &abi.Response_UpdateContainer{UpdateContainer: &abi.UpdateContainerResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.UpdateContainerRequest{}
				r, err := c.UpdateContainer(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_STOP_CONTAINER, &abi.Response{Result: &abi.Response_StopContainer{StopContainer: &abi.StopContainerResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.StopContainerRequest{}
				r, err := c.StopContainer(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_REMOVE_CONTAINER, &abi.Response{Result: &abi.Response_RemoveContainer{RemoveContainer: &abi.RemoveContainerResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.RemoveContainerRequest{}
				r, err := c.RemoveContainer(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_STOP_POD_SANDBOX, &abi.Response{Result: &abi.Response_StopPodSandbox{StopPodSandbox: &abi.StopPodSandboxResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.StopPodSandboxRequest{}
				r, err := c.StopPodSandbox(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_REMOVE_POD_SANDBOX, &abi.Response{Result: &abi.Response_RemovePodSandbox{RemovePodSandbox: &abi.RemovePodSandboxResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.RemovePodSandboxRequest{}
				r, err := c.RemovePodSandbox(ctx, req)
				return r != nil, req, err
			}},
		{abi.Method_METHOD_DUMP_STATE, &abi.Response{Result: &abi.Response_DumpState{DumpState: &abi.DumpStateResponse{}}},
			func(ctx context.Context, c *abi.Client) (bool, abi.Message, error) {
				req := &abi.DumpStateRequest{}
				r, err := c.DumpState(ctx, req)
				return r != nil, req, err
			}},
	}
}

func TestClientCallsTransport(t *testing.T) {
	for _, cc := range clientCalls() {
		t.Run(cc.method.Short(), func(t *testing.T) {
			ft := &fakeTransport{resp: cc.good}
			ctx := context.WithValue(context.Background(), ctxKey{}, "v")
			ok, req, err := cc.call(ctx, abi.NewClient(ft))
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !ok {
				t.Error("nil result with nil error")
			}
			if ft.calls != 1 {
				t.Errorf("transport called %d times, want 1", ft.calls)
			}
			if ft.method != cc.method {
				t.Errorf("transport got method %v, want %v", ft.method, cc.method)
			}
			if ft.request != req {
				t.Errorf("transport got request %v, want the one passed in", ft.request)
			}
			if ft.ctx.Value(ctxKey{}) != "v" {
				t.Error("transport did not get the caller's context")
			}
		})
	}
}

func TestClientPolicyError(t *testing.T) {
	for _, cc := range clientCalls() {
		t.Run(cc.method.Short(), func(t *testing.T) {
			ft := &fakeTransport{resp: &abi.Response{Result: &abi.Response_Error{Error: &abi.Error{
				Code: abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Field: "config", Message: "nope",
			}}}}
			ok, _, err := cc.call(context.Background(), abi.NewClient(ft))
			if ok {
				t.Error("non-nil result with an Error response")
			}
			pe, isPE := errors.AsType[*abi.PolicyError](err)
			if !isPE {
				t.Fatalf("error %v (%T) is not a *PolicyError", err, err)
			}
			want := abi.PolicyError{Method: cc.method, Code: abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Field: "config", Message: "nope"}
			if *pe != want {
				t.Errorf("PolicyError = %+v, want %+v", *pe, want)
			}
			if errors.Is(err, abi.ErrWrongResponse) {
				t.Error("a policy error must not wrap ErrWrongResponse")
			}
		})
	}
}

func TestClientWrongResponse(t *testing.T) {
	calls := clientCalls()
	for i, cc := range calls {
		// Answer with the next call's response.
		other := calls[(i+1)%len(calls)]
		t.Run(cc.method.Short(), func(t *testing.T) {
			ft := &fakeTransport{resp: other.good}
			ok, _, err := cc.call(context.Background(), abi.NewClient(ft))
			if ok {
				t.Error("non-nil result with the wrong response")
			}
			if !errors.Is(err, abi.ErrWrongResponse) {
				t.Fatalf("error %v does not wrap ErrWrongResponse", err)
			}
			if _, isPE := errors.AsType[*abi.PolicyError](err); isPE {
				t.Error("a wrong response must not be a *PolicyError")
			}
		})
	}
}

func TestClientEmptyResponse(t *testing.T) {
	tests := []struct {
		name string
		resp *abi.Response
	}{
		{"no result", &abi.Response{}},
		{"nil response", nil},
		{"right oneof holding nil", &abi.Response{Result: &abi.Response_Init{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := abi.NewClient(&fakeTransport{resp: tt.resp}).Init(context.Background(), &abi.InitRequest{})
			if r != nil {
				t.Errorf("result = %v, want nil", r)
			}
			if !errors.Is(err, abi.ErrWrongResponse) {
				t.Errorf("error %v does not wrap ErrWrongResponse", err)
			}
		})
	}
}

func TestClientTransportError(t *testing.T) {
	sentinel := errors.New("instance trapped")
	for _, cc := range clientCalls() {
		t.Run(cc.method.Short(), func(t *testing.T) {
			// A response alongside the error must be ignored.
			ft := &fakeTransport{resp: cc.good, err: sentinel}
			ok, _, err := cc.call(context.Background(), abi.NewClient(ft))
			if ok {
				t.Error("non-nil result with a transport error")
			}
			if err != sentinel {
				t.Errorf("error = %v, want the transport's error as is", err)
			}
		})
	}
}

func TestClientTransport(t *testing.T) {
	ft := &fakeTransport{}
	if got := abi.NewClient(ft).Transport(); got != ft {
		t.Errorf("Transport() = %v, want the transport passed to NewClient", got)
	}
}
