package state

import (
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// AddPod records pod, replacing any pod with the same sandbox id. A nil pod is
// ignored.
func (j *Journal) AddPod(pod *abi.PodSandbox) {
	if pod == nil {
		return
	}
	j.pods[pod.GetId()] = pod.CloneVT()
	j.mark(kindPod, pod.GetId())
}

// RemovePod forgets the pod with sandbox id and reports whether it was
// journaled. Its containers stay until they are removed themselves: cleanup is
// driven by container events and Reconcile, since runtimes may drop pod events.
func (j *Journal) RemovePod(id string) bool {
	return remove(j, j.pods, kindPod, id)
}

// AddContainer records container with the adjustment it was created with,
// replacing any container with the same id. A nil adjustment records a container
// the policy gave nothing (for instance one started unpinned after a policy
// failure); container.Assignment is ignored. A nil container is ignored.
func (j *Journal) AddContainer(container *abi.Container, adjustment *abi.ContainerAdjustment) {
	if container == nil {
		return
	}
	c := container.CloneVT()
	c.Assignment = adjustment.CloneVT()
	j.containers[c.GetId()] = c
	j.mark(kindContainer, c.GetId())
}

// ApplyUpdate merges update into the assignment of every container it names,
// its container_id and each of its also_container_ids: its non-empty fields
// replace the assigned cpuset CPUs and memory nodes and the RDT and block I/O
// classes, as they do on the runtime. It reports whether every one of them is
// journaled; an update of an unknown container changes nothing for it.
//
// A grouped update (one with also_container_ids) is kept as one change: the
// next decision-log record carries it once, with the members it changed,
// rather than each member's whole record (see RATIONALE.md, "Why does a
// record carry a grouped update once?").
func (j *Journal) ApplyUpdate(update *abi.ContainerUpdate) bool {
	also := update.GetAlsoContainerIds()
	if len(also) == 0 {
		c := j.applyTo(update.GetContainerId(), update)
		if c != nil {
			j.mark(kindContainer, c.GetId())
		}
		return c != nil
	}
	ids := make([]string, 0, 1+len(also))
	all := true
	apply := func(id string) {
		if c := j.applyTo(id, update); c != nil {
			ids = append(ids, c.GetId()) // the journal's own string, not the answer's
		} else {
			all = false
		}
	}
	apply(update.GetContainerId())
	for _, id := range also {
		apply(id)
	}
	if len(ids) > 0 {
		j.addGroup(&abi.ContainerUpdate{
			ContainerId: ids[0], AlsoContainerIds: ids[1:],
			CpusetCpus: update.GetCpusetCpus(), CpusetMems: update.GetCpusetMems(),
			RdtClass: update.GetRdtClass(), BlockioClass: update.GetBlockioClass(),
		})
	}
	return all
}

// applyTo merges u into the assignment of container id and returns the
// container, or nil if id is not journaled. It does not mark the change.
func (j *Journal) applyTo(id string, u *abi.ContainerUpdate) *abi.Container {
	c, ok := j.containers[id]
	if !ok {
		return nil
	}
	a := c.Assignment
	if a == nil {
		a = &abi.ContainerAdjustment{}
	}
	set := func(dst *string, src string) {
		if src != "" {
			*dst = src
		}
	}
	set(&a.CpusetCpus, u.GetCpusetCpus())
	set(&a.CpusetMems, u.GetCpusetMems())
	set(&a.RdtClass, u.GetRdtClass())
	set(&a.BlockioClass, u.GetBlockioClass())
	c.Assignment = a
	return c
}

// RemoveContainer forgets the container with id and reports whether it was
// journaled.
func (j *Journal) RemoveContainer(id string) bool {
	return remove(j, j.containers, kindContainer, id)
}

// AddClaim records a prepared claim under its claim's uid, replacing any claim
// with the same uid. A nil claim is ignored.
func (j *Journal) AddClaim(claim *abi.PreparedClaim) {
	if claim == nil {
		return
	}
	j.claims[claim.GetClaim().GetUid()] = claim.CloneVT()
	j.mark(kindClaim, claim.GetClaim().GetUid())
}

// RemoveClaim forgets the prepared claim with uid and reports whether it was
// journaled.
func (j *Journal) RemoveClaim(uid string) bool {
	return remove(j, j.claims, kindClaim, uid)
}

func remove[V any](j *Journal, m map[string]V, kind byte, id string) bool {
	if _, ok := m[id]; !ok {
		return false
	}
	delete(m, id)
	j.mark(kind, id)
	return true
}
