package scenario

import (
	"context"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// recorder is a policy that keeps every request and answers from annotations:
// "cpus"/"mems" set the adjustment, "move" and "moveTo" send an update to
// other containers (a comma-separated "move" as one group).
type recorder struct {
	inits   []*abi.InitRequest
	creates []*abi.CreateContainerRequest
	updates []*abi.UpdateContainerRequest
}

func (*recorder) Describe() policy.Description {
	return policy.Description{Name: "recorder", Version: "0.1.0", Summary: "records requests"}
}

func (p *recorder) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	p.inits = append(p.inits, r.CloneVT())
	return &abi.InitResponse{}, nil
}

func (p *recorder) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	p.creates = append(p.creates, r.CloneVT())
	a := r.Container.Annotations
	resp := &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{CpusetCpus: a["cpus"], CpusetMems: a["mems"]}}
	if a["move"] != "" {
		ids := strings.Split(a["move"], ",")
		resp.Updates = []*abi.ContainerUpdate{{ContainerId: ids[0], AlsoContainerIds: ids[1:], CpusetCpus: a["moveTo"]}}
	}
	return resp, nil
}

func (p *recorder) UpdateContainer(r *abi.UpdateContainerRequest) (*abi.UpdateContainerResponse, error) {
	p.updates = append(p.updates, r.CloneVT())
	return &abi.UpdateContainerResponse{Updates: []*abi.ContainerUpdate{{ContainerId: r.Container.Id, CpusetMems: "1"}}}, nil
}

// TestRunnerGroups: a grouped update is checked as the agent checks it (a
// member that is not running is named as sent) and reported per container.
func TestRunnerGroups(t *testing.T) {
	sc, err := Parse([]byte(`
steps:
  - pod: {name: p, containers: [{name: a, annotations: {cpus: "0"}}, {name: b, annotations: {cpus: "1"}}]}
  - pod: {name: q, containers: [{name: c, annotations: {cpus: "2", move: "p-a,p-b", moveTo: "0-1"}}]}
  - pod: {name: r, containers: [{name: d, annotations: {cpus: "3", move: "p-a,ghost", moveTo: "3"}}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := native.New(&recorder{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(fourCPUs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Init(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	report, err := r.Run(context.Background(), tr, sc)
	if err != nil {
		t.Fatal(err)
	}
	from := "CreateContainer default/q/c"
	if s := report.Steps[1]; len(s.Updates) != 2 || s.Updates[0] != (UpdateReport{From: from, Container: "p-a", CPUs: "0-1"}) || s.Updates[1] != (UpdateReport{From: from, Container: "p-b", CPUs: "0-1"}) {
		t.Errorf("step 1 updates: %+v, want p-a and p-b to 0-1", s.Updates)
	}
	if s := report.Steps[2]; len(s.Updates) != 0 || len(s.Errors) != 1 || s.Errors[0].Field != "updates[0].also_container_ids[0]" {
		t.Errorf("step 2: updates %+v, errors %+v; want one refusal naming updates[0].also_container_ids[0]", s.Updates, s.Errors)
	}
}

func fourCPUs() *abi.Topology {
	t := &abi.Topology{}
	for id := range uint32(4) {
		t.Cpus = append(t.Cpus, &abi.CPU{Id: id, NumaNode: id / 2})
	}
	t.NumaNodes = []*abi.NUMANode{{Id: 0, Cpus: []uint32{0, 1}}, {Id: 1, Cpus: []uint32{2, 3}}}
	return t
}

func TestRunnerKeepsNodeState(t *testing.T) {
	sc, err := Parse([]byte(`
steps:
  - pod: {name: p, containers: [{name: a, annotations: {cpus: "0-3", mems: "0-1"}}]}
  - pod: {name: q, containers: [{name: b, annotations: {cpus: "2", move: p-a, moveTo: "0-1"}}]}
  - pod: {name: bad, containers: [{name: c, annotations: {cpus: "4"}}, {name: d, annotations: {mems: "2"}}, {name: e, annotations: {move: ghost, moveTo: "0"}}]}
  - update: {container: p/a, resources: {requests: {cpu: 500m}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	tr, err := native.New(rec)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(fourCPUs(), []byte("cfg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Init(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	report, err := r.Run(context.Background(), tr, sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.inits) != 1 || string(rec.inits[0].Config) != "cfg" || rec.inits[0].NodeName != NodeName {
		t.Errorf("inits: %v", rec.inits)
	}
	if s := report.Steps[1]; len(s.Updates) != 1 || s.Updates[0] != (UpdateReport{From: "CreateContainer default/q/b", Container: "p-a", CPUs: "0-1"}) {
		t.Errorf("step 1 updates: %+v", s.Updates)
	}
	var fields []string
	for _, e := range report.Steps[2].Errors {
		fields = append(fields, e.Kind+" "+e.Field)
	}
	if got := strings.Join(fields, ", "); got != "invalid adjustment.cpuset_cpus, invalid adjustment.cpuset_mems, invalid updates[0].container_id" {
		t.Errorf("step 2 errors: %s", got)
	}
	u := rec.updates[0]
	if c := u.Container; c.Resources.CpusetCpus != "0-1" || c.Resources.CpusetMems != "0-1" || c.Assignment.GetCpusetCpus() != "0-1" || c.State != abi.ContainerState_CONTAINER_STATE_RUNNING {
		t.Errorf("UpdateContainer carries the container as %v; want its current cpuset and assignment", c)
	}
	if u.Resources.CpuRequestMilli != 500 || u.Resources.CpusetCpus != "0-1" {
		t.Errorf("UpdateContainer resources %v", u.Resources)
	}
	want := []FinalContainer{{ID: "p-a", CPUs: "0-1", Mems: "1"}, {ID: "q-b", CPUs: "2"}}
	if got := report.Final.Containers; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("final %+v, want %+v", got, want)
	}
	if c := r.node.containers["p-a"]; c.Resources.CpuRequestMilli != 500 {
		t.Errorf("p-a's resources after the update: %v", c.Resources)
	}
	if j := r.node.journal(); len(j.Pods) != 3 || len(j.Containers) != 2 || j.Containers[0].Assignment.GetCpusetMems() != "1" {
		t.Errorf("journal %v", j)
	}
}
