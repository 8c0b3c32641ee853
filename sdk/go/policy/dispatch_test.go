// The host's codec only (google.golang.org/protobuf): these tests name a
// Response's oneof field through protobuf reflection, which a Go guest's
// reflection-free codec (GOOS=wasip1) does not have.

//go:build !wasip1

package policy_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// testPolicy implements Init and CreateContainer only. Init fails while
// failInit is set; CreateContainer answers with createErr or createResp.
type testPolicy struct {
	desc       policy.Description
	failInit   bool
	inits      int
	created    []*abi.CreateContainerRequest
	createResp *abi.CreateContainerResponse
	createErr  error
}

func newTestPolicy() *testPolicy {
	return &testPolicy{desc: policy.Description{Name: "test-policy", Version: "1.2.3", Summary: "a test policy"}}
}

func (p *testPolicy) Describe() policy.Description { return p.desc }

func (p *testPolicy) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	p.inits++
	if p.failInit {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "config", "bad config %q", r.Config)
	}
	return &abi.InitResponse{WantsDra: string(r.Config) == "dra"}, nil
}

func (p *testPolicy) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	p.created = append(p.created, r)
	return p.createResp, p.createErr
}

// bare implements no handler interface at all.
type bare struct{}

func (bare) Describe() policy.Description { return policy.Description{Name: "bare", Version: "0.0.1"} }

type marshaler interface{ MarshalVT() ([]byte, error) }

func encode(t *testing.T, m marshaler) []byte {
	t.Helper()
	b, err := m.MarshalVT()
	if err != nil {
		t.Fatalf("encode %T: %v", m, err)
	}
	return b
}

func newDispatcher(t *testing.T, p policy.Policy) *policy.Dispatcher {
	t.Helper()
	d, err := policy.NewDispatcher(p)
	if err != nil {
		t.Fatalf("NewDispatcher: %v", err)
	}
	return d
}

func initialize(t *testing.T, d *policy.Dispatcher) {
	t.Helper()
	resp := d.Dispatch(abi.Method_METHOD_INIT, encode(t, &abi.InitRequest{}))
	if resp.GetInit() == nil {
		t.Fatalf("Init answered %v, want an InitResponse", resp)
	}
}

func wantError(t *testing.T, resp *abi.Response, code abi.ErrorCode, field, msgPart string) {
	t.Helper()
	e := resp.GetError()
	if e == nil {
		t.Fatalf("response %v, want an Error", resp)
	}
	if e.Code != code {
		t.Errorf("error code = %v, want %v (message %q)", e.Code, code, e.Message)
	}
	if e.Field != field {
		t.Errorf("error field = %q, want %q", e.Field, field)
	}
	if !strings.Contains(e.Message, msgPart) {
		t.Errorf("error message = %q, want it to contain %q", e.Message, msgPart)
	}
}

// resultField names the oneof field a Response carries, as the protobuf
// reflection API names it ("create_container").
func resultField(resp *abi.Response) string {
	if resp == nil {
		return "<nil response>"
	}
	fd := resp.ProtoReflect().WhichOneof(resp.ProtoReflect().Descriptor().Oneofs().ByName("result"))
	if fd == nil {
		return "<none>"
	}
	return string(fd.Name())
}

// methodField is the Response oneof field each method answers in: the field
// numbers match the Method numbers.
func methodField(t *testing.T, m abi.Method) string {
	t.Helper()
	fd := (&abi.Response{}).ProtoReflect().Descriptor().Fields().ByNumber(protoreflect.FieldNumber(m))
	if fd == nil {
		t.Fatalf("no Response field for %v", m)
	}
	return string(fd.Name())
}

// emptyAnswerSize is the size of a Response carrying m's empty answer: the
// field's tag (two bytes from field 16 on) and a zero length.
func emptyAnswerSize(m abi.Method) int {
	return protowire.SizeTag(protowire.Number(m)) + 1
}

func allCalls() []abi.Method {
	var ms []abi.Method
	for m := abi.Method_METHOD_INFO; m <= abi.Method_METHOD_POOLS; m++ {
		ms = append(ms, m)
	}
	return ms
}

