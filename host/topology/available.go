package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// podsCgroups are where kubelet puts the pods' cgroup, relative to the cgroup
// mount: cgroup v2 (systemd, then cgroupfs driver), then v1's cpuset
// hierarchy.
var podsCgroups = []string{
	"kubepods.slice/cpuset.cpus.effective",
	"kubepods/cpuset.cpus.effective",
	"cpuset/kubepods.slice/cpuset.cpus",
	"cpuset/kubepods/cpuset.cpus",
}

// PodsCgroupCPUs reads the cpuset of the pods' cgroup (kubepods) under the
// cgroup mount cgroupRoot ("/sys/fs/cgroup"): the CPUs kubelet and systemd
// leave to pods. It names every path it tried when none exists.
func PodsCgroupCPUs(cgroupRoot string) (cpuset.Set, error) {
	for _, rel := range podsCgroups {
		path := filepath.Join(cgroupRoot, rel)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return cpuset.Set{}, fmt.Errorf("pods' cgroup cpuset: %w", err)
		}
		set, err := cpuset.Parse(strings.TrimSpace(string(b)))
		if err != nil {
			return cpuset.Set{}, fmt.Errorf("pods' cgroup cpuset %s: %w", path, err)
		}
		if set.IsEmpty() {
			return cpuset.Set{}, fmt.Errorf("pods' cgroup cpuset %s is empty", path)
		}
		return set, nil
	}
	return cpuset.Set{}, fmt.Errorf("pods' cgroup cpuset: none of %s exists under %s", strings.Join(podsCgroups, ", "), cgroupRoot)
}

// Restrict keeps only the available CPUs of t: the CPUs themselves, and
// their ids in thread siblings and caches (a cache left without CPUs is
// dropped). Every available CPU must be online in t; the error names the
// first that is not.
func Restrict(t *abi.Topology, available cpuset.Set) error {
	online := cpuset.Set{}
	for _, c := range t.GetCpus() {
		online = online.Union(cpuset.New(c.GetId()))
	}
	if out := available.Difference(online); !out.IsEmpty() {
		return fmt.Errorf("available CPUs %s: %s not online (online: %s)", available, out, online)
	}
	keep := func(ids []uint32) []uint32 {
		return slices.DeleteFunc(ids, func(id uint32) bool { return !available.Contains(id) })
	}
	t.Cpus = slices.DeleteFunc(t.Cpus, func(c *abi.CPU) bool { return !available.Contains(c.GetId()) })
	for _, c := range t.Cpus {
		c.ThreadSiblings = keep(c.ThreadSiblings)
	}
	for _, c := range t.Caches {
		c.Cpus = keep(c.Cpus)
	}
	t.Caches = slices.DeleteFunc(t.Caches, func(c *abi.Cache) bool { return len(c.Cpus) == 0 })
	return nil
}
