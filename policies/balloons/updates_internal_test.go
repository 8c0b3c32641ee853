package balloons

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

func TestListCompare(t *testing.T) {
	old := strings.Repeat("1,", 100) + "3"
	next := strings.Clone(old[:len(old)-1]) + "4"
	same := strings.Clone(old) // equal, but another string in memory
	var l listCompare
	for _, tc := range []struct {
		name       string
		held, next string
		want       bool
	}{
		{"one string", old, old, false},
		{"empty next leaves it alone", old, "", false},
		{"another list", old, next, true},
		{"remembered", old, next, true},
		{"equal lists in two strings", old, same, false},
		{"remembered, equal", old, same, false},
		{"back", next, old, true},
	} {
		if got := l.changed(tc.held, tc.next); got != tc.want {
			t.Errorf("%s: changed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestUpdatesGrouped: a resize of a balloon answers one grouped update for
// its containers that get the same lists (the one just created left out:
// its adjustment says it), and a host older than ABI v1.1 gets them
// expanded, one update per container, by the SDK.
func TestUpdatesGrouped(t *testing.T) {
	const config = "reservedResources: {cpu: 1}\n"
	topo := policytest.Machine(t, "N4C16")
	pod := &abi.PodSandbox{Id: "pod", Namespace: "default"}
	spec := func(id string) *abi.Container {
		return &abi.Container{Id: id, PodSandboxId: pod.Id, Name: id, Resources: &abi.Resources{CpuRequestMilli: 1000}}
	}
	p := New()
	if _, err := p.Init(&abi.InitRequest{Config: []byte(config), Topology: topo}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := p.CreateContainer(&abi.CreateContainerRequest{Pod: pod, Container: spec(id)}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := p.CreateContainer(&abi.CreateContainerRequest{Pod: pod, Container: spec("d")})
	if err != nil {
		t.Fatal(err)
	}
	cpus := resp.Adjustment.CpusetCpus
	want := []*abi.ContainerUpdate{{ContainerId: "a", AlsoContainerIds: []string{"b", "c"}, CpusetCpus: cpus, CpusetMems: resp.Adjustment.CpusetMems}}
	if len(resp.Updates) != 1 || !resp.Updates[0].EqualVT(want[0]) || cap(resp.Updates[0].AlsoContainerIds) != 2 {
		t.Fatalf("updates = %v, want %v", resp.Updates, want)
	}

	// The same through the SDK for a v1.0 host: one update per container.
	d, err := policy.NewDispatcher(New())
	if err != nil {
		t.Fatal(err)
	}
	call := func(m abi.Method, req interface{ MarshalVT() ([]byte, error) }) *abi.Response {
		raw, err := req.MarshalVT()
		if err != nil {
			t.Fatal(err)
		}
		r := d.Dispatch(m, raw)
		if r.GetError() != nil {
			t.Fatalf("%v: %v", m, r.GetError())
		}
		return r
	}
	call(abi.Method_METHOD_INIT, &abi.InitRequest{Config: []byte(config), Topology: topo, HostAbiMinor: 0})
	for _, id := range []string{"a", "b", "c"} {
		call(abi.Method_METHOD_CREATE_CONTAINER, &abi.CreateContainerRequest{Pod: pod, Container: spec(id)})
	}
	got := call(abi.Method_METHOD_CREATE_CONTAINER, &abi.CreateContainerRequest{Pod: pod, Container: spec("d")}).GetCreateContainer().GetUpdates()
	var ids []string
	for _, u := range got {
		if len(u.AlsoContainerIds) > 0 || u.CpusetCpus != cpus {
			t.Errorf("v1.0 host got %v, want plain updates to %s", u, cpus)
		}
		ids = append(ids, u.ContainerId)
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Errorf("v1.0 host updated %v, want [a b c]", ids)
	}
}

// TestPinningKeptForReturn: a balloon that returns to the CPUs and shared
// idle CPUs it had before its last change takes back that pinning, the same
// strings, rather than formatting its lists again; one that moves on gets
// new ones, equal to what formatting them gives.
func TestPinningKeptForReturn(t *testing.T) {
	p := New()
	if _, err := p.Init(&abi.InitRequest{Config: []byte("reservedResources: {cpu: 1}\n"), Topology: policytest.Machine(t, "N4C16")}); err != nil {
		t.Fatal(err)
	}
	s := p.st
	b := s.makeBalloon(s.types[len(s.types)-1], 9)
	check := func(step string) *pinned {
		t.Helper()
		pin := s.pinning(b, false, 0)
		if want := b.pinnable().String(); pin.cpus != want {
			t.Fatalf("%s: pinning %q, want %q", step, pin.cpus, want)
		}
		return pin
	}
	a, a2, c := cpuset.MustParse("1-2"), cpuset.MustParse("1-3"), cpuset.MustParse("8")
	s.setCPUs(b, a)
	one := check("1-2")
	s.setCPUs(b, a)
	if same := check("1-2 again"); same != one {
		t.Errorf("setting the same CPUs formatted the list again")
	}
	s.setCPUs(b, a2)
	two := check("1-3")
	s.setCPUs(b, a)
	if back := check("back to 1-2"); back != one {
		t.Errorf("back to 1-2: pinning %p %q, want the kept %p", back, back.cpus, one)
	}
	s.setShared(b, c)
	shared := check("1-2 sharing 8")
	s.setShared(b, cpuset.Set{})
	if back := check("1-2 sharing none"); back != one {
		t.Errorf("back to sharing none: pinning %p %q, want the kept %p", back, back.cpus, one)
	}
	s.setShared(b, c)
	if again := check("1-2 sharing 8 again"); again != shared {
		t.Errorf("sharing 8 again: pinning %p, want the kept %p", again, shared)
	}
	// 1-3 again, but two changes after it: formatted anew.
	s.setCPUs(b, a2)
	if fresh := check("1-3 sharing 8"); fresh == two {
		t.Errorf("1-3 sharing 8 took back the pinning of 1-3 sharing none")
	}
}

// TestSyncedAsEachContainer: a balloon whose containers share the lists
// they were given (updateSynced) answers what the loop over each container
// answers. Two policies get the same random creates, request changes and
// removes (default, app and burst balloons, some containers hiding
// hyperthreads, asking for memory types or preserving their memory nodes);
// after every call the second has its containers unsynced, so it always
// takes the loop. Their answers and dumps must be equal.
func TestSyncedAsEachContainer(t *testing.T) {
	const config = `
reservedResources: {cpu: 1}
balloonTypes:
- name: app
  namespaces: [app]
  maxCPUs: 4
- name: burst
  namespaces: [burst]
  maxCPUs: 2
  shareIdleCPUsInSame: numa
`
	topo := policytest.Machine(t, "PMEM112CPUIsolated")
	fast, loop := New(), New()
	for _, p := range []*Policy{fast, loop} {
		if _, err := p.Init(&abi.InitRequest{Config: []byte(config), Topology: topo}); err != nil {
			t.Fatal(err)
		}
	}
	unsyncAll := func(s *state) {
		for _, b := range s.balloons {
			for _, c := range b.members {
				b.unsync(c)
			}
		}
	}
	rng := rand.New(rand.NewPCG(15, 1))
	var live []string
	synced := 0
	for step := range 600 {
		var same bool
		var got, want any
		switch op := rng.IntN(10); {
		case op < 5 || len(live) < 3:
			id := fmt.Sprintf("c%03d", step)
			ann := map[string]string{}
			switch rng.IntN(12) {
			case 0:
				ann[containers.KeyHideHyperthreads+"/pod"] = "true"
			case 1:
				ann[containers.KeyMemoryType+"/pod"] = "pmem"
			case 2:
				ann[containers.KeyPreserveMemory+"/pod"] = "true"
			}
			ns := []string{"default", "default", "app", "burst"}[rng.IntN(4)]
			pod := &abi.PodSandbox{Id: "pod-" + id, Namespace: ns, Annotations: ann}
			req := &abi.CreateContainerRequest{Pod: pod, Container: &abi.Container{Id: id, PodSandboxId: pod.Id, Name: id,
				Resources: &abi.Resources{CpuRequestMilli: int64(100 * (1 + rng.IntN(12)))}}}
			g, errGot := fast.CreateContainer(req)
			w, errWant := loop.CreateContainer(req)
			same, got, want = sameAnswer(g, w, errGot, errWant), []any{g, errGot}, []any{w, errWant}
			if errWant == nil {
				live = append(live, id)
			}
		case op < 7:
			id := live[rng.IntN(len(live))]
			req := &abi.UpdateContainerRequest{Container: &abi.Container{Id: id}, Resources: &abi.Resources{CpuRequestMilli: int64(100 * (1 + rng.IntN(12)))}}
			g, errGot := fast.UpdateContainer(req)
			w, errWant := loop.UpdateContainer(req)
			same, got, want = sameAnswer(g, w, errGot, errWant), []any{g, errGot}, []any{w, errWant}
		default:
			i := rng.IntN(len(live))
			req := &abi.RemoveContainerRequest{Container: &abi.Container{Id: live[i]}}
			live = slices.Delete(live, i, i+1)
			g, errGot := fast.RemoveContainer(req)
			w, errWant := loop.RemoveContainer(req)
			same, got, want = sameAnswer(g, w, errGot, errWant), []any{g, errGot}, []any{w, errWant}
		}
		if !same {
			t.Fatalf("step %d: answered %v; the loop over each container %v", step, got, want)
		}
		if g, w := fast.st.dump(), loop.st.dump(); !reflect.DeepEqual(g, w) {
			t.Fatalf("step %d: dumps differ:\n%+v\n%+v", step, g, w)
		}
		for _, b := range fast.st.balloons {
			if b.nSynced > 0 {
				synced++
			}
		}
		unsyncAll(loop.st)
	}
	if synced == 0 {
		t.Errorf("no balloon's containers were ever synced: the test compared the loop with itself")
	}
}

// TestEmptyBalloonNotFormatted: updates formats no list for a changed
// balloon without containers (an idle-sharing balloon whose zone saw a CPU
// taken, say): there is no one to tell.
func TestEmptyBalloonNotFormatted(t *testing.T) {
	p := New()
	if _, err := p.Init(&abi.InitRequest{Config: []byte("reservedResources: {cpu: 1}\n"), Topology: policytest.Machine(t, "N4C16")}); err != nil {
		t.Fatal(err)
	}
	s := p.st
	b := s.makeBalloon(s.types[len(s.types)-1], 9)
	s.setCPUs(b, cpuset.MustParse("4-5"))
	if u := s.updates(""); len(u) != 0 || b.pin[0] != nil {
		t.Errorf("updates = %v, pinning %v; want none and none formatted", u, b.pin[0])
	}
}

// sameAnswer tells whether two calls answered alike: the same error, or
// equal answers.
func sameAnswer[T interface{ EqualVT(T) bool }](got, want T, errGot, errWant error) bool {
	return fmt.Sprint(errGot) == fmt.Sprint(errWant) && (errWant != nil || got.EqualVT(want))
}

// TestAnswerHoldsBalloonIDs: the grouped update of a balloon's containers
// holds the list of ids the balloon keeps, not a copy (on a create, the
// list from before the container was added), and the balloon never
// changes a list an answer holds: an answer kept across later creates and
// removes still names the containers it named. A container created and
// removed again takes the balloon back to the lists it had.
func TestAnswerHoldsBalloonIDs(t *testing.T) {
	const config = "reservedResources: {cpu: 1}\n"
	pod := &abi.PodSandbox{Id: "pod", Namespace: "default"}
	spec := func(id string) *abi.Container {
		return &abi.Container{Id: id, PodSandboxId: pod.Id, Name: id, Resources: &abi.Resources{CpuRequestMilli: 1000}}
	}
	p := New()
	if _, err := p.Init(&abi.InitRequest{Config: []byte(config), Topology: policytest.Machine(t, "N4C16")}); err != nil {
		t.Fatal(err)
	}
	create := func(id string) *abi.CreateContainerResponse {
		t.Helper()
		resp, err := p.CreateContainer(&abi.CreateContainerRequest{Pod: pod, Container: spec(id)})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	remove := func(id string) *abi.RemoveContainerResponse {
		t.Helper()
		resp, err := p.RemoveContainer(&abi.RemoveContainerRequest{Pod: pod, Container: spec(id)})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, id := range []string{"a", "c", "e"} {
		create(id)
	}
	b := p.st.deflt.own[0]
	before := b.ids
	created := create("d").Updates
	if len(created) != 1 || !slices.Equal(created[0].AlsoContainerIds, []string{"c", "e"}) || &created[0].AlsoContainerIds[0] != &before[1] {
		t.Fatalf("create d answered %v, want a's update for c and e holding the balloon's list %p", created, before)
	}
	removed := remove("c").Updates
	if len(removed) != 1 || !slices.Equal(removed[0].AlsoContainerIds, []string{"d", "e"}) || &removed[0].AlsoContainerIds[0] != &b.ids[1] {
		t.Fatalf("remove c answered %v, want a's update for d and e holding the balloon's list", removed)
	}
	for _, id := range []string{"b", "f", "c"} {
		create(id)
	}
	remove("a")
	remove("e")
	if !slices.Equal(created[0].AlsoContainerIds, []string{"c", "e"}) || !slices.Equal(removed[0].AlsoContainerIds, []string{"d", "e"}) {
		t.Errorf("earlier answers changed: %v, %v", created[0].AlsoContainerIds, removed[0].AlsoContainerIds)
	}
	// Created and removed again: back to the list of before, and again.
	list := b.ids
	create("x")
	withX := b.ids
	remove("x")
	create("x")
	if &b.ids[0] != &withX[0] {
		t.Errorf("create x after remove x made the list %v anew", b.ids)
	}
	remove("x")
	if len(b.ids) != len(list) || &b.ids[0] != &list[0] || !slices.Equal(b.ids, []string{"b", "c", "d", "f"}) {
		t.Errorf("after create and remove of x the list is %v, want the one before, %v", b.ids, list)
	}
}

// TestGroupExtend: a group holding a balloon's list moves it into the
// scratch list before it grows, leaving the list as it was; a group of the
// scratch list grows in place.
func TestGroupExtend(t *testing.T) {
	held := []string{"b", "c"}
	scratch := []string{"x"}
	g := group{first: "a", held: held}
	scratch = g.extend(scratch, "d", "e")
	if g.held != nil || !slices.Equal(scratch[g.from:g.to], []string{"b", "c", "d", "e"}) || !slices.Equal(held, []string{"b", "c"}) {
		t.Fatalf("after extend: group %+v over %v, held %v", g, scratch, held)
	}
	scratch = g.extend(scratch, "f")
	if !slices.Equal(scratch[g.from:g.to], []string{"b", "c", "d", "e", "f"}) || scratch[0] != "x" {
		t.Fatalf("after a second extend: group %+v over %v", g, scratch)
	}
}