func TestNewDispatcherInvalidDescription(t *testing.T) {
	tests := []struct {
		name string
		desc policy.Description
	}{
		{"uppercase name", policy.Description{Name: "Bad", Version: "1"}},
		{"empty name", policy.Description{Version: "1"}},
		{"empty version", policy.Description{Name: "good"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPolicy()
			p.desc = tt.desc
			d, err := policy.NewDispatcher(p)
			if err == nil {
				t.Fatal("NewDispatcher succeeded on an invalid description")
			}
			if d != nil {
				t.Errorf("NewDispatcher returned a dispatcher with error %v", err)
			}
			if want := tt.desc.Validate(); want == nil || err.Error() != want.Error() {
				t.Errorf("error = %v, want Validate's %v", err, want)
			}
		})
	}
}

func TestInfo(t *testing.T) {
	tests := []struct {
		name   string
		policy policy.Policy
		want   *abi.PolicyMetadata
	}{
		{
			name:   "init and create container",
			policy: newTestPolicy(),
			want: &abi.PolicyMetadata{
				Name: "test-policy", Version: "1.2.3", Description: "a test policy",
				AbiMajor: abi.ABIMajor, AbiMinor: abi.ABIMinor, Sdk: policy.SDKName,
				Capabilities: []abi.Method{abi.Method_METHOD_INIT, abi.Method_METHOD_CREATE_CONTAINER},
			},
		},
		{
			name:   "no handlers",
			policy: bare{},
			want: &abi.PolicyMetadata{
				Name: "bare", Version: "0.0.1",
				AbiMajor: abi.ABIMajor, AbiMinor: abi.ABIMinor, Sdk: policy.SDKName,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDispatcher(t, tt.policy)
			// Info works before Init.
			resp := d.Dispatch(abi.Method_METHOD_INFO, encode(t, &abi.InfoRequest{HostAbiMinor: 7}))
			info := resp.GetInfo()
			if info == nil {
				t.Fatalf("Info answered %v, want an InfoResponse", resp)
			}
			if !info.GetMetadata().EqualVT(tt.want) {
				t.Errorf("Info metadata = %v, want %v", info.GetMetadata(), tt.want)
			}
			if got := d.Metadata(); !got.EqualVT(tt.want) {
				t.Errorf("Metadata() = %v, want %v", got, tt.want)
			}
		})
	}
}

// fullPolicy implements every handler interface.
type fullPolicy struct{ bare }

func (fullPolicy) Init(*abi.InitRequest) (*abi.InitResponse, error) { return nil, nil }
func (fullPolicy) Reconfigure(*abi.ReconfigureRequest) (*abi.ReconfigureResponse, error) {
	return nil, nil
}
func (fullPolicy) Devices(*abi.DevicesRequest) (*abi.DevicesResponse, error)    { return nil, nil }
func (fullPolicy) Allocate(*abi.AllocateRequest) (*abi.AllocateResponse, error) { return nil, nil }
func (fullPolicy) Release(*abi.ReleaseRequest) (*abi.ReleaseResponse, error)    { return nil, nil }
func (fullPolicy) Synchronize(*abi.SynchronizeRequest) (*abi.SynchronizeResponse, error) {
	return nil, nil
}
func (fullPolicy) RunPodSandbox(*abi.RunPodSandboxRequest) (*abi.RunPodSandboxResponse, error) {
	return nil, nil
}
func (fullPolicy) CreateContainer(*abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	return nil, nil
}
func (fullPolicy) UpdateContainer(*abi.UpdateContainerRequest) (*abi.UpdateContainerResponse, error) {
	return nil, nil
}
func (fullPolicy) StopContainer(*abi.StopContainerRequest) (*abi.StopContainerResponse, error) {
	return nil, nil
}
func (fullPolicy) RemoveContainer(*abi.RemoveContainerRequest) (*abi.RemoveContainerResponse, error) {
	return nil, nil
}
func (fullPolicy) StopPodSandbox(*abi.StopPodSandboxRequest) (*abi.StopPodSandboxResponse, error) {
	return nil, nil
}
func (fullPolicy) RemovePodSandbox(*abi.RemovePodSandboxRequest) (*abi.RemovePodSandboxResponse, error) {
	return nil, nil
}
func (fullPolicy) DumpState(*abi.DumpStateRequest) (*abi.DumpStateResponse, error) {
	return nil, nil
}
func (fullPolicy) Pools(*abi.PoolsRequest) (*abi.PoolsResponse, error) {
	return nil, nil
}

