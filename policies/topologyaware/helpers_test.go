package topologyaware_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/native"
)

// machines are the fixture machines the tests run on.
var machines = []struct {
	name string
	m    func() topologytest.Machine
}{
	{"Desktop1Socket", topologytest.Desktop1Socket},
	{"Server2Socket4NodesInterleaved", topologytest.Server2Socket4NodesInterleaved},
	{"Server4Socket144CPU", topologytest.Server4Socket144CPU},
	{"PMEM112CPUIsolated", topologytest.PMEM112CPUIsolated},
}

// smallMachines are fixtures of single tests, not of every suite.
var smallMachines = []struct {
	name string
	m    func() topologytest.Machine
}{
	{"TwoCPU", func() topologytest.Machine {
		return topologytest.Machine{Sockets: 1, CoresPerNode: 2, ThreadsPerCore: 1, MemPerNodeGiB: 4}
	}},
	{"TwoL3", func() topologytest.Machine {
		return topologytest.Machine{Sockets: 1, CoresPerNode: 8, ThreadsPerCore: 2, L3PerNode: 2, MemPerNodeGiB: 16}
	}},
	{"HBMAndPMEM", func() topologytest.Machine {
		return topologytest.Machine{Sockets: 2, CoresPerNode: 4, ThreadsPerCore: 1, MemPerNodeGiB: 16,
			CPULessNodes: []topologytest.CPULessNode{
				{Kind: abi.MemoryKind_MEMORY_KIND_HBM, Socket: 0, SizeGiB: 16},
				{Kind: abi.MemoryKind_MEMORY_KIND_PMEM, Socket: 0, SizeGiB: 64},
				{Kind: abi.MemoryKind_MEMORY_KIND_PMEM, Socket: 1, SizeGiB: 64},
			}}
	}},
}

var (
	topoMu    sync.Mutex
	topoCache = map[string]*abi.Topology{}
)

// machineTopology writes a fixture machine and discovers it, once per name.
func machineTopology(tb testing.TB, name string) *abi.Topology {
	tb.Helper()
	topoMu.Lock()
	defer topoMu.Unlock()
	if t := topoCache[name]; t != nil {
		return t
	}
	for _, m := range append(append(machines, bigMachines...), smallMachines...) {
		if m.name != name {
			continue
		}
		dir := tb.TempDir()
		if err := m.m().Write(dir); err != nil {
			tb.Fatalf("write %s: %v", name, err)
		}
		t, err := topology.Discover(dir)
		if err != nil {
			tb.Fatalf("discover %s: %v", name, err)
		}
		topoCache[name] = t
		return t
	}
	tb.Fatalf("no machine %s", name)
	return nil
}

// harness drives one policy instance through the native runner and keeps
// what the runtime would hold: every container's current cpuset and mems,
// with each adjustment and update applied.
type harness struct {
	tb     testing.TB
	client *abi.Client
	topo   *abi.Topology
	config string
	pods   map[string]*abi.PodSandbox
	ctrs   map[string]*abi.Container // as created, with Assignment kept current
	order  []string
	claims []*abi.PreparedClaim // prepared, in order
}

func newHarness(tb testing.TB, machine, config string) *harness {
	tb.Helper()
	h, err := tryHarness(tb, machine, config, nil)
	if err != nil {
		tb.Fatalf("Init: %v", err)
	}
	return h
}

// opener starts a policy instance on a machine: natively (tryHarness) or
// natively and in Wasm at once (the identity suite).
type opener func(tb testing.TB, machine, config string, restore *abi.RestoreState) (*harness, error)

func tryHarness(tb testing.TB, machine, config string, restore *abi.RestoreState) (*harness, error) {
	r, err := native.New(topologyaware.New())
	if err != nil {
		tb.Fatal(err)
	}
	return openOn(tb, r, machine, config, restore)
}

func openOn(tb testing.TB, t abi.Transport, machine, config string, restore *abi.RestoreState) (*harness, error) {
	h := &harness{tb: tb, client: abi.NewClient(t), topo: machineTopology(tb, machine), config: config,
		pods: map[string]*abi.PodSandbox{}, ctrs: map[string]*abi.Container{}}
	_, err := h.client.Init(context.Background(), &abi.InitRequest{Config: []byte(config), NodeName: "n1", Topology: h.topo, Restore: restore})
	return h, err
}

// spec describes a test container.
type spec struct {
	id, ns      string
	qos         abi.QOSClass
	milli       int64
	limit       int64 // CPU limit, milli-CPU; 0: none
	annotations map[string]string
	cdi         []string
	env         []*abi.KeyValue
	pod, name   string // pod and container name; default "pod-"+id and "c"
}

