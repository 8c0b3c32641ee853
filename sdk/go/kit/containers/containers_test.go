package containers_test

import (
	"errors"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// TestEffective: the most specific scope wins, whichever set holds it; at
// one scope the earlier set wins.
func TestEffective(t *testing.T) {
	const key = "prefer-shared-cpus.resource-policy.nri.io"
	pod := map[string]string{key: "bare", key + "/pod": "pod", key + "/container.other": "other"}
	own := map[string]string{key + "/container.app": "own", key + "/pod": "own pod"}
	for _, tc := range []struct {
		name  string
		sets  []map[string]string
		want  containers.Annotation
		found bool
	}{
		{"pod only", []map[string]string{pod}, containers.Annotation{Key: key + "/pod", Value: "pod", Scope: containers.ScopePod}, true},
		{"container's own, more specific", []map[string]string{pod, own}, containers.Annotation{Key: key + "/container.app", Value: "own", Scope: containers.ScopeContainer}, true},
		{"same scope, earlier set", []map[string]string{own, pod}, containers.Annotation{Key: key + "/container.app", Value: "own", Scope: containers.ScopeContainer}, true},
		{"bare", []map[string]string{{key: "x"}}, containers.Annotation{Key: key, Value: "x", Scope: containers.ScopeBare}, true},
		{"none", []map[string]string{nil, {}}, containers.Annotation{}, false},
		{"another container's", []map[string]string{{key + "/container.other": "x"}}, containers.Annotation{}, false},
	} {
		got, ok := containers.Effective(key, "app", tc.sets...)
		if got != tc.want || ok != tc.found {
			t.Errorf("%s: Effective = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.found)
		}
	}
}

// TestEffectiveAllocations: a lookup allocates only the key it finds.
func TestEffectiveAllocations(t *testing.T) {
	const key = "prefer-shared-cpus.resource-policy.nri.io"
	pod := map[string]string{"kubernetes.io/config.seen": "now", "app": "web"}
	if n := testing.AllocsPerRun(100, func() { containers.Effective(key, "app", pod) }); n != 0 {
		t.Errorf("a lookup that finds nothing allocates %v times, want none", n)
	}
	pod[key+"/container.app"] = "x"
	if n := testing.AllocsPerRun(100, func() { containers.Effective(key, "app", pod) }); n != 1 {
		t.Errorf("a lookup that finds the key allocates %v times, want once (the key)", n)
	}
}

// TestBool: a boolean is parsed; a value that is not one counts as unset.
func TestBool(t *testing.T) {
	c := &abi.Container{Id: "c1", Name: "app"}
	for _, tc := range []struct {
		value     string
		want, set bool
	}{{"true", true, true}, {"0", false, true}, {"maybe", false, false}} {
		v, set := containers.Bool("k", c, map[string]string{"k/pod": tc.value})
		if v != tc.want || set != tc.set {
			t.Errorf("%q: Bool = %v, %v; want %v, %v", tc.value, v, set, tc.want, tc.set)
		}
	}
	if v, set := containers.Bool("k", c); v || set {
		t.Errorf("no annotations: Bool = %v, %v", v, set)
	}
	if _, err := (containers.Annotation{Key: "k/pod", Value: "maybe"}).Bool(); err == nil || err.Error() != `k/pod="maybe": not a boolean` {
		t.Errorf("Bool error = %v; want one naming the key and the value", err)
	}
}

// TestRepeated: a repeat gets its first adjustment, a new container none,
// an empty id is refused on container.id.
func TestRepeated(t *testing.T) {
	placed := map[string]string{"c1": "0-3"}
	adjustment := func(cpus string) *abi.ContainerAdjustment { return &abi.ContainerAdjustment{CpusetCpus: cpus} }
	req := func(id string) *abi.CreateContainerRequest {
		return &abi.CreateContainerRequest{Container: &abi.Container{Id: id}}
	}
	if resp, err := containers.Repeated(req("c1"), placed, adjustment); err != nil || resp.GetAdjustment().GetCpusetCpus() != "0-3" || len(resp.GetUpdates()) != 0 {
		t.Errorf("a repeat: %v, %v; want the first adjustment", resp, err)
	}
	if resp, err := containers.Repeated(req("c2"), placed, adjustment); resp != nil || err != nil {
		t.Errorf("a new container: %v, %v; want none", resp, err)
	}
	var pe *abi.PolicyError
	if _, err := containers.Repeated(req(""), placed, adjustment); !errors.As(err, &pe) || pe.Field != "container.id" || pe.Code != abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT {
		t.Errorf("no id: %v; want INVALID_ARGUMENT on container.id", err)
	}
}

// TestCreate: a new container is placed and answered with its adjustment
// and updates; a repeat is not placed again; a refused placement is the
// answer's error.
func TestCreate(t *testing.T) {
	placed := map[string]string{}
	adjustment := func(cpus string) *abi.ContainerAdjustment { return &abi.ContainerAdjustment{CpusetCpus: cpus} }
	places := 0
	place := func(_ *abi.PodSandbox, c *abi.Container) (string, error) {
		places++
		if c.GetName() == "big" {
			return "", abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources", "no room")
		}
		placed[c.GetId()] = "0-1"
		return "0-1", nil
	}
	updates := func(string) []*abi.ContainerUpdate { return []*abi.ContainerUpdate{{ContainerId: "other"}} }
	req := &abi.CreateContainerRequest{Container: &abi.Container{Id: "c1"}}
	resp, err := containers.Create(req, placed, adjustment, place, updates)
	if err != nil || resp.GetAdjustment().GetCpusetCpus() != "0-1" || len(resp.GetUpdates()) != 1 {
		t.Fatalf("a new container: %v, %v", resp, err)
	}
	if resp, err := containers.Create(req, placed, adjustment, place, updates); err != nil || places != 1 || len(resp.GetUpdates()) != 0 {
		t.Errorf("a repeat: %v, %v after %d placements; want the first adjustment, no updates, one placement", resp, err, places)
	}
	big := &abi.CreateContainerRequest{Container: &abi.Container{Id: "c2", Name: "big"}}
	if resp, err := containers.Create(big, placed, adjustment, place, updates); err == nil || resp != nil {
		t.Errorf("a refused placement: %v, %v; want its error", resp, err)
	}
}

// TestForget: StopContainer and RemoveContainer both call the function with
// the container's id and answer its updates; a policy embedding Forget
// serves both handlers.
func TestForget(t *testing.T) {
	var forgotten []string
	f := containers.Forget(func(id string) []*abi.ContainerUpdate {
		forgotten = append(forgotten, id)
		return []*abi.ContainerUpdate{{ContainerId: "other-of-" + id}}
	})
	stop, err := f.StopContainer(&abi.StopContainerRequest{Container: &abi.Container{Id: "c1"}})
	if err != nil || len(stop.GetUpdates()) != 1 || stop.GetUpdates()[0].GetContainerId() != "other-of-c1" {
		t.Errorf("StopContainer = %v, %v; want the update for other-of-c1", stop, err)
	}
	remove, err := f.RemoveContainer(&abi.RemoveContainerRequest{Container: &abi.Container{Id: "c2"}})
	if err != nil || len(remove.GetUpdates()) != 1 || remove.GetUpdates()[0].GetContainerId() != "other-of-c2" {
		t.Errorf("RemoveContainer = %v, %v; want the update for other-of-c2", remove, err)
	}
	if len(forgotten) != 2 || forgotten[0] != "c1" || forgotten[1] != "c2" {
		t.Errorf("forgot %v, want [c1 c2]", forgotten)
	}
	var p any = struct{ containers.Forget }{f}
	if _, ok := p.(policy.ContainerStopper); !ok {
		t.Error("a type embedding Forget is no policy.ContainerStopper")
	}
	if _, ok := p.(policy.ContainerRemover); !ok {
		t.Error("a type embedding Forget is no policy.ContainerRemover")
	}
}