func TestCapabilitiesFullPolicy(t *testing.T) {
	got := newDispatcher(t, fullPolicy{}).Metadata().GetCapabilities()
	want := allCalls()[1:] // every call but Info, in method order
	if !slices.Equal(got, want) {
		t.Errorf("capabilities = %v, want %v", got, want)
	}
}

func TestMetadataIsACopy(t *testing.T) {
	d := newDispatcher(t, newTestPolicy())
	md := d.Metadata()
	md.Name = "mutated"
	md.Capabilities[0] = abi.Method_METHOD_DUMP_STATE
	md.Capabilities = append(md.Capabilities, abi.Method_METHOD_DEVICES)

	info := d.Dispatch(abi.Method_METHOD_INFO, nil).GetInfo().GetMetadata()
	if info.GetName() != "test-policy" {
		t.Errorf("Info name = %q after mutating Metadata()", info.GetName())
	}
	want := []abi.Method{abi.Method_METHOD_INIT, abi.Method_METHOD_CREATE_CONTAINER}
	if !slices.Equal(info.GetCapabilities(), want) {
		t.Errorf("Info capabilities = %v after mutating Metadata(), want %v", info.GetCapabilities(), want)
	}
	if again := d.Metadata(); again.GetName() != "test-policy" || !slices.Equal(again.GetCapabilities(), want) {
		t.Errorf("Metadata() = %v after mutating an earlier copy", again)
	}

	// Mutating what Info answered does not change the next Info either.
	info.Name = "mutated too"
	if next := d.Dispatch(abi.Method_METHOD_INFO, nil).GetInfo().GetMetadata(); next.GetName() != "test-policy" {
		t.Errorf("Info name = %q after mutating an earlier Info answer", next.GetName())
	}
}

func TestCallsBeforeInit(t *testing.T) {
	for _, m := range allCalls() {
		if m == abi.Method_METHOD_INFO || m == abi.Method_METHOD_INIT {
			continue
		}
		t.Run(m.Short(), func(t *testing.T) {
			p := newTestPolicy()
			d := newDispatcher(t, p)
			resp := d.Dispatch(m, nil)
			wantError(t, resp, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "", m.Short()+" before Init")
			if len(p.created) != 0 {
				t.Error("the handler ran before Init")
			}
		})
	}
}

func TestInitGate(t *testing.T) {
	p := newTestPolicy()
	p.failInit = true
	d := newDispatcher(t, p)

	resp := d.Dispatch(abi.Method_METHOD_INIT, encode(t, &abi.InitRequest{Config: []byte("x")}))
	wantError(t, resp, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "config", `bad config "x"`)

	create := encode(t, &abi.CreateContainerRequest{Container: &abi.Container{Name: "c"}})
	resp = d.Dispatch(abi.Method_METHOD_CREATE_CONTAINER, create)
	wantError(t, resp, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "", "CreateContainer before Init")
	if len(p.created) != 0 {
		t.Fatal("CreateContainer ran after a failed Init")
	}

	// Info still works after a failed Init.
	if d.Dispatch(abi.Method_METHOD_INFO, nil).GetInfo() == nil {
		t.Error("Info failed after a failed Init")
	}

	p.failInit = false
	resp = d.Dispatch(abi.Method_METHOD_INIT, encode(t, &abi.InitRequest{Config: []byte("dra")}))
	if !resp.GetInit().GetWantsDra() {
		t.Fatalf("Init answered %v, want wants_dra", resp)
	}
	resp = d.Dispatch(abi.Method_METHOD_CREATE_CONTAINER, create)
	if resp.GetCreateContainer() == nil {
		t.Fatalf("CreateContainer after Init answered %v", resp)
	}
	if len(p.created) != 1 || p.created[0].GetContainer().GetName() != "c" {
		t.Errorf("CreateContainer saw %v, want one request for container c", p.created)
	}
	if p.inits != 2 {
		t.Errorf("Init ran %d times, want 2", p.inits)
	}

	// A later failed Init does not take back the first success.
	p.failInit = true
	wantError(t, d.Dispatch(abi.Method_METHOD_INIT, nil), abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "config", "bad config")
	if resp := d.Dispatch(abi.Method_METHOD_CREATE_CONTAINER, create); resp.GetCreateContainer() == nil {
		t.Errorf("CreateContainer after a second, failed Init answered %v", resp)
	}
}

