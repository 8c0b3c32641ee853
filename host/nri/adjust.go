package nri

import (
	"maps"
	"slices"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/version"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// memoryPolicySince is the first NRI version whose adjustments carry a Linux
// memory policy (containerd/nri#166).
const memoryPolicySince = "v0.10.0"

// supportsMemoryPolicy reports whether a runtime speaking NRI nriVersion
// applies memory policy adjustments. An unknown version does not.
func supportsMemoryPolicy(nriVersion string) bool {
	return version.FindClosestMatch(nriVersion, []string{memoryPolicySince}) != ""
}

// adjustment turns the policy's adjustment into NRI's: cpuset CPUs and memory
// nodes, env, annotations, RDT and block I/O classes, and the memory policy
// when the runtime supports it.
func adjustment(a *abi.ContainerAdjustment, memoryPolicy bool) *api.ContainerAdjustment {
	out := &api.ContainerAdjustment{}
	if a == nil {
		return out
	}
	if a.CpusetCpus != "" {
		out.SetLinuxCPUSetCPUs(a.CpusetCpus)
	}
	if a.CpusetMems != "" {
		out.SetLinuxCPUSetMems(a.CpusetMems)
	}
	for _, kv := range a.Env {
		out.AddEnv(kv.GetKey(), kv.GetValue())
	}
	for _, k := range slices.Sorted(maps.Keys(a.Annotations)) {
		out.AddAnnotation(k, a.Annotations[k])
	}
	if a.RdtClass != "" {
		out.SetLinuxRDTClass(a.RdtClass)
	}
	if a.BlockioClass != "" {
		out.SetLinuxBlockIOClass(a.BlockioClass)
	}
	if mp := a.GetMemoryPolicy(); memoryPolicy && mp.GetMode() != abi.MemoryPolicyMode_MEMORY_POLICY_MODE_UNSPECIFIED {
		var flags []api.MpolFlag
		for _, f := range mp.GetFlags() {
			if f != abi.MemoryPolicyFlag_MEMORY_POLICY_FLAG_UNSPECIFIED {
				flags = append(flags, api.MpolFlag(f-1)) // abi's values are NRI's plus one
			}
		}
		out.SetLinuxMemoryPolicy(api.MpolMode(mp.GetMode()-1), mp.GetNodes(), flags...)
	}
	return out
}

// updates turns the policy's container updates into NRI's, which has no
// groups: one update per container, a group's members each with the group's
// values. This is where the agent expands a grouped update. The members of a
// group share one NRI Linux part, built once: the list is only marshaled,
// never changed, so 200 members cost 200 small messages rather than 200
// copies of the same values.
func updates(us []*abi.ContainerUpdate) []*api.ContainerUpdate {
	if len(us) == 0 {
		return nil
	}
	out := make([]*api.ContainerUpdate, 0, abi.CountContainers(us))
	for _, u := range us {
		linux := linuxUpdate(u)
		out = append(out, &api.ContainerUpdate{ContainerId: u.GetContainerId(), Linux: linux})
		for _, id := range u.GetAlsoContainerIds() {
			out = append(out, &api.ContainerUpdate{ContainerId: id, Linux: linux})
		}
	}
	return out
}

// linuxUpdate is the NRI Linux part of u's values, nil when it sets none.
func linuxUpdate(u *abi.ContainerUpdate) *api.LinuxContainerUpdate {
	var n api.ContainerUpdate
	if u.GetCpusetCpus() != "" {
		n.SetLinuxCPUSetCPUs(u.GetCpusetCpus())
	}
	if u.GetCpusetMems() != "" {
		n.SetLinuxCPUSetMems(u.GetCpusetMems())
	}
	if u.GetRdtClass() != "" {
		n.SetLinuxRDTClass(u.GetRdtClass())
	}
	if u.GetBlockioClass() != "" {
		n.SetLinuxBlockIOClass(u.GetBlockioClass())
	}
	return n.Linux
}
