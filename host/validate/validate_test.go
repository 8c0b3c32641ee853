package validate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/internal/testkit"
)

// node: CPUs 0-7, node 0 (CPUs 0-3) and node 1 (CPUs 4-7) with memory, node 2
// without.
func node() *abi.Topology {
	t := &abi.Topology{}
	for id := range uint32(8) {
		t.Cpus = append(t.Cpus, &abi.CPU{Id: id, NumaNode: id / 4})
	}
	t.NumaNodes = []*abi.NUMANode{{Id: 0, MemoryBytes: 1 << 30}, {Id: 1, MemoryBytes: 1 << 30}, {Id: 2}}
	return t
}

const bind = abi.MemoryPolicyMode_MEMORY_POLICY_MODE_BIND

// manyEnv returns n variables whose values are size bytes each.
func manyEnv(n, size int) []*abi.KeyValue {
	env := make([]*abi.KeyValue, n)
	for i := range env {
		env[i] = &abi.KeyValue{Key: fmt.Sprintf("V%d", i), Value: strings.Repeat("x", size)}
	}
	return env
}

func TestAdjustment(t *testing.T) {
	tests := []struct {
		name      string
		adj       *abi.ContainerAdjustment
		opts      []validate.Option
		wantField string // "" for valid
	}{
		{"nil", nil, nil, ""},
		{"in bounds", &abi.ContainerAdjustment{CpusetCpus: "0-7", CpusetMems: "0-1", Env: []*abi.KeyValue{{Key: "A_B", Value: "="}}}, nil, ""},
		{"cpu offline", &abi.ContainerAdjustment{CpusetCpus: "6-8"}, nil, "adjustment.cpuset_cpus"},
		{"not a list", &abi.ContainerAdjustment{CpusetCpus: "0-"}, nil, "adjustment.cpuset_cpus"},
		{"cpu not available", &abi.ContainerAdjustment{CpusetCpus: "0-3"}, []validate.Option{validate.WithAvailableCPUs([]uint32{2, 3, 1})}, "adjustment.cpuset_cpus"},
		{"available cpus", &abi.ContainerAdjustment{CpusetCpus: "1-3"}, []validate.Option{validate.WithAvailableCPUs([]uint32{3, 2, 1, 9})}, ""},
		{"memoryless node", &abi.ContainerAdjustment{CpusetMems: "2"}, nil, "adjustment.cpuset_mems"},
		{"memory policy node", &abi.ContainerAdjustment{MemoryPolicy: &abi.MemoryPolicy{Mode: bind, Nodes: "3"}}, nil, "adjustment.memory_policy.nodes"},
		{"memory policy in bounds", &abi.ContainerAdjustment{MemoryPolicy: &abi.MemoryPolicy{Mode: bind, Nodes: "0-1", Flags: []abi.MemoryPolicyFlag{abi.MemoryPolicyFlag_MEMORY_POLICY_FLAG_STATIC_NODES}}}, nil, ""},
		{"memory policy without mode", &abi.ContainerAdjustment{MemoryPolicy: &abi.MemoryPolicy{Nodes: "0"}}, nil, "adjustment.memory_policy.mode"},
		{"memory policy mode out of range", &abi.ContainerAdjustment{MemoryPolicy: &abi.MemoryPolicy{Mode: -3}}, nil, "adjustment.memory_policy.mode"},
		{"memory policy flag out of range", &abi.ContainerAdjustment{MemoryPolicy: &abi.MemoryPolicy{Mode: bind, Flags: []abi.MemoryPolicyFlag{1, 0}}}, nil, "adjustment.memory_policy.flags[1]"},
		{"env value with NUL", &abi.ContainerAdjustment{Env: []*abi.KeyValue{{Key: "A", Value: "x\x00y"}}}, nil, "adjustment.env[0].value"},
		{"env value with newline", &abi.ContainerAdjustment{Env: []*abi.KeyValue{{Key: "A", Value: "x\ny"}}}, nil, "adjustment.env[0].value"},
		{"env value not UTF-8", &abi.ContainerAdjustment{Env: []*abi.KeyValue{{Key: "A", Value: "\xff"}}}, nil, "adjustment.env[0].value"},
		{"env name not UTF-8", &abi.ContainerAdjustment{Env: []*abi.KeyValue{{Key: "A\xff"}}}, nil, "adjustment.env[0].key"},
		{"too many env", &abi.ContainerAdjustment{Env: manyEnv(validate.MaxEnv+1, 1)}, nil, "adjustment.env"},
		{"env too large", &abi.ContainerAdjustment{Env: manyEnv(2, validate.MaxEnvBytes/2)}, nil, "adjustment.env[1]"},
		{"annotation key", &abi.ContainerAdjustment{Annotations: map[string]string{"not a key": "v"}}, nil, "adjustment.annotations"},
		{"annotations too large", &abi.ContainerAdjustment{Annotations: map[string]string{"a": strings.Repeat("x", validate.MaxAnnotationBytes)}}, nil, "adjustment.annotations"},
		{"annotation value not UTF-8", &abi.ContainerAdjustment{Annotations: map[string]string{"example.com/a": "\xff"}}, nil, `adjustment.annotations["example.com/a"]`},
		{"annotations in bounds", &abi.ContainerAdjustment{Annotations: map[string]string{"example.com/a": "v"}}, nil, ""},
		{"rdt class path", &abi.ContainerAdjustment{RdtClass: "../../../etc"}, nil, "adjustment.rdt_class"},
		{"blockio class slash", &abi.ContainerAdjustment{BlockioClass: "a/b"}, nil, "adjustment.blockio_class"},
		{"blockio class too long", &abi.ContainerAdjustment{BlockioClass: strings.Repeat("a", validate.MaxClassName+1)}, nil, "adjustment.blockio_class"},
		{"classes in bounds", &abi.ContainerAdjustment{RdtClass: "gold", BlockioClass: "low-prio_1.x"}, nil, ""},
		{"env with =", &abi.ContainerAdjustment{Env: []*abi.KeyValue{{Key: "OK"}, {Key: "A=B"}}}, nil, "adjustment.env[1].key"},
		{"empty env name", &abi.ContainerAdjustment{Env: []*abi.KeyValue{{Key: ""}}}, nil, "adjustment.env[0].key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mustLimits(t, node(), tt.opts...).Adjustment(tt.adj)
			checkField(t, err, tt.wantField)
		})
	}
}