func TestPolicyWithoutInitializer(t *testing.T) {
	// A policy without Init still needs the Init call before anything else.
	d := newDispatcher(t, bare{})
	wantError(t, d.Dispatch(abi.Method_METHOD_DEVICES, nil), abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "", "Devices before Init")
	if resp := d.Dispatch(abi.Method_METHOD_INIT, nil); resp.GetInit() == nil {
		t.Fatalf("Init answered %v, want an empty InitResponse", resp)
	}
	if resp := d.Dispatch(abi.Method_METHOD_DEVICES, nil); resp.GetDevices() == nil {
		t.Errorf("Devices answered %v, want an empty DevicesResponse", resp)
	}
}

func TestUnknownMethod(t *testing.T) {
	for _, m := range []abi.Method{abi.Method_METHOD_UNSPECIFIED, abi.Method(17), abi.Method(99), abi.Method(-1)} {
		t.Run(fmt.Sprint(int32(m)), func(t *testing.T) {
			for _, initialized := range []bool{false, true} {
				d := newDispatcher(t, newTestPolicy())
				if initialized {
					initialize(t, d)
				}
				wantError(t, d.Dispatch(m, nil), abi.ErrorCode_ERROR_CODE_UNIMPLEMENTED, "",
					fmt.Sprintf("method %d is not part of ABI v%d.%d", int32(m), abi.ABIMajor, abi.ABIMinor))
			}
		})
	}
}

func TestUndecodableRequest(t *testing.T) {
	bad := []byte{0x0a, 0xff}
	for _, m := range allCalls() {
		t.Run(m.Short(), func(t *testing.T) {
			d := newDispatcher(t, newTestPolicy())
			if m != abi.Method_METHOD_INFO && m != abi.Method_METHOD_INIT {
				initialize(t, d)
			}
			wantError(t, d.Dispatch(m, bad), abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "", "decode request")
		})
	}
}

func TestUndecodableInitDoesNotInitialize(t *testing.T) {
	d := newDispatcher(t, newTestPolicy())
	wantError(t, d.Dispatch(abi.Method_METHOD_INIT, []byte{0x0a, 0xff}), abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "", "decode request")
	wantError(t, d.Dispatch(abi.Method_METHOD_CREATE_CONTAINER, nil), abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "", "before Init")
}

func TestHandlerErrors(t *testing.T) {
	pe := abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources", "no %s left", "cpus")
	tests := []struct {
		name      string
		err       error
		wantCode  abi.ErrorCode
		wantField string
		wantMsg   string
	}{
		{"policy error", pe, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources", "no cpus left"},
		{"wrapped policy error", fmt.Errorf("placing: %w", pe), abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources", "no cpus left"},
		{"not found", abi.Errorf(abi.ErrorCode_ERROR_CODE_NOT_FOUND, "", "who?"), abi.ErrorCode_ERROR_CODE_NOT_FOUND, "", "who?"},
		{"plain error", errors.New("disk on fire"), abi.ErrorCode_ERROR_CODE_INTERNAL, "", "disk on fire"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPolicy()
			// A response alongside an error is dropped.
			p.createResp = &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{CpusetCpus: "0"}}
			p.createErr = tt.err
			d := newDispatcher(t, p)
			initialize(t, d)
			resp := d.Dispatch(abi.Method_METHOD_CREATE_CONTAINER, nil)
			wantError(t, resp, tt.wantCode, tt.wantField, tt.wantMsg)
			if got := resp.GetError().GetMessage(); got != tt.wantMsg {
				t.Errorf("message = %q, want %q", got, tt.wantMsg)
			}
		})
	}
}

func TestHandlerResponse(t *testing.T) {
	p := newTestPolicy()
	p.createResp = &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{CpusetCpus: "0-3"}}
	d := newDispatcher(t, p)
	initialize(t, d)
	req := &abi.CreateContainerRequest{
		Pod:       &abi.PodSandbox{Name: "pod"},
		Container: &abi.Container{Name: "ctr", Env: []*abi.KeyValue{{Key: "A", Value: "1"}}},
	}
	resp := d.Dispatch(abi.Method_METHOD_CREATE_CONTAINER, encode(t, req))
	if got := resp.GetCreateContainer(); !got.EqualVT(p.createResp) {
		t.Errorf("CreateContainer answered %v, want %v", resp, p.createResp)
	}
	if len(p.created) != 1 || !p.created[0].EqualVT(req) {
		t.Errorf("handler saw %v, want %v", p.created, req)
	}
}

