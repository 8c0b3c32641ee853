package balloons

import (
	"path"
	"testing"
	"unsafe"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestCreateKeepsEncodedRequest: a create through the dispatcher keeps the
// bytes of its request as the container's spec, encoding nothing, and that
// spec places the container again on Reconfigure and takes a resource
// update; a create without them (CreateContainer, nil) encodes the same pod
// and container.
func TestCreateKeepsEncodedRequest(t *testing.T) {
	const config = "reservedResources: {cpu: 1}\nballoonTypes:\n- name: app\n  namespaces: [app]\n"
	p := New()
	if _, err := p.Init(&abi.InitRequest{Config: []byte(config), Topology: policytest.Machine(t, "N4C16")}); err != nil {
		t.Fatal(err)
	}
	pod := &abi.PodSandbox{Id: "pod", Name: "web", Namespace: "app", Annotations: map[string]string{"k": "v"}}
	req := &abi.CreateContainerRequest{Pod: pod, Container: &abi.Container{Id: "a", PodSandboxId: "pod", Name: "a", Resources: &abi.Resources{CpuRequestMilli: 1500}}}
	raw, err := req.MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	decoded := &abi.CreateContainerRequest{}
	if err := decoded.UnmarshalVTUnsafe(raw); err != nil {
		t.Fatal(err)
	}
	created, err := p.CreateContainerEncoded(decoded, raw)
	if err != nil {
		t.Fatal(err)
	}
	if kept := p.st.ctrs["a"].spec; len(kept) != len(raw) || &kept[0] != &raw[0] {
		t.Fatalf("spec kept %v, want the request's own bytes %v", kept, raw)
	}
	other := &abi.CreateContainerRequest{Pod: pod, Container: &abi.Container{Id: "b", PodSandboxId: "pod", Name: "b"}}
	if _, err := p.CreateContainer(other); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]*abi.CreateContainerRequest{"a": req, "b": other} {
		gotPod, gotSpec, err := p.st.ctrs[id].spec.decode()
		if err != nil || !gotPod.EqualVT(want.Pod) || !gotSpec.EqualVT(want.Container) {
			t.Errorf("spec of %s decodes to %v, %v, %v; want %v", id, gotPod, gotSpec, err, want)
		}
	}
	resp, err := p.Reconfigure(&abi.ReconfigureRequest{Config: []byte(config)})
	if err != nil || len(resp.GetUpdates()) != 0 {
		t.Fatalf("Reconfigure with the same configuration: %v, %v; want no update", resp, err)
	}
	if c := p.st.ctrs["a"]; c.b.name() != "app[0]" || c.b.cpus.String() != created.GetAdjustment().GetCpusetCpus() {
		t.Errorf("after Reconfigure a is in %s with CPUs %s, want app[0] with %s", c.b.name(), c.b.cpus, created.GetAdjustment().GetCpusetCpus())
	}
	if _, err := p.UpdateContainer(&abi.UpdateContainerRequest{Pod: pod, Container: req.Container, Resources: &abi.Resources{CpuRequestMilli: 2500}}); err != nil {
		t.Fatal(err)
	}
	if _, spec, err := p.st.ctrs["a"].spec.decode(); err != nil || spec.GetResources().GetCpuRequestMilli() != 2500 {
		t.Errorf("after UpdateContainer a's spec is %v, %v; want its request 2500m", spec, err)
	}
}

// TestSpecDecodeEmpty: a spec without a pod or a container (Synchronize
// may place a container whose pod it was not sent) decodes to empty ones.
func TestSpecDecodeEmpty(t *testing.T) {
	pod, spec, err := encodeSpec(nil, &abi.Container{Id: "a"}).decode()
	if err != nil || pod == nil || spec.GetId() != "a" {
		t.Errorf("decode = %v, %v, %v; want an empty pod and container a", pod, spec, err)
	}
	if pod, spec, err = podSpec(nil).decode(); err != nil || pod == nil || spec == nil {
		t.Errorf("decode of nothing = %v, %v, %v; want an empty pod and container", pod, spec, err)
	}
}

// TestNewContainerOneCopy: a container's id, pod id, name and namespace
// are copies of the request's, made in one allocation.
func TestNewContainerOneCopy(t *testing.T) {
	s := &state{}
	pod := &abi.PodSandbox{Id: "pod-1", Namespace: "ns"}
	spec := &abi.Container{Id: "ctr-1", PodSandboxId: "pod-1", Name: "web"}
	var c *container
	allocs := testing.AllocsPerRun(100, func() { c = s.newContainer(pod, spec) })
	if c.id != "ctr-1" || c.pod != "pod-1" || c.name != "web" || c.ns != "ns" {
		t.Fatalf("container %q %q %q %q, want ctr-1 pod-1 web ns", c.id, c.pod, c.name, c.ns)
	}
	if unsafe.StringData(c.id) == unsafe.StringData(spec.Id) {
		t.Error("the id is the request's, not a copy")
	}
	if allocs != 2 { // the container and its strings
		t.Errorf("newContainer allocates %v times, want 2", allocs)
	}
}

// TestNamespaceGlob: an entry without a special character matches its
// namespace alone, as path.Match would; the others are path.Match's.
func TestNamespaceGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, ns string
		literal     bool
	}{
		{"kube-system", "kube-system", true},
		{"kube-system", "kube-systems", true},
		{"app", "", true},
		{"", "", true},
		{"team-*", "team-a", false},
		{"team-?", "team-ab", false},
		{"[ab]pp", "app", false},
		{`a\*`, "a*", false},
		{"[", "[", false}, // malformed: matches nothing
	} {
		g := newNamespaceGlob(tc.pattern)
		want, _ := path.Match(tc.pattern, tc.ns)
		if g.literal != tc.literal || g.matches(tc.ns) != want {
			t.Errorf("%q against %q: literal %v, matches %v; want %v, %v", tc.pattern, tc.ns, g.literal, g.matches(tc.ns), tc.literal, want)
		}
	}
}
