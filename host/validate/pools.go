package validate

import (
	"fmt"
	"strings"
	"unicode/utf8"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Pools checks a Pools answer (ABI v1.2): at most abi.MaxPools pools, each
// with a unique printable name of 1 to abi.MaxPoolName bytes (it becomes a
// metric label value), CPU lists within the node's online CPUs (a pool may
// hold CPUs no container may be given, such as reserved ones; a balloon's
// shared CPUs are borrowed from outside it), memory nodes among the NUMA nodes
// with memory, and non-empty container ids.
func (l *Limits) Pools(r *abi.PoolsResponse) error {
	if n := len(r.GetPools()); n > abi.MaxPools {
		return invalid("pools", "%d pools, at most %d", n, abi.MaxPools)
	}
	names := make(map[string]bool, len(r.GetPools()))
	for i, p := range r.GetPools() {
		field := fmt.Sprintf("pools[%d]", i)
		if err := poolName(field+".name", p.GetName()); err != nil {
			return err
		}
		if names[p.GetName()] {
			return invalid(field+".name", "%q names two pools", p.GetName())
		}
		names[p.GetName()] = true
		if err := subset(field+".cpus", p.GetCpus(), l.online, "online CPUs"); err != nil {
			return err
		}
		if err := subset(field+".shared_cpus", p.GetSharedCpus(), l.online, "online CPUs"); err != nil {
			return err
		}
		if err := l.Mems(field+".memory_nodes", p.GetMemoryNodes()); err != nil {
			return err
		}
		for j, id := range p.GetContainerIds() {
			if id == "" {
				return invalid(fmt.Sprintf("%s.container_ids[%d]", field, j), "empty container id")
			}
		}
	}
	return nil
}

// poolName checks a pool's name: 1 to abi.MaxPoolName bytes of valid UTF-8
// without control characters.
func poolName(field, name string) error {
	switch {
	case name == "":
		return invalid(field, "empty pool name")
	case len(name) > abi.MaxPoolName:
		return invalid(field, "%q is %d bytes, at most %d", truncate(name), len(name), abi.MaxPoolName)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return invalid(field, "%q holds invalid UTF-8 or control characters", truncate(name))
	}
	return nil
}
