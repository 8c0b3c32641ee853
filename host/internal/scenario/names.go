package scenario

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/internal/strictjson"
	"maps"
)

// liveNames tracks, while parsing, which pods, containers and claims exist at
// each step, so a step naming one that does not is rejected before anything runs.
type liveNames struct {
	pods      map[string][]string // pod name → its container names
	sandboxes map[string]*abi.PodSandbox
	ids       map[string]bool // live container ids
	claims    map[string]bool // "namespace/name"
	// removed: by pod, the names of containers removed from it while it
	// lives; successors: live container ids created again after such a
	// removal.
	removed    map[string]map[string]bool
	successors map[string]bool
}

func newLiveNames() *liveNames {
	return &liveNames{pods: map[string][]string{}, sandboxes: map[string]*abi.PodSandbox{}, ids: map[string]bool{}, claims: map[string]bool{},
		removed: map[string]map[string]bool{}, successors: map[string]bool{}}
}

func (n *liveNames) addPod(p *Pod) {
	var names []string
	for _, c := range p.Containers {
		names = append(names, c.Name)
		n.ids[c.Id] = true
	}
	n.pods[p.Sandbox.Name] = names
	n.sandboxes[p.Sandbox.Name] = p.Sandbox
}

func (n *liveNames) addContainer(pod string, c *abi.Container) {
	n.pods[pod] = append(n.pods[pod], c.Name)
	n.ids[c.Id] = true
	if n.removed[pod][c.Name] {
		n.successors[c.Id] = true
	}
}

// claimKeys resolves a container's claims ("name" in namespace, or
// "namespace/name") to live claims' keys.
func (n *liveNames) claimKeys(names []string, namespace, path string) ([]string, error) {
	var keys []string
	for i, name := range names {
		key := name
		if !strings.Contains(key, "/") {
			key = namespace + "/" + name
		}
		if !n.claims[key] {
			return nil, fmt.Errorf("%s[%d]: no allocated claim %q (allocated: %s)", path, i, key, orNone(slices.Sorted(maps.Keys(n.claims))))
		}
		keys = append(keys, key)
	}
	return keys, nil
}

func (n *liveNames) remove(t Target) {
	for _, c := range n.pods[t.Pod] {
		if t.Container == "" || c == t.Container {
			id := containerID(t.Pod, c)
			delete(n.ids, id)
			delete(n.successors, id)
		}
	}
	if t.Container != "" {
		if n.removed[t.Pod] == nil {
			n.removed[t.Pod] = map[string]bool{}
		}
		n.removed[t.Pod][t.Container] = true
	}
	if t.Container == "" {
		delete(n.removed, t.Pod)
		delete(n.pods, t.Pod)
		delete(n.sandboxes, t.Pod)
		return
	}
	n.pods[t.Pod] = slices.DeleteFunc(n.pods[t.Pod], func(c string) bool { return c == t.Container })
}

// parseTarget reads "pod" or "pod/container" and checks that it is live.
func parseTarget(value json.RawMessage, path string, n *liveNames) (Target, error) {
	s, err := parseName(value, path, `a pod name or "pod/container"`)
	if err != nil {
		return Target{}, err
	}
	return n.target(s, path)
}

func (n *liveNames) target(s, path string) (Target, error) {
	var t Target
	t.Pod, t.Container, _ = strings.Cut(s, "/")
	containers, ok := n.pods[t.Pod]
	if !ok {
		return Target{}, fmt.Errorf("%s: no pod %q (live: %s)", path, t.Pod, orNone(slices.Sorted(maps.Keys(n.pods))))
	}
	if t.Container != "" && !slices.Contains(containers, t.Container) {
		return Target{}, fmt.Errorf("%s: pod %q has no container %q (it has: %s)", path, t.Pod, t.Container, orNone(containers))
	}
	return t, nil
}

// parseRelease reads a claim name ("name" in namespace default, or
// "namespace/name") and checks that it was allocated.
func parseRelease(value json.RawMessage, path string, n *liveNames) (string, error) {
	s, err := parseName(value, path, `a claim name or "namespace/name"`)
	if err != nil {
		return "", err
	}
	if !strings.Contains(s, "/") {
		s = "default/" + s
	}
	if !n.claims[s] {
		return "", fmt.Errorf("%s: no allocated claim %q (allocated: %s)", path, s, orNone(slices.Sorted(maps.Keys(n.claims))))
	}
	delete(n.claims, s)
	return s, nil
}

// containerID is the runtime id the simulation gives a container.
func containerID(pod, container string) string { return pod + "-" + container }

// checkName rejects names a target could not address.
func checkName(name, path string) error {
	if name == "" {
		return fmt.Errorf("%s: required", path)
	}
	if strings.ContainsAny(name, "/ \t\n") {
		return fmt.Errorf("%s: %q: must not contain '/' or spaces", path, name)
	}
	return nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// restartSpec is a restart step's argument.
type restartSpec struct {
	// Exited: "pod/container" of live containers whose removed predecessor
	// of the same name the runtime still lists, exited.
	Exited []string `json:"exited"`
}

// parseRestart reads a restart step: no arguments, or the containers whose
// exited predecessors Synchronize lists too. Each must be live and created
// again (a container step) after a container of its name was removed from
// its pod.
func parseRestart(value json.RawMessage, path string, n *liveNames) ([]Target, error) {
	if parseNoArguments(value, path, string(KindRestart)) == nil {
		return nil, nil
	}
	var s restartSpec
	if err := strictjson.Decode(value, &s, path); err != nil {
		return nil, err
	}
	var out []Target
	for i, name := range s.Exited {
		p := fmt.Sprintf("%s.exited[%d]", path, i)
		t, err := n.target(name, p)
		if err != nil {
			return nil, err
		}
		if t.Container == "" {
			return nil, fmt.Errorf(`%s: want "pod/container", got %q`, p, name)
		}
		if !n.successors[containerID(t.Pod, t.Container)] {
			return nil, fmt.Errorf("%s: %s was not created again after a removal (a container step after `remove: %s`)", p, name, name)
		}
		if slices.Contains(out, t) {
			return nil, fmt.Errorf("%s: %s listed twice", p, name)
		}
		out = append(out, t)
	}
	return out, nil
}
