package wasm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/protobuf/proto"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/native"
)

// conformanceSDK is one SDK's build of the conformance policy and what differs
// between SDKs by design: the SDK's name and how its runtime words a panic.
type conformanceSDK struct {
	name      string
	module    func(testing.TB) []byte
	sdkPrefix string
	panicText string
	// engine runs the module: every check runs on each of testEngines.
	engine wasm.Engine
}

// with is opts after the option that selects the SDK's engine.
func (s conformanceSDK) with(opts ...wasm.Option) []wasm.Option {
	return append([]wasm.Option{wasm.WithEngine(s.engine)}, opts...)
}

var conformanceSDKs = []conformanceSDK{
	{name: "go", module: conformanceModule, sdkPrefix: "nriwasm-go/", panicText: "panic: conformance: panic requested"},
	{name: "rust", module: func(testing.TB) []byte { return rustConformance }, sdkPrefix: "nriwasm-rust/",
		panicText: "panicked at 'conformance: panic requested'"},
}

// TestConformance runs every SDK's conformance module through the same checks
// of the calling convention, every call, errors and limits, compiled and on
// wazero's interpreter: the sandbox holds the same either way.
func TestConformance(t *testing.T) {
	for _, sdk := range conformanceSDKs {
		t.Run(sdk.name, func(t *testing.T) {
			for _, engine := range testEngines() {
				sdk.engine = engine
				t.Run(engine.String(), func(t *testing.T) { runConformance(t, sdk) })
			}
		})
	}
}

// runConformance is the suite: each check loads the module afresh.
func runConformance(t *testing.T, sdk conformanceSDK) {
	checks := []struct {
		name string
		run  func(*testing.T, conformanceSDK, []byte)
	}{
		{"CallsReachThePolicy", checkCallsReachThePolicy},
		{"AgreesWithTheGoReference", checkAgreesWithTheGoReference},
		{"PolicyErrorIsAnAnswer", checkPolicyErrorIsAnAnswer},
		{"MisbehaviourIsContained", checkMisbehaviourIsContained},
		{"RestoreFailureIsRetriedOnTheNextCall", checkRestoreFailureIsRetried},
		{"GuestLogsReachTheHostLog", checkGuestLogs},
		{"CallsAreSerialized", checkCallsAreSerialized},
		{"RequestBufferGrows", checkRequestBufferGrows},
		{"SealedMetadata", checkSealedMetadata},
		{"GroupedUpdatesForEitherHost", checkGroupedUpdates},
	}
	module := sdk.module(t)
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.run(t, sdk, module) })
	}
}