func TestNilHandlerResponse(t *testing.T) {
	d := newDispatcher(t, fullPolicy{})
	initialize(t, d)
	for _, m := range allCalls()[1:] {
		t.Run(m.Short(), func(t *testing.T) {
			resp := d.Dispatch(m, nil)
			if got, want := resultField(resp), methodField(t, m); got != want {
				t.Fatalf("answer carries %s, want %s (%v)", got, want, resp)
			}
			if resp.SizeVT() != emptyAnswerSize(m) {
				t.Errorf("answer %v is not an empty %s", resp, m.Short())
			}
		})
	}
}

func TestUnimplementedMethodsAnswerEmpty(t *testing.T) {
	p := newTestPolicy()
	d := newDispatcher(t, p)
	initialize(t, d)
	for _, m := range allCalls()[2:] {
		if m == abi.Method_METHOD_CREATE_CONTAINER {
			continue
		}
		t.Run(m.Short(), func(t *testing.T) {
			// A valid but non-empty request (a PodSandbox in field 1, or an
			// unknown field) must not matter.
			resp := d.Dispatch(m, []byte{0x0a, 0x00})
			if got, want := resultField(resp), methodField(t, m); got != want {
				t.Fatalf("answer carries %s, want %s (%v)", got, want, resp)
			}
			if resp.SizeVT() != emptyAnswerSize(m) {
				t.Errorf("answer %v is not an empty %s", resp, m.Short())
			}
		})
	}
	if len(p.created) != 0 {
		t.Error("CreateContainer ran for another method")
	}
}

func TestRegister(t *testing.T) {
	// Registered is global; this is the only test that touches it.
	policy.Register(newTestPolicy())
	d := policy.Registered()
	if d == nil {
		t.Fatal("Registered() = nil after Register")
	}
	if got := d.Metadata().GetName(); got != "test-policy" {
		t.Errorf("registered policy is %q, want test-policy", got)
	}

	before := policy.Registered()
	defer func() {
		if r := recover(); r == nil {
			t.Error("Register did not panic on an invalid description")
		}
		if policy.Registered() != before {
			t.Error("a failed Register replaced the registered dispatcher")
		}
	}()
	p := newTestPolicy()
	p.desc.Name = "Invalid"
	policy.Register(p)
}

// encodedCreator implements both create interfaces: the dispatcher must
// call the encoded one.
type encodedCreator struct {
	testPolicy
	encoded [][]byte
}

func (p *encodedCreator) CreateContainerEncoded(r *abi.CreateContainerRequest, encoded []byte) (*abi.CreateContainerResponse, error) {
	p.encoded = append(p.encoded, encoded)
	return &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{CpusetCpus: r.GetContainer().GetId()}}, nil
}

func TestCreateContainerEncoded(t *testing.T) {
	p := &encodedCreator{testPolicy: *newTestPolicy()}
	d := newDispatcher(t, p)
	initialize(t, d)
	if !slices.Contains(d.Metadata().GetCapabilities(), abi.Method_METHOD_CREATE_CONTAINER) {
		t.Errorf("capabilities %v lack CreateContainer", d.Metadata().GetCapabilities())
	}
	raw := encode(t, &abi.CreateContainerRequest{Pod: &abi.PodSandbox{Id: "pod"}, Container: &abi.Container{Id: "c1"}})
	resp := d.Dispatch(abi.Method_METHOD_CREATE_CONTAINER, raw)
	if got := resp.GetCreateContainer().GetAdjustment().GetCpusetCpus(); got != "c1" {
		t.Errorf("answer %v, want the adjustment CreateContainerEncoded made", resp)
	}
	if len(p.created) != 0 {
		t.Errorf("CreateContainer was called too: %v", p.created)
	}
	// The very bytes the request was decoded from, not a copy.
	if len(p.encoded) != 1 || len(p.encoded[0]) != len(raw) || &p.encoded[0][0] != &raw[0] {
		t.Errorf("CreateContainerEncoded got %v, want the request's bytes %v", p.encoded, raw)
	}
}
