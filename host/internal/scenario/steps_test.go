package scenario

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/native"
)

// lifecycleRecorder is a recorder that also keeps the calls' order and the
// Synchronize it was sent, and prepares one device per allocation result.
type lifecycleRecorder struct {
	recorder
	calls []string
	syncs []*abi.SynchronizeRequest
}

func (p *lifecycleRecorder) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	p.calls = append(p.calls, "create "+r.Container.Name)
	return p.recorder.CreateContainer(r)
}

func (p *lifecycleRecorder) StopContainer(r *abi.StopContainerRequest) (*abi.StopContainerResponse, error) {
	p.calls = append(p.calls, "stop "+r.Container.Name)
	return &abi.StopContainerResponse{}, nil
}

func (p *lifecycleRecorder) RemoveContainer(r *abi.RemoveContainerRequest) (*abi.RemoveContainerResponse, error) {
	p.calls = append(p.calls, "remove "+r.Container.Name)
	return &abi.RemoveContainerResponse{}, nil
}

func (p *lifecycleRecorder) Synchronize(r *abi.SynchronizeRequest) (*abi.SynchronizeResponse, error) {
	p.syncs = append(p.syncs, r.CloneVT())
	return &abi.SynchronizeResponse{}, nil
}

func (p *lifecycleRecorder) Allocate(r *abi.AllocateRequest) (*abi.AllocateResponse, error) {
	resp := &abi.AllocateResponse{}
	for _, d := range r.Claim.Results {
		resp.Devices = append(resp.Devices, &abi.PreparedDevice{Request: d.Request, Pool: d.Pool, Device: d.Device})
	}
	return resp, nil
}