func checkCallsReachThePolicy(t *testing.T, sdk conformanceSDK, module []byte) {
	ctx := context.Background()
	p, client, restores := load(t, module, sdk.with()...)
	if *restores != 1 {
		t.Fatalf("restore ran %d times at Load, want 1", *restores)
	}
	if got := p.Version(); got != abi.Version(abi.ABIMajor, abi.ABIMinor) {
		t.Fatalf("Version = %#x, want %#x", got, abi.Version(abi.ABIMajor, abi.ABIMinor))
	}
	info, err := client.Info(ctx, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor})
	if err != nil {
		t.Fatal(err)
	}
	md := info.GetMetadata()
	if md.Name != "conformance" || md.Version != "1.0.0" || md.AbiMajor != 1 || len(md.Capabilities) != 15 || !strings.HasPrefix(md.Sdk, sdk.sdkPrefix) {
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

// scenarioStep is one call of a replayed scenario.
type scenarioStep struct {
	method abi.Method
	req    abi.Message
}

// conformanceScenario calls every method, before and after Init, with answers
// and refusals, and a method number the ABI does not know.
func conformanceScenario() []scenarioStep {
	pod := &abi.PodSandbox{Id: "pod-1", Uid: "uid-1", Name: "web", Namespace: "default", QosClass: abi.QOSClass_QOS_CLASS_BURSTABLE}
	claim := &abi.Claim{Uid: "claim-1", Namespace: "default", Name: "gpu", Results: []*abi.DeviceAllocation{
		{Request: "gpu", Pool: "node-1", Device: "dev0"}, {Request: "nic", Pool: "node-1", Device: "dev1", ShareId: "s-1"},
	}}
	grouped := &abi.UpdateContainerRequest{Pod: pod, Container: &abi.Container{Id: "c-1", Annotations: map[string]string{
		conformance.EachAnnotation: "c-1,c-2,c-3", conformance.GroupAnnotation: "c-4,c-5",
	}}}
	return []scenarioStep{
		{abi.Method_METHOD_INFO, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor}},
		{abi.Method_METHOD_CREATE_CONTAINER, createContainer("before-init")},
		{abi.Method_METHOD_POOLS, &abi.PoolsRequest{}},
		{abi.Method_METHOD_INIT, &abi.InitRequest{Config: []byte("reject")}},
		{abi.Method_METHOD_INIT, &abi.InitRequest{Config: []byte("dra"), NodeName: "node-1"}},
		{abi.Method_METHOD_DEVICES, &abi.DevicesRequest{}},
		{abi.Method_METHOD_ALLOCATE, &abi.AllocateRequest{Claim: claim}},
		{abi.Method_METHOD_SYNCHRONIZE, &abi.SynchronizeRequest{Pods: []*abi.PodSandbox{pod}}},
		{abi.Method_METHOD_RUN_POD_SANDBOX, &abi.RunPodSandboxRequest{Pod: pod}},
		{abi.Method_METHOD_CREATE_CONTAINER, createContainer("a", "PATH", "/bin", "HOME", "/root")},
		{abi.Method_METHOD_CREATE_CONTAINER, createContainer("refuse")},
		{abi.Method_METHOD_CREATE_CONTAINER, request1K()},
		{abi.Method_METHOD_POOLS, &abi.PoolsRequest{}},
		{abi.Method_METHOD_UPDATE_CONTAINER, &abi.UpdateContainerRequest{Pod: pod, Resources: &abi.Resources{CpuRequestMilli: 500}}},
		{abi.Method_METHOD_STOP_CONTAINER, &abi.StopContainerRequest{Pod: pod}},
		{abi.Method_METHOD_REMOVE_CONTAINER, &abi.RemoveContainerRequest{Pod: pod}},
		{abi.Method_METHOD_RELEASE, &abi.ReleaseRequest{Claim: claim}},
		{abi.Method_METHOD_RECONFIGURE, &abi.ReconfigureRequest{Config: []byte("reject")}},
		{abi.Method_METHOD_RECONFIGURE, &abi.ReconfigureRequest{Config: []byte("plain")}},
		{abi.Method_METHOD_STOP_POD_SANDBOX, &abi.StopPodSandboxRequest{Pod: pod}},
		{abi.Method_METHOD_REMOVE_POD_SANDBOX, &abi.RemovePodSandboxRequest{Pod: pod}},
		{abi.Method(99), &abi.DumpStateRequest{}},
		// Grouped updates, for a v1.0 host and then, after a new Init, a v1.1 one.
		{abi.Method_METHOD_UPDATE_CONTAINER, grouped},
		{abi.Method_METHOD_INIT, &abi.InitRequest{Config: []byte("dra"), NodeName: "node-1", HostAbiMinor: abi.MinorGroupedUpdates}},
		{abi.Method_METHOD_UPDATE_CONTAINER, grouped},
		{abi.Method_METHOD_DUMP_STATE, &abi.DumpStateRequest{}},
	}
}

