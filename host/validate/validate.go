// Package validate checks the shape of a policy's answers before the host acts
// on them: cpusets within the node's online and available CPUs, memory nodes
// that have memory, valid environment variable names, updates that name live
// containers, and DRA answers within the Kubernetes API's limits.
//
// It never interprets meaning (which CPUs a container should get); it only
// refuses answers the node or the API server could not take. A refusal is an
// *Error naming the offending field by its dotted path and the limit it broke;
// the caller applies nothing of the answer. The agent (host/resmgr) and
// `nriwasm simulate` (host/internal/scenario) share these checks, so a
// simulation refuses exactly what the agent would.
//
//	l, err := validate.New(topo, validate.WithAvailableCPUs(cpus))
//	...
//	if err := l.Adjustment(resp.GetAdjustment()); err != nil {
//		// log err (an *validate.Error), apply nothing
//	}
package validate

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Error is an answer refused whole: Field (a dotted path such as
// "adjustment.cpuset_cpus" or "updates[2].container_id") is out of bounds.
type Error struct {
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Field + ": " + e.Message }

func invalid(field, format string, args ...any) error {
	return &Error{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Limits are the bounds of one node that answers are checked against. Create
// them with New; they are immutable and safe for concurrent use.
type Limits struct {
	cpus     []uint32 // online ∩ available, sorted
	cpusWhat string   // how errors name cpus
	nodes    []uint32 // NUMA nodes with memory, sorted
	online   []uint32 // every online CPU, sorted
}

// Option configures New; a bad value is New's error, naming the option (the
// host's one options style: host/RATIONALE.md).
type Option func(*options) error

type options struct {
	available []uint32 // nil: every online CPU
}

// WithAvailableCPUs restricts cpusets to the online CPUs that are also in
// available (for instance the agent's own cgroup cpuset). Default: every
// online CPU is available. available must name at least one online CPU.
func WithAvailableCPUs(available []uint32) Option {
	return func(o *options) error {
		if len(available) == 0 {
			return errors.New("validate: available CPUs: empty: must name at least one CPU")
		}
		o.available = sortedCopy(available)
		return nil
	}
}

// New returns the limits of a node with topology t: cpusets within its online
// CPUs, memory nodes among its NUMA nodes with memory. When no node reports
// its memory (a kernel without NUMA reports none), every node is allowed.
// t is required.
func New(t *abi.Topology, opts ...Option) (*Limits, error) {
	if t == nil {
		return nil, errors.New("validate: topology: nil")
	}
	var o options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	l := &Limits{cpusWhat: "online CPUs"}
	for _, c := range t.GetCpus() {
		l.cpus = append(l.cpus, c.GetId())
	}
	var all []uint32
	for _, n := range t.GetNumaNodes() {
		all = append(all, n.GetId())
		if n.GetMemoryBytes() > 0 {
			l.nodes = append(l.nodes, n.GetId())
		}
	}
	if len(l.nodes) == 0 {
		l.nodes = all
	}
	slices.Sort(l.cpus)
	slices.Sort(l.nodes)
	l.online = slices.Clone(l.cpus)
	if o.available != nil {
		l.cpus = slices.DeleteFunc(l.cpus, func(id uint32) bool {
			_, found := slices.BinarySearch(o.available, id)
			return !found
		})
		if len(l.cpus) == 0 && len(l.online) > 0 {
			return nil, fmt.Errorf("validate: available CPUs %q: none is among the node's online CPUs %q",
				cpuset.FormatList(o.available), cpuset.FormatList(l.online))
		}
		l.cpusWhat = "online and available CPUs"
	}
	return l, nil
}

// CPUs returns the CPUs a cpuset may hold, sorted.
func (l *Limits) CPUs() []uint32 { return slices.Clone(l.cpus) }

// MemoryNodes returns the memory nodes a cpuset may hold, sorted.
func (l *Limits) MemoryNodes() []uint32 { return slices.Clone(l.nodes) }

func sortedCopy(ids []uint32) []uint32 {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

// subset checks a Linux list ("0-3,8") against allowed; "" means unchanged.
func subset(field, list string, allowed []uint32, what string) error {
	if list == "" {
		return nil
	}
	ids, err := cpuset.ParseList(list)
	if err != nil {
		return invalid(field, "%q is not a Linux list: %v", list, err)
	}
	for _, id := range ids {
		if _, found := slices.BinarySearch(allowed, id); !found {
			return invalid(field, "%q: %d is not among the node's %s %q", list, id, what, cpuset.FormatList(allowed))
		}
	}
	return nil
}

// CPUSet checks a cpuset in Linux list form; "" passes (unchanged).
func (l *Limits) CPUSet(field, list string) error { return subset(field, list, l.cpus, l.cpusWhat) }

// Mems checks a memory node set in Linux list form; "" passes (unchanged).
func (l *Limits) Mems(field, list string) error {
	return subset(field, list, l.nodes, "NUMA nodes with memory")
}