func runSteps(t *testing.T, scenario string, policies ...*lifecycleRecorder) *Report {
	t.Helper()
	sc, err := Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tr, err := native.New(policies[0])
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(fourCPUs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Init(ctx, tr); err != nil {
		t.Fatal(err)
	}
	next := policies[1:]
	r.SetRestarter(func(ctx context.Context) (abi.Transport, error) {
		tr, err := native.New(next[0])
		next = next[1:]
		if err != nil {
			return nil, err
		}
		return tr, r.Init(ctx, tr)
	})
	report, err := r.Run(ctx, tr, sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range report.Steps {
		for _, e := range s.Errors {
			t.Errorf("step %d: %+v", s.Step, e)
		}
	}
	return report
}

// Init containers run one at a time, each stopped and removed before the
// next is created; they count in the pod's QoS class and are reported apart.
func TestInitContainers(t *testing.T) {
	p := &lifecycleRecorder{}
	report := runSteps(t, `
steps:
  - pod:
      name: p
      initContainers:
        - {name: i0, resources: {limits: {cpu: "1", memory: 1Gi}}, annotations: {cpus: "0"}}
        - {name: i1, resources: {limits: {cpu: "1", memory: 1Gi}}, annotations: {cpus: "1"}}
      containers:
        - {name: a, resources: {limits: {cpu: "1", memory: 1Gi}}, annotations: {cpus: "2"}}
`, p)
	want := []string{"create i0", "stop i0", "remove i0", "create i1", "stop i1", "remove i1", "create a"}
	if !slices.Equal(p.calls, want) {
		t.Errorf("calls %v, want %v", p.calls, want)
	}
	s := report.Steps[0]
	if len(s.InitContainers) != 2 || s.InitContainers[1].Name != "i1" || s.InitContainers[1].CPUs != "1" {
		t.Errorf("init containers reported as %+v", s.InitContainers)
	}
	if len(s.Containers) != 1 || len(report.Final.Containers) != 1 || report.Final.Containers[0].ID != "p-a" {
		t.Errorf("containers %+v, final %+v; want only p-a live", s.Containers, report.Final.Containers)
	}
	for _, c := range p.creates {
		if c.Container.QosClass != abi.QOSClass_QOS_CLASS_GUARANTEED {
			t.Errorf("%s: QoS %v", c.Container.Name, c.Container.QosClass)
		}
	}
	// An init container without limits makes the pod Burstable, as in Kubernetes.
	p = &lifecycleRecorder{}
	runSteps(t, `
steps:
  - pod:
      name: p
      initContainers: [{name: i0}]
      containers: [{name: a, resources: {limits: {cpu: "1", memory: 1Gi}}}]
`, p)
	if q := p.creates[1].Pod.QosClass; q != abi.QOSClass_QOS_CLASS_BURSTABLE {
		t.Errorf("pod QoS %v, want Burstable", q)
	}
}

// A container step adds a container to a live pod, with the pod's QoS class.
func TestContainerStep(t *testing.T) {
	p := &lifecycleRecorder{}
	report := runSteps(t, `
steps:
  - pod: {name: p, containers: [{name: a, resources: {limits: {cpu: "1", memory: 1Gi}}, annotations: {cpus: "0"}}]}
  - remove: p/a
  - container: {pod: p, name: a, resources: {limits: {cpu: "1", memory: 1Gi}}, annotations: {cpus: "1"}}
  - container: {pod: p, name: b, annotations: {cpus: "2"}}
`, p)
	if got := report.Steps[3]; got.Target != "default/p/b" || len(got.Containers) != 1 || got.Containers[0].CPUs != "2" {
		t.Errorf("step 3: %+v", got)
	}
	b := p.creates[2]
	if b.Pod.Name != "p" || b.Container.PodSandboxId != "p" || b.Container.QosClass != abi.QOSClass_QOS_CLASS_GUARANTEED {
		t.Errorf("CreateContainer for b: pod %v, container %v", b.Pod, b.Container)
	}
	if f := report.Final.Containers; len(f) != 2 || f[0] != (FinalContainer{ID: "p-a", CPUs: "1"}) || f[1].ID != "p-b" {
		t.Errorf("final %+v", f)
	}
	for _, bad := range []struct{ scenario, want string }{
		{`steps: [{container: {pod: ghost, name: a}}]`, `steps[0].container.pod: no pod "ghost"`},
		{`steps: [{pod: {name: p, containers: [{name: a}]}}, {container: {pod: p, name: a}}]`, `steps[1].container.name: pod "p" already has a container "a"`},
		{`steps: [{pod: {name: p, initContainers: [{name: a}], containers: [{name: a}]}}]`, `steps[0].pod.containers[0].name: container "a" appears twice`},
		{`steps: [{pod: {name: p, containers: [{name: a, claims: [c]}]}}]`, `steps[0].pod.containers[0].claims[0]: no allocated claim "default/c"`},
	} {
		if _, err := Parse([]byte(bad.scenario)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: got %v, want %q", bad.scenario, err, bad.want)
		}
	}
}

// A container naming a claim gets the CDI device the host writes for each of
// the claim's prepared devices, under the driver Init named.
func TestContainerClaims(t *testing.T) {
	p := &lifecycleRecorder{}
	runSteps(t, `
steps:
  - claim: {name: accel, namespace: ns, uid: u-1, results: [{request: r, device: d0}, {request: r, device: d1}]}
  - pod: {name: p, namespace: ns, containers: [{name: a, claims: [accel], cdiDevices: [vendor.com/x=y]}]}
  - container: {pod: p, name: b, claims: [ns/accel]}
`, p)
	if d := p.inits[0].DriverName; d != "recorder.nri.io" {
		t.Errorf("Init driver name %q", d)
	}
	want := []string{"vendor.com/x=y", "recorder.nri.io/claim=u-1-0", "recorder.nri.io/claim=u-1-1"}
	if got := p.creates[0].Container.CdiDevices; !slices.Equal(got, want) {
		t.Errorf("a's CDI devices %v, want %v", got, want)
	}
	if got := p.creates[1].Container.CdiDevices; !slices.Equal(got, want[1:]) {
		t.Errorf("b's CDI devices %v, want %v", got, want[1:])
	}
}

// A restart step starts a new instance whose Init restores the journal as
// the agent's checkpoint holds it (sorted by id), then sends the runtime's
// Synchronize with the journaled assignments put back; placements survive.
func TestRestartStep(t *testing.T) {
	before, after := &lifecycleRecorder{}, &lifecycleRecorder{}
	report := runSteps(t, `
steps:
  - pod: {name: z, containers: [{name: a, annotations: {cpus: "0", mems: "0"}}]}
  - claim: {name: accel, results: [{request: r, device: d0}]}
  - pod: {name: b, containers: [{name: a, claims: [accel], annotations: {cpus: "2-3"}}]}
  - restart: {}
  - pod: {name: c, containers: [{name: a, annotations: {cpus: "1"}}]}
`, before, after)
	if len(after.inits) != 1 {
		t.Fatalf("the new instance got %d Inits", len(after.inits))
	}
	rs := after.inits[0].Restore
	var ids []string
	for _, c := range rs.Containers {
		ids = append(ids, c.Id+"="+c.Assignment.GetCpusetCpus())
	}
	if !slices.Equal(ids, []string{"b-a=2-3", "z-a=0"}) || len(rs.Pods) != 2 || rs.Pods[0].Id != "b" || len(rs.Claims) != 1 {
		t.Errorf("restored %v pods %d claims %d; want both containers by id, with assignments", ids, len(rs.Pods), len(rs.Claims))
	}
	if len(after.syncs) != 1 || len(after.syncs[0].Containers) != 2 || after.syncs[0].Containers[1].Assignment.GetCpusetMems() != "0" {
		t.Fatalf("Synchronize %v", after.syncs)
	}
	s := report.Steps[3]
	if !slices.Equal(s.Calls, []string{"Init (restoring 2 pods, 2 containers, 1 claims)", "Synchronize"}) {
		t.Errorf("restart calls %v", s.Calls)
	}
	if len(s.Containers) != 2 || s.Containers[0].CPUs != "0" || s.Containers[1].CPUs != "2-3" {
		t.Errorf("restart reports %+v", s.Containers)
	}
	if len(before.creates) != 2 || len(after.creates) != 1 || after.creates[0].Container.Name != "a" {
		t.Errorf("creates before %d, after %d", len(before.creates), len(after.creates))
	}
}

// A restart step's exited containers: the runtime's Synchronize lists each
// one's removed predecessor of the same name, exited (STOPPED, its own id, no
// assignment), right before it, as after a runtime restart that killed the
// containers and the kubelet created them again.
func TestRestartListsExited(t *testing.T) {
	before, after := &lifecycleRecorder{}, &lifecycleRecorder{}
	runSteps(t, `
steps:
  - pod: {name: p, containers: [{name: a, annotations: {cpus: "0"}}, {name: b, annotations: {cpus: "1"}}]}
  - remove: p/a
  - container: {pod: p, name: a, annotations: {cpus: "2"}}
  - restart: {exited: [p/a]}
`, before, after)
	if len(after.syncs) != 1 {
		t.Fatalf("Synchronize %v", after.syncs)
	}
	var got []string
	for _, c := range after.syncs[0].Containers {
		got = append(got, fmt.Sprintf("%s %s %s %s", c.Id, c.Name, c.State, c.Assignment.GetCpusetCpus()))
	}
	want := []string{
		"p-a" + ExitedSuffix + " a CONTAINER_STATE_STOPPED ",
		"p-a a CONTAINER_STATE_RUNNING 2",
		"p-b b CONTAINER_STATE_RUNNING 1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Synchronize lists\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []struct{ scenario, want string }{
		{`steps: [{pod: {name: p, containers: [{name: a}]}}, {restart: {exited: [p/a]}}]`, `steps[1].restart.exited[0]: p/a was not created again after a removal`},
		{`steps: [{pod: {name: p, containers: [{name: a}]}}, {restart: {exited: [p]}}]`, `steps[1].restart.exited[0]: want "pod/container"`},
		{`steps: [{restart: {exited: [q/a]}}]`, `steps[0].restart.exited[0]: no pod "q"`},
		{`steps: [{pod: {name: p, containers: [{name: a}]}}, {remove: p/a}, {container: {pod: p, name: a}}, {restart: {exited: [p/a, p/a]}}]`, `steps[3].restart.exited[1]: p/a listed twice`},
		{`steps: [{pod: {name: p, containers: [{name: a}]}}, {remove: p}, {pod: {name: p, containers: [{name: a}]}}, {restart: {exited: [p/a]}}]`, `steps[3].restart.exited[0]: p/a was not created again`},
		{`steps: [{restart: {gone: []}}]`, `steps[0].restart.gone: unknown field`},
	} {
		if _, err := Parse([]byte(bad.scenario)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: got %v, want %q", bad.scenario, err, bad.want)
		}
	}
}