// checkAgreesWithTheGoReference replays one scenario through the Go reference
// policy, natively, and the module, and requires equal responses: every call,
// the Init gate, every error with its code, field and message. Only Info's sdk
// field may differ.
func checkAgreesWithTheGoReference(t *testing.T, sdk conformanceSDK, module []byte) {
	ctx := context.Background()
	p, err := wasm.Load(ctx, "conformance", module, sdk.with(wasm.WithCacheDir(sharedCache))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	r, err := native.New(&conformance.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	errorsSeen := 0
	for i, step := range conformanceScenario() {
		want, err := r.Call(ctx, step.method, step.req)
		if err != nil {
			t.Fatalf("step %d %s natively: %v", i, step.method.Short(), err)
		}
		got, err := p.Call(ctx, step.method, step.req)
		if err != nil {
			t.Fatalf("step %d %s in Wasm: %v", i, step.method.Short(), err)
		}
		if md := got.GetInfo().GetMetadata(); md != nil {
			if !strings.HasPrefix(md.Sdk, sdk.sdkPrefix) {
				t.Errorf("Info sdk = %q, want %s…", md.Sdk, sdk.sdkPrefix)
			}
			md.Sdk = want.GetInfo().GetMetadata().GetSdk()
		}
		if !proto.Equal(got, want) {
			t.Fatalf("step %d %s: Wasm answered %v, the Go reference %v", i, step.method.Short(), got, want)
		}
		if got.GetError() != nil {
			errorsSeen++
		}
	}
	if errorsSeen != 6 {
		t.Fatalf("the scenario produced %d errors, want 6 (2 before Init, bad Init, refuse, bad Reconfigure, unknown method)", errorsSeen)
	}
}

func checkPolicyErrorIsAnAnswer(t *testing.T, sdk conformanceSDK, module []byte) {
	_, client, restores := load(t, module, sdk.with()...)
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

func checkMisbehaviourIsContained(t *testing.T, sdk conformanceSDK, module []byte) {
	tests := []struct {
		name     string
		kind     error
		inError  string
		opts     []wasm.Option
		deadline time.Duration
	}{
		{name: "panic", kind: wasm.ErrTrap, inError: sdk.panicText},
		{name: "print", kind: wasm.ErrTrap, inError: "conformance: to stderr"},
		{name: "loop", kind: wasm.ErrDeadline, opts: []wasm.Option{wasm.WithCallTimeout(200 * time.Millisecond)}},
		{name: "loop", kind: wasm.ErrDeadline, deadline: 200 * time.Millisecond},
		{name: "oom", kind: wasm.ErrOutOfMemory, inError: "out of memory", opts: []wasm.Option{wasm.WithMemoryLimit(64 << 20)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, client, restores := load(t, module, sdk.with(tc.opts...)...)
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
			if tc.kind == wasm.ErrOutOfMemory && (strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "limit of 64 MiB")) {
				t.Fatalf("out-of-memory error is not one line naming the limit: %q", err)
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

func checkRestoreFailureIsRetried(t *testing.T, sdk conformanceSDK, module []byte) {
	fail := false
	restore := func(ctx context.Context, tr abi.Transport) error {
		if fail {
			return errors.New("journal unreadable")
		}
		_, err := abi.NewClient(tr).Init(ctx, &abi.InitRequest{})
		return err
	}
	p, err := wasm.Load(context.Background(), "conformance", module, sdk.with(wasm.WithCacheDir(sharedCache), wasm.WithRestore(restore))...)
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

// checkGuestLogs: each guest level lands at its own slog level (a warning at
// slog's Warn, not Info), with source=policy as a native policy's messages.
func checkGuestLogs(t *testing.T, sdk conformanceSDK, module []byte) {
	var buf syncBuffer
	logger := logr.FromSlogHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		Level: slog.Level(-10),
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	_, client, _ := load(t, module, sdk.with(wasm.WithLogger(logger))...)
	if _, err := client.CreateContainer(context.Background(), createContainer("log")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`level=DEBUG msg="conformance: debug" policy=conformance source=policy`,
		`level=DEBUG+2 msg="conformance: info" policy=conformance source=policy`,
		`level=WARN msg="conformance: warn" policy=conformance source=policy`,
		`level=ERROR msg="conformance: error" policy=conformance source=policy`,
	} {
		if !strings.Contains(buf.String(), want+"\n") {
			t.Errorf("log lacks %s; have\n%s", want, buf.String())
		}
	}
}

// syncBuffer is a bytes.Buffer for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func checkCallsAreSerialized(t *testing.T, sdk conformanceSDK, module []byte) {
	_, client, _ := load(t, module, sdk.with()...)
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
	// The first container's name, kept from a request 100 calls ago, survived
	// every later request written into the same guest buffer.
	if got := resp.GetAdjustment().GetAnnotations()[conformance.FirstAnnotation]; got != "c" {
		t.Fatalf("first = %q, want %q: a kept string was overwritten", got, "c")
	}
}

// checkRequestBufferGrows sends requests that outgrow the guest's request buffer
// (1 MiB, then a small one, then 4 MiB) and checks each answer echoes all of it
// (reversed, as the conformance policy answers). The bulk is split into values
// of 64 KiB, within MaxResponseString, and the answer limit is raised past the
// 4 MiB echo. The call timeout is raised too: this checks the buffer, not the
// speed, and the interpreter decodes 4 MiB in about a second (the deadline
// itself is checked by MisbehaviourIsContained on both engines).
func checkRequestBufferGrows(t *testing.T, sdk conformanceSDK, module []byte) {
	_, client, _ := load(t, module, sdk.with(wasm.WithResponseLimit(8<<20), wasm.WithCallTimeout(30*time.Second))...)
	for _, size := range []int{1 << 20, 16, 4 << 20} {
		var env []string
		for i := 0; i*(64<<10) < size; i++ {
			env = append(env, fmt.Sprintf("V%d", i), strings.Repeat(string(rune('a'+i%26)), min(size, 64<<10)))
		}
		env = append(env, "B", "short")
		resp, err := client.CreateContainer(context.Background(), createContainer("big", env...))
		if err != nil {
			t.Fatalf("%d-byte request: %v", size, err)
		}
		got := resp.GetAdjustment().GetEnv()
		if len(got) != len(env)/2 {
			t.Fatalf("%d-byte request: the answer has %d variables, want %d", size, len(got), len(env)/2)
		}
		for i, kv := range got { // the policy answers the variables reversed
			j := len(got) - 1 - i
			if kv.GetKey() != env[2*j] || kv.GetValue() != env[2*j+1] {
				t.Fatalf("%d-byte request: variable %d came back as %q (%d bytes), want %q", size, j, kv.GetKey(), len(kv.GetValue()), env[2*j])
			}
		}
	}
}

func checkSealedMetadata(t *testing.T, sdk conformanceSDK, sealed []byte) {
	md, err := wasm.ReadMetadata(sealed)
	if err != nil || md == nil {
		t.Fatalf("ReadMetadata = %v, %v; want its section (run make policies)", md, err)
	}
	want := make([]abi.Method, 0, 15)
	for m := abi.Method_METHOD_INIT; m <= abi.Method_METHOD_POOLS; m++ {
		want = append(want, m)
	}
	if md.Name != "conformance" || md.AbiMajor != abi.ABIMajor || !slices.Equal(md.Capabilities, want) || !strings.HasPrefix(md.Sdk, sdk.sdkPrefix) {
		t.Fatalf("metadata = %v", md)
	}
	resealed, _, err := wasm.Seal(context.Background(), sealed, wasm.WithCacheDir(sharedCache))
	if err != nil {
		t.Fatal(err)
	}
	if string(resealed) != string(sealed) {
		t.Fatal("sealing a sealed module changed it: sealing is not deterministic or not idempotent")
	}
}

// request1K is a CreateContainer request of about 1 KiB whose response (the env
// reversed) is about as large.
func request1K() *abi.CreateContainerRequest {
	var env []string
	for i := range 16 {
		env = append(env, fmt.Sprintf("VARIABLE_%02d", i), fmt.Sprintf("value-%02d-0123456789abcdef0123456789", i))
	}
	req := createContainer("bench", env...)
	req.Pod.Labels = map[string]string{"app": "bench", "tier": "backend"}
	return req
}

// checkGroupedUpdates: the policy answers three updates one by one and a
// group of three (sdk/go/conformance's UpdateContainer). A v1.1 host (Init's
// host_abi_minor 1) gets both as groups on the wire, a v1.0 host (0) six plain
// updates; either way the client hands the host the same six updates.
func checkGroupedUpdates(t *testing.T, sdk conformanceSDK, module []byte) {
	ctx := context.Background()
	req := &abi.UpdateContainerRequest{Container: &abi.Container{Id: "x", Annotations: map[string]string{
		conformance.EachAnnotation: "a,b,c", conformance.GroupAnnotation: "d,e,f",
	}}}
	var want []*abi.ContainerUpdate
	for _, id := range []string{"a", "b", "c"} {
		want = append(want, &abi.ContainerUpdate{ContainerId: id, CpusetCpus: "0-1", CpusetMems: "0"})
	}
	for _, id := range []string{"d", "e", "f"} {
		want = append(want, &abi.ContainerUpdate{ContainerId: id, CpusetCpus: "2-3"})
	}
	for _, host := range []struct {
		name  string
		minor uint32
		wire  []*abi.ContainerUpdate
	}{
		{"v1.0", 0, want},
		{"v1.1", abi.MinorGroupedUpdates, []*abi.ContainerUpdate{
			{ContainerId: "a", AlsoContainerIds: []string{"b", "c"}, CpusetCpus: "0-1", CpusetMems: "0"},
			{ContainerId: "d", AlsoContainerIds: []string{"e", "f"}, CpusetCpus: "2-3"},
		}},
	} {
		t.Run(host.name, func(t *testing.T) {
			p, err := wasm.Load(ctx, "conformance", module, sdk.with(wasm.WithCacheDir(sharedCache))...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close(ctx) })
			if resp, err := p.Call(ctx, abi.Method_METHOD_INIT, &abi.InitRequest{HostAbiMinor: host.minor}); err != nil || resp.GetInit() == nil {
				t.Fatalf("Init = %v, %v", resp, err)
			}
			resp, err := p.Call(ctx, abi.Method_METHOD_UPDATE_CONTAINER, req)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.GetUpdateContainer().GetUpdates(); !equalUpdates(got, host.wire) {
				t.Fatalf("updates on the wire = %v, want %v", got, host.wire)
			}
			got, err := abi.NewClient(p).UpdateContainer(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !equalUpdates(got.GetUpdates(), want) {
				t.Fatalf("updates the host sees = %v, want %v", got.GetUpdates(), want)
			}
		})
	}
}

func equalUpdates(a, b []*abi.ContainerUpdate) bool {
	return slices.EqualFunc(a, b, func(x, y *abi.ContainerUpdate) bool { return proto.Equal(x, y) })
}
