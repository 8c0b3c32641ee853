package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

func newClient(t *testing.T) *abi.Client {
	t.Helper()
	r, err := native.New(&conformance.Policy{})
	if err != nil {
		t.Fatalf("native.New: %v", err)
	}
	return abi.NewClient(r)
}

func initClient(t *testing.T, config string) *abi.Client {
	t.Helper()
	c := newClient(t)
	if _, err := c.Init(context.Background(), &abi.InitRequest{Config: []byte(config)}); err != nil {
		t.Fatalf("Init(%q): %v", config, err)
	}
	return c
}

func wantPolicyError(t *testing.T, err error, m abi.Method, code abi.ErrorCode, field string) {
	t.Helper()
	pe, ok := errors.AsType[*abi.PolicyError](err)
	if !ok {
		t.Fatalf("error %v (%T), want a *PolicyError", err, err)
	}
	if pe.Method != m || pe.Code != code || pe.Field != field {
		t.Errorf("PolicyError = %+v, want method %v, code %v, field %q", *pe, m, code, field)
	}
}

func dumpState(t *testing.T, c *abi.Client) []string {
	t.Helper()
	resp, err := c.DumpState(context.Background(), &abi.DumpStateRequest{})
	if err != nil {
		t.Fatalf("DumpState: %v", err)
	}
	var events []string
	if err := json.Unmarshal(resp.GetJson(), &events); err != nil {
		t.Fatalf("DumpState answered %q: %v", resp.GetJson(), err)
	}
	return events
}

func TestDescribe(t *testing.T) {
	info, err := newClient(t).Info(context.Background(), &abi.InfoRequest{})
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	md := info.GetMetadata()
	if md.GetName() != "conformance" || md.GetVersion() != "1.0.0" {
		t.Errorf("Info = %s %s, want conformance 1.0.0", md.GetName(), md.GetVersion())
	}
	if md.GetSdk() != policy.SDKName || md.GetAbiMajor() != abi.ABIMajor || md.GetAbiMinor() != abi.ABIMinor {
		t.Errorf("Info = %v, want sdk %s and ABI %d.%d", md, policy.SDKName, abi.ABIMajor, abi.ABIMinor)
	}
	// The conformance policy implements every call.
	var want []abi.Method
	for m := abi.Method_METHOD_INIT; m <= abi.Method_METHOD_POOLS; m++ {
		want = append(want, m)
	}
	if !slices.Equal(md.GetCapabilities(), want) {
		t.Errorf("capabilities = %v, want %v", md.GetCapabilities(), want)
	}
}

func TestInit(t *testing.T) {
	tests := []struct {
		config   string
		reject   bool
		wantsDRA bool
	}{
		{config: "", wantsDRA: false},
		{config: "anything", wantsDRA: false},
		{config: "dra", wantsDRA: true},
		{config: "DRA", wantsDRA: false},
		{config: "reject", reject: true},
	}
	for _, tt := range tests {
		t.Run(tt.config, func(t *testing.T) {
			c := newClient(t)
			resp, err := c.Init(context.Background(), &abi.InitRequest{Config: []byte(tt.config)})
			if tt.reject {
				wantPolicyError(t, err, abi.Method_METHOD_INIT, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "config")
				// A rejected Init leaves the policy uninitialized.
				_, err := c.Devices(context.Background(), &abi.DevicesRequest{})
				wantPolicyError(t, err, abi.Method_METHOD_DEVICES, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "")
				return
			}
			if err != nil {
				t.Fatalf("Init: %v", err)
			}
			if resp.GetWantsDra() != tt.wantsDRA {
				t.Errorf("wants_dra = %v, want %v", resp.GetWantsDra(), tt.wantsDRA)
			}
		})
	}
}

