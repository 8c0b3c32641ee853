package v1

import (
	"context"
	"errors"
	"fmt"
)

// Message is a request as the ABI's generated code (vtprotobuf) implements it:
// a transport sizes it and marshals it straight into the guest's request buffer.
type Message interface {
	SizeVT() int
	MarshalToSizedBufferVT(buf []byte) (int, error)
}

// Transport carries one call to a policy and returns its decoded Response. The
// host's Wasm runtime and the Go SDK's native runner both implement it, through
// the same encode and decode path.
type Transport interface {
	Call(ctx context.Context, method Method, request Message) (*Response, error)
}

// ErrWrongResponse means a policy answered a call with another call's response.
var ErrWrongResponse = errors.New("policy answered with the wrong response type")

// Client is a typed view of a Transport: one method per call, a policy's Error
// turned into a *PolicyError, grouped updates (ContainerUpdate.also_container_ids)
// expanded into one update per container, so callers only ever see that form,
// unless the client was made with KeepGroups. A malformed group refuses the
// whole answer with an *AnswerError.
type Client struct {
	t          Transport
	keepGroups bool
}

// ClientOption changes how a Client reads answers.
type ClientOption func(*Client)

// KeepGroups makes a Client hand grouped updates on as the policy sent them:
// it still refuses a malformed group (CheckGroups), but does not expand it.
// The caller must then read every update per container, through EachContainer
// (or ExpandUpdates where it needs a flat list). The agent reads answers so,
// expanding only where one entry per container is needed (NRI's update list);
// the default, expanding, suits callers that look at updates one by one.
func KeepGroups() ClientOption {
	return func(c *Client) { c.keepGroups = true }
}

// NewClient returns a Client over t; by default it expands grouped updates.
func NewClient(t Transport, opts ...ClientOption) *Client {
	c := &Client{t: t}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Transport returns the transport the client calls through.
func (c *Client) Transport() Transport { return c.t }

func (c *Client) Info(ctx context.Context, r *InfoRequest) (*InfoResponse, error) {
	return call(ctx, c, Method_METHOD_INFO, r, (*Response).GetInfo)
}

// Init initializes the policy. A request that leaves HostAbiMinor 0 gets
// ABIMinor: this client speaks every addition of v1 (it expands grouped
// updates, or checks them for a caller that reads them per container), so the
// policy may use them.
func (c *Client) Init(ctx context.Context, r *InitRequest) (*InitResponse, error) {
	if r.HostAbiMinor == 0 {
		r.HostAbiMinor = ABIMinor
	}
	return call(ctx, c, Method_METHOD_INIT, r, (*Response).GetInit)
}

func (c *Client) Reconfigure(ctx context.Context, r *ReconfigureRequest) (*ReconfigureResponse, error) {
	return call(ctx, c, Method_METHOD_RECONFIGURE, r, (*Response).GetReconfigure)
}

func (c *Client) Devices(ctx context.Context, r *DevicesRequest) (*DevicesResponse, error) {
	return call(ctx, c, Method_METHOD_DEVICES, r, (*Response).GetDevices)
}

func (c *Client) Allocate(ctx context.Context, r *AllocateRequest) (*AllocateResponse, error) {
	return call(ctx, c, Method_METHOD_ALLOCATE, r, (*Response).GetAllocate)
}

func (c *Client) Release(ctx context.Context, r *ReleaseRequest) (*ReleaseResponse, error) {
	return call(ctx, c, Method_METHOD_RELEASE, r, (*Response).GetRelease)
}

func (c *Client) Synchronize(ctx context.Context, r *SynchronizeRequest) (*SynchronizeResponse, error) {
	return call(ctx, c, Method_METHOD_SYNCHRONIZE, r, (*Response).GetSynchronize)
}

func (c *Client) RunPodSandbox(ctx context.Context, r *RunPodSandboxRequest) (*RunPodSandboxResponse, error) {
	return call(ctx, c, Method_METHOD_RUN_POD_SANDBOX, r, (*Response).GetRunPodSandbox)
}

func (c *Client) CreateContainer(ctx context.Context, r *CreateContainerRequest) (*CreateContainerResponse, error) {
	return call(ctx, c, Method_METHOD_CREATE_CONTAINER, r, (*Response).GetCreateContainer)
}

func (c *Client) UpdateContainer(ctx context.Context, r *UpdateContainerRequest) (*UpdateContainerResponse, error) {
	return call(ctx, c, Method_METHOD_UPDATE_CONTAINER, r, (*Response).GetUpdateContainer)
}

func (c *Client) StopContainer(ctx context.Context, r *StopContainerRequest) (*StopContainerResponse, error) {
	return call(ctx, c, Method_METHOD_STOP_CONTAINER, r, (*Response).GetStopContainer)
}

func (c *Client) RemoveContainer(ctx context.Context, r *RemoveContainerRequest) (*RemoveContainerResponse, error) {
	return call(ctx, c, Method_METHOD_REMOVE_CONTAINER, r, (*Response).GetRemoveContainer)
}

func (c *Client) StopPodSandbox(ctx context.Context, r *StopPodSandboxRequest) (*StopPodSandboxResponse, error) {
	return call(ctx, c, Method_METHOD_STOP_POD_SANDBOX, r, (*Response).GetStopPodSandbox)
}

func (c *Client) RemovePodSandbox(ctx context.Context, r *RemovePodSandboxRequest) (*RemovePodSandboxResponse, error) {
	return call(ctx, c, Method_METHOD_REMOVE_POD_SANDBOX, r, (*Response).GetRemovePodSandbox)
}

func (c *Client) DumpState(ctx context.Context, r *DumpStateRequest) (*DumpStateResponse, error) {
	return call(ctx, c, Method_METHOD_DUMP_STATE, r, (*Response).GetDumpState)
}

// Pools asks for the policy's pools (since ABI v1.2). Ask only a policy that
// lists Method_METHOD_POOLS in its capabilities (HasCapability): an older one
// answers ERROR_CODE_UNIMPLEMENTED.
func (c *Client) Pools(ctx context.Context, r *PoolsRequest) (*PoolsResponse, error) {
	return call(ctx, c, Method_METHOD_POOLS, r, (*Response).GetPools)
}

// call sends one request through c and picks the expected result out of the
// Response.
func call[T any](ctx context.Context, c *Client, m Method, req Message, pick func(*Response) *T) (*T, error) {
	resp, err := c.t.Call(ctx, m, req)
	if err != nil {
		return nil, err
	}
	if e := resp.GetError(); e != nil {
		return nil, &PolicyError{Method: m, Code: e.Code, Field: e.Field, Message: e.Message}
	}
	v := pick(resp)
	if v == nil {
		return nil, fmt.Errorf("%s: %w (%T)", m.Short(), ErrWrongResponse, resp.GetResult())
	}
	if us := resp.UpdatesField(); us != nil {
		if err := c.readUpdates(us); err != nil {
			var ae *AnswerError
			if errors.As(err, &ae) {
				ae.Method = m
			}
			return nil, err
		}
	}
	return v, nil
}

// readUpdates checks an answer's updates and, unless the client keeps
// groups, expands them in place.
func (c *Client) readUpdates(us *[]*ContainerUpdate) error {
	if c.keepGroups {
		return CheckGroups(*us)
	}
	expanded, err := ExpandUpdates(*us)
	if err != nil {
		return err
	}
	*us = expanded
	return nil
}
