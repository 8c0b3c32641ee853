package policy

import (
	"errors"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// handler decodes one request, calls the policy and wraps its answer.
type handler func(request []byte) *abi.Response

// Dispatcher routes encoded requests to a policy's handlers. The Wasm exports and
// the native runner both drive a policy through it. It is not safe for concurrent
// use; the host serializes calls on an instance.
type Dispatcher struct {
	policy      Policy
	metadata    *abi.PolicyMetadata
	handlers    map[abi.Method]handler
	initialized bool
	// hostMinor is the last Init's host_abi_minor: which additions of v1 the
	// host reads in answers.
	hostMinor uint32
}

// NewDispatcher validates p's Description and binds its handlers.
func NewDispatcher(p Policy) (*Dispatcher, error) {
	desc := p.Describe()
	if err := desc.Validate(); err != nil {
		return nil, err
	}
	d := &Dispatcher{policy: p, handlers: map[abi.Method]handler{}}
	d.metadata = &abi.PolicyMetadata{
		Name:         desc.Name,
		Version:      desc.Version,
		Description:  desc.Summary,
		AbiMajor:     abi.ABIMajor,
		AbiMinor:     abi.ABIMinor,
		Sdk:          SDKName,
		ConfigFormat: configFormat,
	}
	d.bind(abi.Method_METHOD_INFO, true, serve(newOf[abi.InfoRequest], func(r *abi.InfoRequest, _ []byte) (*abi.InfoResponse, error) { return d.info(r) }, wrapInfo))
	d.bindInit()
	bindCall(d, abi.Method_METHOD_RECONFIGURE, newOf[abi.ReconfigureRequest], Reconfigurer.Reconfigure, wrapReconfigure)
	bindCall(d, abi.Method_METHOD_DEVICES, newOf[abi.DevicesRequest], DeviceProvider.Devices, wrapDevices)
	bindCall(d, abi.Method_METHOD_ALLOCATE, newOf[abi.AllocateRequest], Allocator.Allocate, wrapAllocate)
	bindCall(d, abi.Method_METHOD_RELEASE, newOf[abi.ReleaseRequest], Releaser.Release, wrapRelease)
	bindCall(d, abi.Method_METHOD_SYNCHRONIZE, newOf[abi.SynchronizeRequest], Synchronizer.Synchronize, wrapSynchronize)
	bindCall(d, abi.Method_METHOD_RUN_POD_SANDBOX, newOf[abi.RunPodSandboxRequest], PodSandboxRunner.RunPodSandbox, wrapRunPodSandbox)
	if impl, ok := p.(EncodedContainerCreator); ok {
		d.bind(abi.Method_METHOD_CREATE_CONTAINER, true, serve(newOf[abi.CreateContainerRequest], impl.CreateContainerEncoded, wrapCreateContainer))
	} else {
		bindCall(d, abi.Method_METHOD_CREATE_CONTAINER, newOf[abi.CreateContainerRequest], ContainerCreator.CreateContainer, wrapCreateContainer)
	}
	bindCall(d, abi.Method_METHOD_UPDATE_CONTAINER, newOf[abi.UpdateContainerRequest], ContainerUpdater.UpdateContainer, wrapUpdateContainer)
	bindCall(d, abi.Method_METHOD_STOP_CONTAINER, newOf[abi.StopContainerRequest], ContainerStopper.StopContainer, wrapStopContainer)
	bindCall(d, abi.Method_METHOD_REMOVE_CONTAINER, newOf[abi.RemoveContainerRequest], ContainerRemover.RemoveContainer, wrapRemoveContainer)
	bindCall(d, abi.Method_METHOD_STOP_POD_SANDBOX, newOf[abi.StopPodSandboxRequest], PodSandboxStopper.StopPodSandbox, wrapStopPodSandbox)
	bindCall(d, abi.Method_METHOD_REMOVE_POD_SANDBOX, newOf[abi.RemovePodSandboxRequest], PodSandboxRemover.RemovePodSandbox, wrapRemovePodSandbox)
	bindCall(d, abi.Method_METHOD_DUMP_STATE, newOf[abi.DumpStateRequest], StateDumper.DumpState, wrapDumpState)
	bindCall(d, abi.Method_METHOD_POOLS, newOf[abi.PoolsRequest], PoolReporter.Pools, wrapPools)
	return d, nil
}

// Metadata is what Info answers: the Description plus the ABI version, the
// methods the policy implements and the SDK.
func (d *Dispatcher) Metadata() *abi.PolicyMetadata { return d.metadata.CloneVT() }

// Dispatch serves one call. It never panics on bad input: an unknown method
// answers ERROR_CODE_UNIMPLEMENTED, an undecodable request
// ERROR_CODE_INVALID_ARGUMENT. A panic in the policy itself propagates.
//
// The decoded request aliases request (vtprotobuf's UnmarshalVTUnsafe: strings
// and bytes point into it instead of being copied one by one, which made a 1 KiB
// call in Wasm 30% faster), so request must not be changed or reused afterwards:
// policies keep strings from their requests.
func (d *Dispatcher) Dispatch(method abi.Method, request []byte) *abi.Response {
	h, ok := d.handlers[method]
	if !ok {
		return errorResponse(abi.Errorf(abi.ErrorCode_ERROR_CODE_UNIMPLEMENTED, "",
			"method %d is not part of ABI v%d.%d", int32(method), abi.ABIMajor, abi.ABIMinor))
	}
	if !d.initialized && method != abi.Method_METHOD_INFO && method != abi.Method_METHOD_INIT {
		return errorResponse(abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "",
			"%s before Init", method.Short()))
	}
	resp := h(request)
	if method == abi.Method_METHOD_INIT && resp.GetError() == nil {
		d.initialized = true
	}
	if us := resp.UpdatesField(); us != nil && len(*us) > 0 {
		return d.shapeUpdates(resp, us)
	}
	return resp
}