func TestReconfigure(t *testing.T) {
	tests := []struct {
		config   string
		reject   bool
		wantsDRA bool
	}{
		{config: "", wantsDRA: false},
		{config: "dra", wantsDRA: true},
		{config: "reject", reject: true},
	}
	for _, tt := range tests {
		t.Run(tt.config, func(t *testing.T) {
			c := initClient(t, "")
			resp, err := c.Reconfigure(context.Background(), &abi.ReconfigureRequest{Config: []byte(tt.config)})
			if tt.reject {
				wantPolicyError(t, err, abi.Method_METHOD_RECONFIGURE, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "config")
				if got, want := dumpState(t, c), []string{"Init"}; !slices.Equal(got, want) {
					t.Errorf("events = %q, want %q (a rejected call records nothing)", got, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Reconfigure: %v", err)
			}
			if resp.GetWantsDra() != tt.wantsDRA {
				t.Errorf("wants_dra = %v, want %v", resp.GetWantsDra(), tt.wantsDRA)
			}
			if got, want := dumpState(t, c), []string{"Init", "Reconfigure"}; !slices.Equal(got, want) {
				t.Errorf("events = %q, want %q", got, want)
			}
		})
	}
}

func TestDevices(t *testing.T) {
	resp, err := initClient(t, "dra").Devices(context.Background(), &abi.DevicesRequest{})
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	want := &abi.DevicesResponse{Devices: []*abi.Device{{
		Name: "dev0",
		Attributes: map[string]*abi.DeviceAttribute{
			"conformance.nriwasm.io/index": {Value: &abi.DeviceAttribute_IntValue{IntValue: 0}},
		},
		Capacities: map[string]*abi.DeviceCapacity{"units": {Value: "4"}},
	}}}
	if !resp.EqualVT(want) {
		t.Errorf("Devices = %v, want %v", resp, want)
	}
	// The int attribute survives encoding as an explicit zero, not as unset.
	attr := resp.GetDevices()[0].GetAttributes()["conformance.nriwasm.io/index"]
	if _, ok := attr.GetValue().(*abi.DeviceAttribute_IntValue); !ok {
		t.Errorf("index attribute = %v, want an int value", attr)
	}
}

func TestAllocate(t *testing.T) {
	ready := &abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Ready", Status: "True", Reason: "Prepared"}}}
	tests := []struct {
		name    string
		results []*abi.DeviceAllocation
		want    []*abi.PreparedDevice
	}{
		{name: "no results"},
		{
			name:    "one result",
			results: []*abi.DeviceAllocation{{Request: "gpu", Pool: "node-a", Device: "dev0", ShareId: "s1"}},
			want: []*abi.PreparedDevice{{
				Request: "gpu", Pool: "node-a", Device: "dev0", ShareId: "s1",
				ContainerEdits: &abi.CDIContainerEdits{Env: []string{"CONFORMANCE_GPU=dev0"}},
				Status:         ready,
			}},
		},
		{
			name: "two results in order",
			results: []*abi.DeviceAllocation{
				{Request: "Big", Pool: "p", Device: "dev1"},
				{Request: "small", Pool: "p", Device: "dev0"},
			},
			want: []*abi.PreparedDevice{
				{Request: "Big", Pool: "p", Device: "dev1",
					ContainerEdits: &abi.CDIContainerEdits{Env: []string{"CONFORMANCE_BIG=dev1"}}, Status: ready},
				{Request: "small", Pool: "p", Device: "dev0",
					ContainerEdits: &abi.CDIContainerEdits{Env: []string{"CONFORMANCE_SMALL=dev0"}}, Status: ready},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := initClient(t, "dra")
			resp, err := c.Allocate(context.Background(), &abi.AllocateRequest{
				Claim: &abi.Claim{Uid: "uid", Namespace: "ns", Name: "claim", Results: tt.results},
			})
			if err != nil {
				t.Fatalf("Allocate: %v", err)
			}
			if want := (&abi.AllocateResponse{Devices: tt.want}); !resp.EqualVT(want) {
				t.Errorf("Allocate = %v, want %v", resp, want)
			}
			if got, want := dumpState(t, c), []string{"Init", "Allocate"}; !slices.Equal(got, want) {
				t.Errorf("events = %q, want %q", got, want)
			}
		})
	}
}

func createReq(name string, env []*abi.KeyValue, annotations map[string]string) *abi.CreateContainerRequest {
	return &abi.CreateContainerRequest{
		Pod:       &abi.PodSandbox{Id: "pod", Name: "pod", Namespace: "ns"},
		Container: &abi.Container{Id: "id-" + name, Name: name, Env: env, Annotations: annotations},
	}
}

func TestCreateContainer(t *testing.T) {
	tests := []struct {
		name        string
		env         []*abi.KeyValue
		annotations map[string]string
		want        *abi.ContainerAdjustment
	}{
		{
			name: "bare",
			want: &abi.ContainerAdjustment{Annotations: map[string]string{conformance.SeenAnnotation: "1", conformance.FirstAnnotation: "bare"}},
		},
		{
			name: "env reversed",
			env:  []*abi.KeyValue{{Key: "A", Value: "1"}, {Key: "B", Value: "2"}, {Key: "C", Value: "3"}},
			want: &abi.ContainerAdjustment{
				Env:         []*abi.KeyValue{{Key: "C", Value: "3"}, {Key: "B", Value: "2"}, {Key: "A", Value: "1"}},
				Annotations: map[string]string{conformance.SeenAnnotation: "1", conformance.FirstAnnotation: "env reversed"},
			},
		},
		{
			name:        "cpuset from annotation",
			annotations: map[string]string{conformance.CPUSetAnnotation: "0-3,8", "other": "x"},
			want: &abi.ContainerAdjustment{
				CpusetCpus:  "0-3,8",
				Annotations: map[string]string{conformance.SeenAnnotation: "1", conformance.FirstAnnotation: "cpuset from annotation"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := initClient(t, "")
			req := createReq(tt.name, tt.env, tt.annotations)
			resp, err := c.CreateContainer(context.Background(), req)
			if err != nil {
				t.Fatalf("CreateContainer: %v", err)
			}
			if want := (&abi.CreateContainerResponse{Adjustment: tt.want}); !resp.EqualVT(want) {
				t.Errorf("CreateContainer = %v, want %v", resp, want)
			}
		})
	}
}

func TestCreateContainerSeenCounter(t *testing.T) {
	captureLog(t) // keep "log"'s messages out of the test output
	c := initClient(t, "")
	ctx := context.Background()
	// "refuse" is not counted; "log" is.
	steps := []struct {
		name     string
		wantSeen string // "" means refused
	}{
		{"a", "1"},
		{"b", "2"},
		{"refuse", ""},
		{"log", "3"},
		{"c", "4"},
	}
	for _, s := range steps {
		resp, err := c.CreateContainer(ctx, createReq(s.name, nil, nil))
		if s.wantSeen == "" {
			wantPolicyError(t, err, abi.Method_METHOD_CREATE_CONTAINER, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.name")
			continue
		}
		if err != nil {
			t.Fatalf("CreateContainer(%s): %v", s.name, err)
		}
		if got := resp.GetAdjustment().GetAnnotations()[conformance.SeenAnnotation]; got != s.wantSeen {
			t.Errorf("CreateContainer(%s): seen = %q, want %q", s.name, got, s.wantSeen)
		}
	}
	// CreateContainer records nothing in the event list.
	if got, want := dumpState(t, c), []string{"Init"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}

func TestCreateContainerRefuse(t *testing.T) {
	_, err := initClient(t, "").CreateContainer(context.Background(), createReq("refuse", nil, nil))
	wantPolicyError(t, err, abi.Method_METHOD_CREATE_CONTAINER, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.name")
	if pe, ok := errors.AsType[*abi.PolicyError](err); ok && pe.Message != "refused by design" {
		t.Errorf("message = %q, want %q", pe.Message, "refused by design")
	}
}

func TestCreateContainerPanic(t *testing.T) {
	c := initClient(t, "")
	ctx := context.Background()
	_, err := c.CreateContainer(ctx, createReq("panic", nil, nil))
	if err == nil || !strings.Contains(err.Error(), "policy panicked") || !strings.Contains(err.Error(), "conformance: panic requested") {
		t.Fatalf("CreateContainer(panic) = %v, want the runner's panic error", err)
	}
	// The panic happened before counting.
	resp, err := c.CreateContainer(ctx, createReq("after", nil, nil))
	if err != nil {
		t.Fatalf("CreateContainer after a panic: %v", err)
	}
	if got := resp.GetAdjustment().GetAnnotations()[conformance.SeenAnnotation]; got != "1" {
		t.Errorf("seen = %q after a panic, want %q", got, "1")
	}
}

func TestEvents(t *testing.T) {
	c := initClient(t, "")
	ctx := context.Background()
	calls := []func() error{
		func() error { _, err := c.Reconfigure(ctx, &abi.ReconfigureRequest{}); return err },
		func() error { _, err := c.Devices(ctx, &abi.DevicesRequest{}); return err },
		func() error { _, err := c.Allocate(ctx, &abi.AllocateRequest{}); return err },
		func() error { _, err := c.Release(ctx, &abi.ReleaseRequest{}); return err },
		func() error { _, err := c.Synchronize(ctx, &abi.SynchronizeRequest{}); return err },
		func() error { _, err := c.RunPodSandbox(ctx, &abi.RunPodSandboxRequest{}); return err },
		func() error { _, err := c.CreateContainer(ctx, createReq("c", nil, nil)); return err },
		func() error { _, err := c.UpdateContainer(ctx, &abi.UpdateContainerRequest{}); return err },
		func() error { _, err := c.StopContainer(ctx, &abi.StopContainerRequest{}); return err },
		func() error { _, err := c.RemoveContainer(ctx, &abi.RemoveContainerRequest{}); return err },
		func() error { _, err := c.StopPodSandbox(ctx, &abi.StopPodSandboxRequest{}); return err },
		func() error { _, err := c.RemovePodSandbox(ctx, &abi.RemovePodSandboxRequest{}); return err },
		func() error { _, err := c.Info(ctx, &abi.InfoRequest{}); return err },
	}
	for i, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	want := []string{
		"Init", "Reconfigure", "Devices", "Allocate", "Release", "Synchronize",
		"UpdateContainer", "StopContainer", "RemoveContainer", "StopPodSandbox", "RemovePodSandbox",
	}
	if got := dumpState(t, c); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	// DumpState records nothing itself, and its JSON is exactly a compact array.
	resp, err := c.DumpState(ctx, &abi.DumpStateRequest{})
	if err != nil {
		t.Fatalf("DumpState: %v", err)
	}
	wantJSON := `["Init","Reconfigure","Devices","Allocate","Release","Synchronize","UpdateContainer","StopContainer","RemoveContainer","StopPodSandbox","RemovePodSandbox"]`
	if got := string(resp.GetJson()); got != wantJSON {
		t.Errorf("DumpState JSON = %s, want %s", got, wantJSON)
	}
}

func TestEmptyResponses(t *testing.T) {
	// The calls that only record answer empty responses.
	c := initClient(t, "")
	ctx := context.Background()
	type sizer interface{ SizeVT() int }
	tests := []struct {
		name string
		call func() (sizer, error)
	}{
		{"Release", func() (sizer, error) { return c.Release(ctx, &abi.ReleaseRequest{}) }},
		{"Synchronize", func() (sizer, error) { return c.Synchronize(ctx, &abi.SynchronizeRequest{}) }},
		{"RunPodSandbox", func() (sizer, error) { return c.RunPodSandbox(ctx, &abi.RunPodSandboxRequest{}) }},
		{"UpdateContainer", func() (sizer, error) { return c.UpdateContainer(ctx, &abi.UpdateContainerRequest{}) }},
		{"StopContainer", func() (sizer, error) { return c.StopContainer(ctx, &abi.StopContainerRequest{}) }},
		{"RemoveContainer", func() (sizer, error) { return c.RemoveContainer(ctx, &abi.RemoveContainerRequest{}) }},
		{"StopPodSandbox", func() (sizer, error) { return c.StopPodSandbox(ctx, &abi.StopPodSandboxRequest{}) }},
		{"RemovePodSandbox", func() (sizer, error) { return c.RemovePodSandbox(ctx, &abi.RemovePodSandboxRequest{}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.call()
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if n := resp.SizeVT(); n != 0 {
				t.Errorf("%s answered %v (%d bytes), want an empty response", tt.name, resp, n)
			}
		})
	}
}

func TestDumpStateBeforeInit(t *testing.T) {
	_, err := newClient(t).DumpState(context.Background(), &abi.DumpStateRequest{})
	wantPolicyError(t, err, abi.Method_METHOD_DUMP_STATE, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "")
}

// captureLog points slog's default logger, which the native build of
// policy.Log writes to, at a recorder for the test.
func captureLog(t *testing.T) *[]slog.Record {
	t.Helper()
	prev := slog.Default()
	var records []slog.Record
	slog.SetDefault(slog.New(recorder{&records}))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return &records
}

type recorder struct{ records *[]slog.Record }

func (recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r recorder) Handle(_ context.Context, rec slog.Record) error {
	*r.records = append(*r.records, rec.Clone())
	return nil
}
func (r recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r recorder) WithGroup(string) slog.Handler      { return r }

func TestCreateContainerLog(t *testing.T) {
	records := captureLog(t)
	resp, err := initClient(t, "").CreateContainer(context.Background(), createReq("log", nil, nil))
	if err != nil {
		t.Fatalf("CreateContainer(log): %v", err)
	}
	if got := resp.GetAdjustment().GetAnnotations()[conformance.SeenAnnotation]; got != "1" {
		t.Errorf("seen = %q, want %q", got, "1")
	}
	want := []struct {
		level slog.Level
		msg   string
	}{
		{slog.LevelDebug, "conformance: debug"},
		{slog.LevelInfo, "conformance: info"},
		{slog.LevelWarn, "conformance: warn"},
		{slog.LevelError, "conformance: error"},
	}
	if len(*records) != len(want) {
		t.Fatalf("logged %d messages, want %d", len(*records), len(want))
	}
	for i, w := range want {
		if r := (*records)[i]; r.Level != w.level || r.Message != w.msg {
			t.Errorf("message %d = %v %q, want %v %q", i, r.Level, r.Message, w.level, w.msg)
		}
	}
}