func guaranteed(id string, milli int64) spec {
	return spec{id: id, ns: "default", qos: abi.QOSClass_QOS_CLASS_GUARANTEED, milli: milli}
}
func burstable(id string, milli int64) spec {
	return spec{id: id, ns: "default", qos: abi.QOSClass_QOS_CLASS_BURSTABLE, milli: milli}
}
func bestEffort(id string) spec {
	return spec{id: id, ns: "default", qos: abi.QOSClass_QOS_CLASS_BEST_EFFORT}
}
func system(id string, milli int64) spec {
	return spec{id: id, ns: "kube-system", qos: abi.QOSClass_QOS_CLASS_BURSTABLE, milli: milli}
}
func (s spec) in(ns string) spec { s.ns = ns; return s }

// of makes the container name of pod pod (one pod object per name).
func (s spec) of(pod, name string) spec { s.pod, s.name = pod, name; return s }
func (s spec) limited(milli int64) spec { s.limit = milli; return s }
func (s spec) with(k, v string) spec {
	a := map[string]string{k: v}
	for k, v := range s.annotations {
		a[k] = v
	}
	s.annotations = a
	return s
}

func (s spec) request() *abi.CreateContainerRequest {
	pod := &abi.PodSandbox{Id: "pod-" + s.id, Uid: "uid-" + s.id, Name: "pod-" + s.id, Namespace: s.ns, QosClass: s.qos, Annotations: s.annotations}
	name := "c"
	if s.pod != "" {
		pod.Id, pod.Uid, pod.Name, name = "pod-"+s.pod, "uid-"+s.pod, s.pod, s.name
	}
	c := &abi.Container{Id: s.id, PodSandboxId: pod.Id, Name: name, Namespace: s.ns, QosClass: s.qos,
		State: abi.ContainerState_CONTAINER_STATE_CREATED, Resources: &abi.Resources{CpuRequestMilli: s.milli, CpuLimitMilli: s.limit}, CdiDevices: s.cdi, Env: s.env}
	return &abi.CreateContainerRequest{Pod: pod, Container: c}
}

func (h *harness) tryCreate(s spec) (*abi.CreateContainerResponse, error) {
	req := s.request()
	resp, err := h.client.CreateContainer(context.Background(), req)
	if err != nil {
		return nil, err
	}
	req.Container.Assignment = resp.Adjustment
	h.pods[req.Pod.Id], h.ctrs[s.id] = req.Pod, req.Container
	h.order = append(h.order, s.id)
	h.apply(resp.Updates)
	return resp, nil
}

func (h *harness) create(s spec) *abi.CreateContainerResponse {
	h.tb.Helper()
	resp, err := h.tryCreate(s)
	if err != nil {
		h.tb.Fatalf("CreateContainer(%s): %v", s.id, err)
	}
	return resp
}

func (h *harness) remove(id string) []*abi.ContainerUpdate {
	h.tb.Helper()
	c := h.ctrs[id]
	resp, err := h.client.RemoveContainer(context.Background(), &abi.RemoveContainerRequest{Pod: h.pods[c.GetPodSandboxId()], Container: c})
	if err != nil {
		h.tb.Fatalf("RemoveContainer(%s): %v", id, err)
	}
	delete(h.ctrs, id)
	for i, o := range h.order {
		if o == id {
			h.order = append(h.order[:i:i], h.order[i+1:]...)
			break
		}
	}
	h.apply(resp.Updates)
	return resp.Updates
}

// apply records updates as the runtime would, checking their order.
func (h *harness) apply(updates []*abi.ContainerUpdate) {
	h.tb.Helper()
	for i, u := range updates {
		if i > 0 && updates[i-1].ContainerId >= u.ContainerId {
			h.tb.Errorf("updates not sorted by id: %q before %q", updates[i-1].ContainerId, u.ContainerId)
		}
		c := h.ctrs[u.ContainerId]
		if c == nil {
			h.tb.Fatalf("update for unknown container %q", u.ContainerId)
		}
		if u.CpusetCpus != "" {
			c.Assignment.CpusetCpus = u.CpusetCpus
		}
		if u.CpusetMems != "" {
			c.Assignment.CpusetMems = u.CpusetMems
		}
	}
}

// restoreState is what the host journal holds: pods and containers with
// their current assignment.
func (h *harness) restoreState() *abi.RestoreState {
	rs := &abi.RestoreState{Claims: h.claims}
	for _, id := range h.order {
		c := h.ctrs[id]
		rs.Pods = append(rs.Pods, h.pods[c.PodSandboxId])
		rc := c.CloneVT()
		rc.State = abi.ContainerState_CONTAINER_STATE_RUNNING
		rs.Containers = append(rs.Containers, rc)
	}
	return rs
}

func wantError(tb testing.TB, err error, code abi.ErrorCode, field string) {
	tb.Helper()
	pe, ok := errors.AsType[*abi.PolicyError](err)
	if !ok {
		tb.Fatalf("error %v (%T), want a PolicyError %v on %q", err, err, code, field)
	}
	if pe.Code != code || pe.Field != field {
		tb.Fatalf("error %v, want code %v on field %q", err, code, field)
	}
}

func mustSet(tb testing.TB, s string) cpuset.Set {
	tb.Helper()
	set, err := cpuset.Parse(s)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return set
}

func fmtIDs(n int, prefix string) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%04d", prefix, i)
	}
	return ids
}