// HostABIMinor is the ABI minor version the host announced in the last Init
// (InitRequest.host_abi_minor): 0 for a v1.0 host, or before Init.
func (d *Dispatcher) HostABIMinor() uint32 { return d.hostMinor }

// bindInit binds Init to the policy's Initializer, or to an empty answer, and
// records the host's ABI minor either way.
func (d *Dispatcher) bindInit() {
	impl, ok := d.policy.(Initializer)
	d.bind(abi.Method_METHOD_INIT, ok, serve(newOf[abi.InitRequest], func(r *abi.InitRequest, _ []byte) (*abi.InitResponse, error) {
		d.hostMinor = r.GetHostAbiMinor()
		if !ok {
			return &abi.InitResponse{}, nil
		}
		return impl.Init(r)
	}, wrapInit))
}

// shapeUpdates puts an answer's updates in the form the host reads. A host
// that expands grouped updates (ABI v1.1) gets every run of consecutive
// updates making the same change folded into one (abi.FoldUpdates), so a
// policy that moves a pool of 200 containers sends its cpuset once; an older
// host gets every grouped update the policy built itself expanded into one
// update per container (abi.ExpandUpdates). The container-by-container
// result is the same either way. A malformed group is the policy's bug: the
// answer becomes ERROR_CODE_INTERNAL naming the field.
func (d *Dispatcher) shapeUpdates(resp *abi.Response, us *[]*abi.ContainerUpdate) *abi.Response {
	if d.hostMinor >= abi.MinorGroupedUpdates {
		*us = abi.FoldUpdates(*us)
		return resp
	}
	expanded, err := abi.ExpandUpdates(*us)
	if err != nil {
		var ae *abi.AnswerError
		errors.As(err, &ae)
		return errorResponse(abi.Errorf(abi.ErrorCode_ERROR_CODE_INTERNAL, ae.Field, "%s", ae.Message))
	}
	*us = expanded
	return resp
}

func (d *Dispatcher) info(*abi.InfoRequest) (*abi.InfoResponse, error) {
	return &abi.InfoResponse{Metadata: d.Metadata()}, nil
}

// bind is not inlined: bindCall's fifteen instances would each carry a copy.
//
//go:noinline
func (d *Dispatcher) bind(m abi.Method, implemented bool, h handler) {
	d.handlers[m] = h
	if implemented && m != abi.Method_METHOD_INFO {
		d.metadata.Capabilities = append(d.metadata.Capabilities, m)
	}
}

// bindCall binds method m to the policy's handler interface I when the policy
// implements it, and to an empty answer otherwise.
//
// Its type parameters other than I are pointers, one shape for the compiler:
// serve is one function in the module for all fifteen methods, and
// bindCall's instances (one per interface) stay small. Instances over the
// request and response structs were each a copy of the code with a
// kilobyte-long name (docs/performance.md, "The guest codec, one direction
// per message").
func bindCall[I any, PReq request, PResp any](
	d *Dispatcher, m abi.Method, newReq func() PReq, call func(I, PReq) (PResp, error), wrap func(PResp) *abi.Response,
) {
	impl, ok := d.policy.(I)
	answer := func(PReq, []byte) (resp PResp, err error) { return resp, nil } // nil: wrap answers an empty message
	if ok {
		answer = func(r PReq, _ []byte) (PResp, error) { return call(impl, r) }
	}
	d.bind(m, ok, serve(newReq, answer, wrap))
}

// request is a generated request message (a pointer).
type request interface {
	UnmarshalVTUnsafe([]byte) error
}

// newOf is a new message, for serve.
func newOf[T any]() *T { return new(T) }

// serve decodes a request with a new message from newReq, calls call with
// it and the bytes it was decoded from, and puts its answer into the
// envelope with wrap, which answers an empty message for nil.
//
// Not inlined: inlined into each bindCall instance its closure would be a
// copy per call again.
//
//go:noinline
func serve[PReq request, PResp any](newReq func() PReq, call func(PReq, []byte) (PResp, error), wrap func(PResp) *abi.Response) handler {
	return func(raw []byte) *abi.Response {
		req := newReq()
		if err := req.UnmarshalVTUnsafe(raw); err != nil {
			return decodeError(err)
		}
		resp, err := call(req, raw)
		if err != nil {
			return errorResponse(err)
		}
		return wrap(resp)
	}
}

// decodeError answers a request that does not decode.
func decodeError(err error) *abi.Response {
	return errorResponse(abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "", "decode request: %v", err))
}

func errorResponse(err error) *abi.Response {
	return &abi.Response{Result: &abi.Response_Error{Error: abi.ToProto(err)}}
}