func TestUpdates(t *testing.T) {
	live := func(id string) bool { return id == "a" || id == "c" }
	tests := []struct {
		name      string
		us        []*abi.ContainerUpdate
		wantField string
	}{
		{"none", nil, ""},
		{"valid", []*abi.ContainerUpdate{{ContainerId: "a", CpusetCpus: "1", CpusetMems: "1"}}, ""},
		{"unknown container", []*abi.ContainerUpdate{{ContainerId: "a"}, {ContainerId: "b"}}, "updates[1].container_id"},
		{"bad cpus", []*abi.ContainerUpdate{{ContainerId: "a", CpusetCpus: "9"}}, "updates[0].cpuset_cpus"},
		{"bad mems", []*abi.ContainerUpdate{{ContainerId: "a", CpusetMems: "2"}}, "updates[0].cpuset_mems"},
		{"bad rdt class", []*abi.ContainerUpdate{{ContainerId: "a", RdtClass: ".."}}, "updates[0].rdt_class"},
		{"bad blockio class", []*abi.ContainerUpdate{{ContainerId: "a", BlockioClass: "x\n"}}, "updates[0].blockio_class"},
		{"group of live containers", []*abi.ContainerUpdate{{ContainerId: "a", CpusetCpus: "1", AlsoContainerIds: []string{"c", "a"}}}, ""},
		{"group member not live", []*abi.ContainerUpdate{{ContainerId: "a"}, {ContainerId: "a", AlsoContainerIds: []string{"c", "b"}}}, "updates[1].also_container_ids[1]"},
		{"empty group member", []*abi.ContainerUpdate{{ContainerId: "a", AlsoContainerIds: []string{""}}}, "updates[0].also_container_ids[0]"},
		{"group's cpus checked once, as sent", []*abi.ContainerUpdate{{ContainerId: "a", CpusetCpus: "9", AlsoContainerIds: []string{"c"}}}, "updates[0].cpuset_cpus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkField(t, mustLimits(t, node()).Updates("updates", tt.us, live), tt.wantField)
		})
	}
}

// TestNodesWithoutMemoryInfo: a kernel without NUMA reports no memory; every
// node is allowed then.
func TestNodesWithoutMemoryInfo(t *testing.T) {
	topo := &abi.Topology{Cpus: []*abi.CPU{{Id: 0}}, NumaNodes: []*abi.NUMANode{{Id: 0}}}
	checkField(t, mustLimits(t, topo).Mems("m", "0"), "")
}

