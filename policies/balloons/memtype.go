package balloons

import (
	"fmt"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// memTypes is a set of memory types, the memory-type annotation's value:
// one bit per entry of memTypeNames. The zero set is no annotation: the
// balloon type's memoryTypes apply.
type memTypes uint8

// memTypeNames are the memory types by bit, in the order nri-plugins
// prints them.
var memTypeNames = [...]MemoryType{"DRAM", "PMEM", "HBM"}

// memTypeSets is the number of distinct memTypes values.
const memTypeSets = 1 << len(memTypeNames)

// memTypeLists are the types of each set, in memTypeNames order, built once
// so that pinning allocates nothing to name them.
var memTypeLists = func() (l [memTypeSets][]MemoryType) {
	for m := range l {
		for i, name := range memTypeNames {
			if m&(1<<i) != 0 {
				l[m] = append(l[m], name)
			}
		}
	}
	return l
}()

// list are the set's types; nil for the zero set.
func (m memTypes) list() []MemoryType { return memTypeLists[m] }

// String is the canonical form: the types comma-separated, in
// memTypeNames order ("DRAM,PMEM"); "" for the zero set.
func (m memTypes) String() string {
	var b strings.Builder
	for _, t := range m.list() {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(t))
	}
	return b.String()
}

// parseMemTypes reads a memory-type annotation value as nri-plugins does:
// comma-separated types, each trimmed of spaces and matched regardless of
// case. An empty entry or an unknown type makes the whole value invalid.
func parseMemTypes(v string) (memTypes, error) {
	var m memTypes
	for entry := range strings.SplitSeq(v, ",") {
		name := strings.ToUpper(strings.TrimSpace(entry))
		i := 0
		for i < len(memTypeNames) && string(memTypeNames[i]) != name {
			i++
		}
		if i == len(memTypeNames) {
			return 0, fmt.Errorf("unknown memory type %q (want DRAM, PMEM or HBM)", strings.TrimSpace(entry))
		}
		m |= 1 << i
	}
	return m, nil
}

// memoryTypesOf are the memory types container spec of pod asks for in a
// balloon of type t: its memory-type annotation (container form, then pod
// form, then the bare key). The zero set, t's memoryTypes, when there is
// none, when t does not pin memory or memory.preserve leaves c's nodes
// alone (both win, as in nri-plugins), and for an invalid value, which is
// logged and ignored.
func memoryTypesOf(pod *abi.PodSandbox, spec *abi.Container, t *btype, keepMems bool) memTypes {
	if keepMems || !t.pinMemory {
		return 0
	}
	k, v, ok := effectiveAnnotation(pod, spec, containers.KeyMemoryType)
	if !ok {
		return 0
	}
	m, err := parseMemTypes(v)
	if err != nil {
		policy.Log.Warnf("container %s: ignoring annotation %s=%q: %v; balloon type %s's memoryTypes apply", spec.GetId(), k, v, err, t.Name)
		return 0
	}
	return m
}
