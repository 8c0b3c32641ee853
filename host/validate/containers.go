package validate

import (
	"fmt"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Adjustment checks a CreateContainer answer's adjustment; nil passes.
func (l *Limits) Adjustment(a *abi.ContainerAdjustment) error {
	if err := l.CPUSet("adjustment.cpuset_cpus", a.GetCpusetCpus()); err != nil {
		return err
	}
	if err := l.Mems("adjustment.cpuset_mems", a.GetCpusetMems()); err != nil {
		return err
	}
	if err := l.Mems("adjustment.memory_policy.nodes", a.GetMemoryPolicy().GetNodes()); err != nil {
		return err
	}
	for i, kv := range a.GetEnv() {
		if !EnvName(kv.GetKey()) {
			return invalid(fmt.Sprintf("adjustment.env[%d].key", i), "%q is not a valid variable name", kv.GetKey())
		}
	}
	return nil
}

// Updates checks ContainerUpdates, reporting fields as prefix[i].…; live tells
// which container ids exist (an update for any other is refused).
func (l *Limits) Updates(prefix string, us []*abi.ContainerUpdate, live func(id string) bool) error {
	for i, u := range us {
		field := fmt.Sprintf("%s[%d]", prefix, i)
		if u == nil {
			return invalid(field, "empty update")
		}
		if !live(u.GetContainerId()) {
			return invalid(field+".container_id", "no live container %q", u.GetContainerId())
		}
		if err := l.CPUSet(field+".cpuset_cpus", u.GetCpusetCpus()); err != nil {
			return err
		}
		if err := l.Mems(field+".cpuset_mems", u.GetCpusetMems()); err != nil {
			return err
		}
	}
	return nil
}

// EnvName reports whether s can name an environment variable: not empty, no
// '=', no control characters.
func EnvName(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r == '=' || r < ' ' || r == 0x7f })
}
