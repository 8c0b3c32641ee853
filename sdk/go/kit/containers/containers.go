// Package containers reads what a policy needs about a container besides
// its resources: its effective annotations, scoped as nri-plugins scopes
// them (KEY/container.NAME, then KEY/pod, then KEY), and whether a
// CreateContainer repeats one the policy has answered already, and answers
// StopContainer and RemoveContainer for a policy that frees a container's
// resources at either (Forget).
package containers

import (
	"fmt"
	"strconv"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// The annotation keys nri-plugins' policies share, for Effective and Bool.
// Each is looked up as KEY/container.NAME, then KEY/pod, then KEY.
const (
	// AnnotationDomain ends every nri-plugins policy annotation key.
	AnnotationDomain = "resource-policy.nri.io"
	// KeyPreserveCPU ("true") leaves the container's CPUs as the runtime
	// set them.
	KeyPreserveCPU = "cpu.preserve." + AnnotationDomain
	// KeyPreserveMemory ("true") leaves its memory nodes as the runtime
	// set them.
	KeyPreserveMemory = "memory.preserve." + AnnotationDomain
	// KeyHideHyperthreads ("true") gives it one thread of each core it
	// gets.
	KeyHideHyperthreads = "hide-hyperthreads." + AnnotationDomain
	// KeyMemoryType names the kinds of memory it may use ("dram,pmem").
	KeyMemoryType = "memory-type." + AnnotationDomain
)

// Scope is where an effective annotation was found; a lower Scope is the
// more specific one.
type Scope int

// The scopes, most specific first.
const (
	// ScopeContainer is KEY/container.NAME: for the container NAME only.
	ScopeContainer Scope = iota
	// ScopePod is KEY/pod: for every container of the pod.
	ScopePod
	// ScopeBare is KEY itself.
	ScopeBare
)

// Annotation is an annotation found for a container.
type Annotation struct {
	// Key is the annotation's key as written (KEY/container.NAME, say).
	Key string
	// Value is its value.
	Value string
	// Scope is the scope Key has.
	Scope Scope
}

// Effective finds key for the container called name: at each scope, most
// specific first, each of sets (a pod's annotations, then the container's
// own, say) is searched in turn.
func Effective(key, name string, sets ...map[string]string) (Annotation, bool) {
	empty := true
	for _, set := range sets {
		empty = empty && len(set) == 0
	}
	if empty {
		return Annotation{}, false
	}
	// The scoped keys are written into a buffer on the stack and looked up
	// as string(k), which the compiler does without a copy: a key is made
	// a string only when it is found (most lookups find nothing, and in
	// Wasm each allocation is paid for again by the collector).
	var buf [128]byte
	for scope := ScopeContainer; scope <= ScopeBare; scope++ {
		k := append(buf[:0], key...)
		switch scope {
		case ScopeContainer:
			k = append(append(k, "/container."...), name...)
		case ScopePod:
			k = append(k, "/pod"...)
		}
		for _, set := range sets {
			if v, ok := set[string(k)]; ok {
				return Annotation{Key: string(k), Value: v, Scope: scope}, true
			}
		}
	}
	return Annotation{}, false
}

// Bool is the effective annotation key of container c as a boolean, and
// whether it was set. A value strconv.ParseBool does not accept is logged
// (policy.Log) and taken as unset, as nri-plugins does.
func Bool(key string, c *abi.Container, sets ...map[string]string) (value, set bool) {
	a, ok := Effective(key, c.GetName(), sets...)
	if !ok {
		return false, false
	}
	b, err := a.Bool()
	if err != nil {
		policy.Log.Warnf("container %s: ignoring annotation: %v", c.GetId(), err)
		return false, false
	}
	return b, true
}

// Bool parses a's value with strconv.ParseBool; the error names the key
// and the value.
func (a Annotation) Bool() (bool, error) {
	b, err := strconv.ParseBool(a.Value)
	if err != nil {
		return false, fmt.Errorf("%s=%q: not a boolean", a.Key, a.Value)
	}
	return b, nil
}

// Repeated answers a CreateContainer for a container the policy has placed
// already, placed by id, adjustment giving what each was given at its
// creation: a repeat gets that adjustment again, without updates. An empty
// container id is refused (INVALID_ARGUMENT on container.id); a container
// not placed yet gets a nil response and a nil error, for the policy to
// place:
//
//	if resp, err := containers.Repeated(r, s.ctrs, (*container).adjustment); resp != nil || err != nil {
//		return resp, err
//	}
func Repeated[C any](r *abi.CreateContainerRequest, placed map[string]C, adjustment func(C) *abi.ContainerAdjustment) (*abi.CreateContainerResponse, error) {
	id := r.GetContainer().GetId()
	if id == "" {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "container.id", "empty container id")
	}
	if c, ok := placed[id]; ok {
		return &abi.CreateContainerResponse{Adjustment: adjustment(c)}, nil
	}
	return nil, nil
}

// Create is a whole CreateContainer: a repeat answers as Repeated does; a
// new container is placed (place, whose error is the answer's) and answered
// with the updates its placement makes for the others and its adjustment,
// read after the updates (which may still move its own CPUs: a balloon
// resharing idle CPUs, say).
//
//	func (p *Policy) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
//		return containers.Create(r, p.st.ctrs, (*container).adjustment, p.st.place, p.st.updatesFor)
//	}
func Create[C any](r *abi.CreateContainerRequest, placed map[string]C, adjustment func(C) *abi.ContainerAdjustment,
	place func(*abi.PodSandbox, *abi.Container) (C, error), updates func(C) []*abi.ContainerUpdate) (*abi.CreateContainerResponse, error) {
	if resp, err := Repeated(r, placed, adjustment); resp != nil || err != nil {
		return resp, err
	}
	c, err := place(r.GetPod(), r.GetContainer())
	if err != nil {
		return nil, err
	}
	u := updates(c)
	return &abi.CreateContainerResponse{Adjustment: adjustment(c), Updates: u}, nil
}

// Forget serves StopContainer and RemoveContainer alike, for a policy
// whose containers give back what they hold as soon as they stop: it is
// called with the container's id and returns the updates the release makes
// for the containers still running. A policy embeds it and points it at its
// own method in New:
//
//	type Policy struct {
//		containers.Forget
//		st *state
//	}
//
//	func New() *Policy {
//		p := &Policy{}
//		p.Forget = p.forget
//		return p
//	}
type Forget func(id string) []*abi.ContainerUpdate

// StopContainer implements policy.ContainerStopper.
func (f Forget) StopContainer(r *abi.StopContainerRequest) (*abi.StopContainerResponse, error) {
	return &abi.StopContainerResponse{Updates: f(r.GetContainer().GetId())}, nil
}

// RemoveContainer implements policy.ContainerRemover.
func (f Forget) RemoveContainer(r *abi.RemoveContainerRequest) (*abi.RemoveContainerResponse, error) {
	return &abi.RemoveContainerResponse{Updates: f(r.GetContainer().GetId())}, nil
}
