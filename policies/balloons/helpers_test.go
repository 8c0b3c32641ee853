package balloons_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/policies/balloons"
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
	for _, m := range slices.Concat(machines, bigMachines, fidelityMachines) {
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

// harness drives one policy instance and keeps what the runtime would hold:
// every container's current cpuset and mems, with each adjustment and
// update applied. After every call that changes something it checks the
// invariants (check).
type harness struct {
	tb     testing.TB
	client *abi.Client
	topo   *abi.Topology
	config string
	pods   map[string]*abi.PodSandbox
	ctrs   map[string]*abi.Container // as created, with Assignment kept current
	order  []string
	claims []*abi.PreparedClaim
	// noCheck turns the invariant checks off (benchmarks).
	noCheck bool
}

// opener starts a policy instance on a machine: natively, or natively and
// in Wasm at once (the identity suite).
type opener func(tb testing.TB, machine, config string, restore *abi.RestoreState) (*harness, error)

func nativeOpen(tb testing.TB, machine, config string, restore *abi.RestoreState) (*harness, error) {
	r, err := native.New(balloons.New())
	if err != nil {
		tb.Fatal(err)
	}
	return openOn(tb, r, machine, config, restore)
}

func openOn(tb testing.TB, t abi.Transport, machine, config string, restore *abi.RestoreState) (*harness, error) {
	h := &harness{tb: tb, client: abi.NewClient(t), topo: machineTopology(tb, machine), config: config,
		pods: map[string]*abi.PodSandbox{}, ctrs: map[string]*abi.Container{}}
	_, err := h.client.Init(context.Background(), &abi.InitRequest{Config: []byte(config), NodeName: "n1", Topology: h.topo, Restore: restore})
	if err == nil && restore != nil {
		for _, p := range restore.Pods {
			h.pods[p.Id] = p
		}
		for _, c := range restore.Containers {
			h.ctrs[c.Id] = c.CloneVT()
			h.order = append(h.order, c.Id)
		}
		h.claims = restore.Claims
	}
	return h, err
}

func mustOpen(tb testing.TB, open opener, machine, config string) *harness {
	tb.Helper()
	h, err := open(tb, machine, config, nil)
	if err != nil {
		tb.Fatalf("Init(%q): %v", config, err)
	}
	h.check()
	return h
}

// spec describes a test container.
type spec struct {
	id, pod, name, ns string
	qos               abi.QOSClass
	milli             int64
	annotations       map[string]string
	labels            map[string]string
	cdi               []string
	env               []*abi.KeyValue
}

func ctr(id string, milli int64) spec {
	return spec{id: id, ns: "default", qos: abi.QOSClass_QOS_CLASS_BURSTABLE, milli: milli}
}
func (s spec) in(ns string) spec        { s.ns = ns; return s }
func (s spec) ofPod(pod string) spec    { s.pod = pod; return s }
func (s spec) named(name string) spec   { s.name = name; return s }
func (s spec) withCDI(d ...string) spec { s.cdi = d; return s }
func (s spec) with(k, v string) spec {
	a := map[string]string{k: v}
	for k, v := range s.annotations {
		a[k] = v
	}
	s.annotations = a
	return s
}
func (s spec) label(k, v string) spec {
	l := map[string]string{k: v}
	for k, v := range s.labels {
		l[k] = v
	}
	s.labels = l
	return s
}

func (s spec) request() *abi.CreateContainerRequest {
	pod := s.pod
	if pod == "" {
		pod = "pod-" + s.id
	}
	name := s.name
	if name == "" {
		name = "c"
	}
	p := &abi.PodSandbox{Id: pod, Uid: "uid-" + pod, Name: pod, Namespace: s.ns, QosClass: s.qos, Annotations: s.annotations, Labels: s.labels}
	c := &abi.Container{Id: s.id, PodSandboxId: pod, Name: name, Namespace: s.ns, QosClass: s.qos,
		State: abi.ContainerState_CONTAINER_STATE_CREATED, Resources: &abi.Resources{CpuRequestMilli: s.milli}, CdiDevices: s.cdi, Env: s.env}
	return &abi.CreateContainerRequest{Pod: p, Container: c}
}

func (h *harness) tryCreate(s spec) (*abi.CreateContainerResponse, error) {
	req := s.request()
	resp, err := h.client.CreateContainer(context.Background(), req)
	if err != nil {
		h.check()
		return nil, err
	}
	req.Container.Assignment = resp.Adjustment
	if old := h.pods[req.Pod.Id]; old != nil {
		req.Pod = old
	}
	h.pods[req.Pod.Id], h.ctrs[s.id] = req.Pod, req.Container
	h.order = append(h.order, s.id)
	h.apply(resp.Updates)
	h.check()
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
	h.check()
	return resp.Updates
}

func (h *harness) update(id string, milli int64) ([]*abi.ContainerUpdate, error) {
	h.tb.Helper()
	c := h.ctrs[id]
	res := &abi.Resources{CpuRequestMilli: milli}
	resp, err := h.client.UpdateContainer(context.Background(), &abi.UpdateContainerRequest{Pod: h.pods[c.PodSandboxId], Container: c, Resources: res})
	if err != nil {
		h.check()
		return nil, err
	}
	c.Resources = res
	h.apply(resp.Updates)
	h.check()
	return resp.Updates, nil
}

func (h *harness) reconfigure(config string) error {
	h.tb.Helper()
	resp, err := h.client.Reconfigure(context.Background(), &abi.ReconfigureRequest{Config: []byte(config)})
	if err != nil {
		h.check()
		return err
	}
	h.config = config
	h.apply(resp.Updates)
	h.check()
	return nil
}

// apply records updates as the runtime would, checking that no container is
// updated twice in one answer.
func (h *harness) apply(updates []*abi.ContainerUpdate) {
	h.tb.Helper()
	seen := map[string]bool{}
	for _, u := range updates {
		if seen[u.ContainerId] {
			h.tb.Errorf("container %q updated twice in one answer", u.ContainerId)
		}
		seen[u.ContainerId] = true
		c := h.ctrs[u.ContainerId]
		if c == nil {
			h.tb.Fatalf("update for unknown container %q", u.ContainerId)
		}
		if c.Assignment == nil {
			c.Assignment = &abi.ContainerAdjustment{}
		}
		if u.CpusetCpus != "" {
			c.Assignment.CpusetCpus = u.CpusetCpus
		}
		if u.CpusetMems != "" {
			c.Assignment.CpusetMems = u.CpusetMems
		}
	}
}

// restoreState is what the host journal holds.
func (h *harness) restoreState() *abi.RestoreState {
	rs := &abi.RestoreState{Claims: h.claims}
	seen := map[string]bool{}
	for _, id := range h.order {
		c := h.ctrs[id]
		if p := h.pods[c.PodSandboxId]; !seen[p.Id] {
			seen[p.Id] = true
			rs.Pods = append(rs.Pods, p)
		}
		rc := c.CloneVT()
		rc.State = abi.ContainerState_CONTAINER_STATE_RUNNING
		rs.Containers = append(rs.Containers, rc)
	}
	return rs
}

func (h *harness) dump() balloons.Dump {
	h.tb.Helper()
	resp, err := h.client.DumpState(context.Background(), &abi.DumpStateRequest{})
	if err != nil {
		h.tb.Fatalf("DumpState: %v", err)
	}
	var d balloons.Dump
	if err := json.Unmarshal(resp.Json, &d); err != nil {
		h.tb.Fatalf("dump: %v", err)
	}
	return d
}

// balloonOf is the name of the balloon the policy put a container in.
func (h *harness) balloonOf(id string) string {
	h.tb.Helper()
	for _, c := range h.dump().Containers {
		if c.ID == id {
			return c.Balloon
		}
	}
	h.tb.Fatalf("no container %s", id)
	return ""
}

func (h *harness) balloon(name string) balloons.DumpBalloon {
	h.tb.Helper()
	for _, b := range h.dump().Balloons {
		if b.Name == name {
			return b
		}
	}
	h.tb.Fatalf("no balloon %s", name)
	return balloons.DumpBalloon{}
}

func wantError(tb testing.TB, err error, code abi.ErrorCode, field string) {
	tb.Helper()
	pe, ok := errors.AsType[*abi.PolicyError](err)
	if !ok {
		tb.Fatalf("error %v (%T), want a PolicyError %v on %q", err, err, code, field)
	}
	if pe.Code != code || pe.Field != field {
		tb.Fatalf("error %v (field %q), want code %v on field %q", err, pe.Field, code, field)
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