func TestDRA(t *testing.T) {
	claim := &abi.Claim{Results: []*abi.DeviceAllocation{{Request: "r", Pool: "p", Device: "d"}}}
	tests := []struct {
		name      string
		err       error
		wantField string
	}{
		{"devices ok", validate.Devices(&abi.DevicesResponse{Devices: []*abi.Device{{Name: "cpu-0"}}}), ""},
		{"device name", validate.Devices(&abi.DevicesResponse{Devices: []*abi.Device{{Name: "CPU_0"}}}), "devices[0].name"},
		{"duplicate", validate.Devices(&abi.DevicesResponse{Devices: []*abi.Device{{Name: "a"}, {Name: "a"}}}), "devices[1].name"},
		{"prepared ok", validate.Prepared(&abi.AllocateResponse{Devices: []*abi.PreparedDevice{{Request: "r", Pool: "p", Device: "d"}}}, claim), ""},
		{"prepared unknown", validate.Prepared(&abi.AllocateResponse{Devices: []*abi.PreparedDevice{{Request: "x", Pool: "p", Device: "d"}}}, claim), "devices[0]"},
		{"prepared env", validate.Prepared(&abi.AllocateResponse{Devices: []*abi.PreparedDevice{{Request: "r", Pool: "p", Device: "d",
			ContainerEdits: &abi.CDIContainerEdits{Env: []string{"NOVALUE"}}}}}, claim), "devices[0].container_edits.env[0]"},
		{"status data", validate.Prepared(&abi.AllocateResponse{Devices: []*abi.PreparedDevice{{Request: "r", Pool: "p", Device: "d",
			Status: &abi.DeviceStatus{Data: []byte("[1]")}}}}, claim), "devices[0].status.data"},
		{"status ip not CIDR", validate.Prepared(&abi.AllocateResponse{Devices: []*abi.PreparedDevice{{Request: "r", Pool: "p", Device: "d",
			Status: &abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{Ips: []string{"10.0.0.1"}}}}}}, claim), "devices[0].status.network_data.ips[0]"},
		{"status condition", validate.Prepared(&abi.AllocateResponse{Devices: []*abi.PreparedDevice{{Request: "r", Pool: "p", Device: "d",
			Status: &abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Ready", Status: "Yes"}}}}}}, claim), "devices[0].status.conditions[0].status"},
		{"status ok", validate.Prepared(&abi.AllocateResponse{Devices: []*abi.PreparedDevice{{Request: "r", Pool: "p", Device: "d",
			Status: &abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Ready", Status: "True"}},
				NetworkData: &abi.NetworkDeviceData{Ips: []string{"10.0.0.1/24", "fd00::1/64"}, InterfaceName: "eth0"}}}}}, claim), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkField(t, tt.err, tt.wantField) })
	}
}

func checkField(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected refusal: %v", err)
		}
		return
	}
	var ve *validate.Error
	if !errors.As(err, &ve) || ve.Field != want {
		t.Fatalf("err = %v, want a refusal of %s", err, want)
	}
}

// mustLimits is validate.New, failing tb on an error.
func mustLimits(tb testing.TB, topo *abi.Topology, opts ...validate.Option) *validate.Limits {
	tb.Helper()
	l, err := validate.New(topo, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// TestOptionsRefuseBadValues: a missing topology or a bad option value is
// New's error, naming it and its limit, instead of limits that refuse every
// cpuset.
func TestOptionsRefuseBadValues(t *testing.T) {
	for _, tc := range []struct {
		topo *abi.Topology
		opt  validate.Option
		want string
	}{
		{nil, validate.WithAvailableCPUs([]uint32{0}), "topology: nil"},
		{node(), validate.WithAvailableCPUs(nil), "available CPUs: empty: must name at least one CPU"},
		{node(), validate.WithAvailableCPUs([]uint32{}), "available CPUs: empty"},
		{node(), validate.WithAvailableCPUs([]uint32{64, 65}), `available CPUs "64-65": none is among the node's online CPUs "0-7"`},
	} {
		if l, err := validate.New(tc.topo, tc.opt); err == nil || l != nil {
			t.Errorf("New = %v, %v; want an error with %q", l, err, tc.want)
		} else {
			testkit.ErrorContains(t, err, tc.want)
		}
	}
}
