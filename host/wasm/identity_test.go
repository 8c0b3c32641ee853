package wasm_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/native"
)

// scenarioStep is one call of a replayed scenario.
type scenarioStep struct {
	method abi.Method
	req    abi.Message
}

func conformanceScenario() []scenarioStep {
	pod := &abi.PodSandbox{Id: "pod-1", Uid: "uid-1", Name: "web", Namespace: "default", QosClass: abi.QOSClass_QOS_CLASS_BURSTABLE}
	claim := &abi.Claim{Uid: "claim-1", Namespace: "default", Name: "gpu", Results: []*abi.DeviceAllocation{
		{Request: "gpu", Pool: "node-1", Device: "dev0"}, {Request: "nic", Pool: "node-1", Device: "dev1", ShareId: "s-1"},
	}}
	return []scenarioStep{
		{abi.Method_METHOD_INFO, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor}},
		{abi.Method_METHOD_CREATE_CONTAINER, createContainer("before-init")},
		{abi.Method_METHOD_INIT, &abi.InitRequest{Config: []byte("reject")}},
		{abi.Method_METHOD_INIT, &abi.InitRequest{Config: []byte("dra"), NodeName: "node-1"}},
		{abi.Method_METHOD_DEVICES, &abi.DevicesRequest{}},
		{abi.Method_METHOD_ALLOCATE, &abi.AllocateRequest{Claim: claim}},
		{abi.Method_METHOD_SYNCHRONIZE, &abi.SynchronizeRequest{Pods: []*abi.PodSandbox{pod}}},
		{abi.Method_METHOD_RUN_POD_SANDBOX, &abi.RunPodSandboxRequest{Pod: pod}},
		{abi.Method_METHOD_CREATE_CONTAINER, createContainer("a", "PATH", "/bin", "HOME", "/root")},
		{abi.Method_METHOD_CREATE_CONTAINER, createContainer("refuse")},
		{abi.Method_METHOD_CREATE_CONTAINER, request1K()},
		{abi.Method_METHOD_UPDATE_CONTAINER, &abi.UpdateContainerRequest{Pod: pod, Resources: &abi.Resources{CpuRequestMilli: 500}}},
		{abi.Method_METHOD_STOP_CONTAINER, &abi.StopContainerRequest{Pod: pod}},
		{abi.Method_METHOD_REMOVE_CONTAINER, &abi.RemoveContainerRequest{Pod: pod}},
		{abi.Method_METHOD_RELEASE, &abi.ReleaseRequest{Claim: claim}},
		{abi.Method_METHOD_RECONFIGURE, &abi.ReconfigureRequest{Config: []byte("reject")}},
		{abi.Method_METHOD_RECONFIGURE, &abi.ReconfigureRequest{Config: []byte("plain")}},
		{abi.Method_METHOD_STOP_POD_SANDBOX, &abi.StopPodSandboxRequest{Pod: pod}},
		{abi.Method_METHOD_REMOVE_POD_SANDBOX, &abi.RemovePodSandboxRequest{Pod: pod}},
		{abi.Method(99), &abi.DumpStateRequest{}},
		{abi.Method_METHOD_DUMP_STATE, &abi.DumpStateRequest{}},
	}
}

// TestNativeAndWasmAgree replays one scenario through the native runner and the
// .wasm build of the conformance policy and requires identical responses.
func TestNativeAndWasmAgree(t *testing.T) {
	ctx := context.Background()
	p, err := loadPlain(t)
	if err != nil {
		t.Fatal(err)
	}
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
		if !proto.Equal(got, want) {
			t.Fatalf("step %d %s: Wasm answered %v, native %v", i, step.method.Short(), got, want)
		}
		if got.GetError() != nil {
			errorsSeen++
		}
	}
	if errorsSeen != 5 {
		t.Fatalf("the scenario produced %d errors, want 5 (before Init, bad Init, refuse, bad Reconfigure, unknown method)", errorsSeen)
	}
}

// loadPlain loads the conformance policy without a restore hook, so the
// scenario drives Init itself.
func loadPlain(t *testing.T) (abi.Transport, error) {
	t.Helper()
	p, err := wasm.Load(context.Background(), "conformance", conformanceModule(t), wasm.WithCacheDir(sharedCache))
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p, nil
}
