package v1

import (
	"fmt"
	"iter"
	"unsafe"
)

// MinorGroupedUpdates is the first ABI minor version whose hosts expand
// ContainerUpdate.also_container_ids. A policy sends the field only to a host
// whose InitRequest.host_abi_minor is at least this.
const MinorGroupedUpdates = 1

// AnswerError is an answer the host's client refused before anything else saw
// it: Field, the dotted path of the offending field in the answer as the policy
// sent it (e.g. "updates[2].also_container_ids[0]"), breaks the rule Message
// states. Nothing of the answer is applied.
type AnswerError struct {
	Method  Method
	Field   string
	Message string
}

func (e *AnswerError) Error() string {
	return e.Method.Short() + ": " + e.Field + ": " + e.Message
}

// UpdatesField returns the address of the updates field of r's result, or nil
// when the result has none (Info, Init, Devices, DumpState, an Error) or is
// unset. Both sides of the ABI use it to rewrite an answer's updates in one
// place for every method.
func (r *Response) UpdatesField() *[]*ContainerUpdate {
	switch x := r.GetResult().(type) {
	case *Response_Reconfigure:
		if x.Reconfigure != nil {
			return &x.Reconfigure.Updates
		}
	case *Response_Allocate:
		if x.Allocate != nil {
			return &x.Allocate.Updates
		}
	case *Response_Release:
		if x.Release != nil {
			return &x.Release.Updates
		}
	case *Response_Synchronize:
		if x.Synchronize != nil {
			return &x.Synchronize.Updates
		}
	case *Response_RunPodSandbox:
		if x.RunPodSandbox != nil {
			return &x.RunPodSandbox.Updates
		}
	case *Response_CreateContainer:
		if x.CreateContainer != nil {
			return &x.CreateContainer.Updates
		}
	case *Response_UpdateContainer:
		if x.UpdateContainer != nil {
			return &x.UpdateContainer.Updates
		}
	case *Response_StopContainer:
		if x.StopContainer != nil {
			return &x.StopContainer.Updates
		}
	case *Response_RemoveContainer:
		if x.RemoveContainer != nil {
			return &x.RemoveContainer.Updates
		}
	case *Response_StopPodSandbox:
		if x.StopPodSandbox != nil {
			return &x.StopPodSandbox.Updates
		}
	case *Response_RemovePodSandbox:
		if x.RemovePodSandbox != nil {
			return &x.RemovePodSandbox.Updates
		}
	}
	return nil
}

// CheckGroups refuses an answer whose also_container_ids holds an empty id,
// naming the field as "updates[i].also_container_ids[j]" in an *AnswerError
// without Method. It is the check ExpandUpdates makes, for a caller that keeps
// the groups (KeepGroups); it does not allocate.
func CheckGroups(us []*ContainerUpdate) error {
	for i, u := range us {
		for j, id := range u.GetAlsoContainerIds() {
			if id == "" {
				return &AnswerError{Field: fmt.Sprintf("updates[%d].also_container_ids[%d]", i, j), Message: "empty container id"}
			}
		}
	}
	return nil
}

// EachContainer walks updates per container without copying them: it yields
// every container us changes, in the order ExpandUpdates lists them (each
// update's container_id, then its also_container_ids), with the update that
// changes it. A group's members get the group's own update, so read the
// container from the id yielded, never from the update's ContainerId. A nil
// update yields "" and nil.
//
//	for id, u := range abi.EachContainer(resp.GetUpdates()) {
//		apply(id, u.GetCpusetCpus(), u.GetCpusetMems())
//	}
func EachContainer(us []*ContainerUpdate) iter.Seq2[string, *ContainerUpdate] {
	return func(yield func(string, *ContainerUpdate) bool) {
		for _, u := range us {
			if !yield(u.GetContainerId(), u) {
				return
			}
			for _, id := range u.GetAlsoContainerIds() {
				if !yield(id, u) {
					return
				}
			}
		}
	}
}

// CountContainers is the number of containers us changes: the length of
// ExpandUpdates(us), counted without expanding.
func CountContainers(us []*ContainerUpdate) int {
	n := len(us)
	for _, u := range us {
		n += len(u.GetAlsoContainerIds())
	}
	return n
}

// ExpandUpdates turns grouped updates into one update per container: each
// update in place, its container_id first and then one for each of its
// also_container_ids, in order, all sharing the group's strings. An answer
// without also_container_ids is returned as it is, without allocating; a
// grouped update is replaced by copies, so us and its elements are not changed.
// Use it where a flat list is needed; EachContainer walks the same list
// without the copies.
//
// It refuses what CheckGroups refuses. An id may repeat, in a group or across
// updates: every update applies in order, as two plain updates for one
// container always did.
func ExpandUpdates(us []*ContainerUpdate) ([]*ContainerUpdate, error) {
	if err := CheckGroups(us); err != nil {
		return nil, err
	}
	n := CountContainers(us) - len(us)
	if n == 0 {
		return us, nil
	}
	groups := 0
	for _, u := range us {
		if len(u.GetAlsoContainerIds()) > 0 {
			groups++
		}
	}
	out := make([]*ContainerUpdate, 0, len(us)+n)
	copies := make([]ContainerUpdate, groups+n) // one allocation for all of them
	for _, u := range us {
		also := u.GetAlsoContainerIds()
		if len(also) == 0 {
			out = append(out, u)
			continue
		}
		for j := -1; j < len(also); j++ {
			c := &copies[0]
			copies = copies[1:]
			c.ContainerId, c.CpusetCpus, c.CpusetMems, c.RdtClass, c.BlockioClass = u.ContainerId, u.CpusetCpus, u.CpusetMems, u.RdtClass, u.BlockioClass
			if j >= 0 {
				c.ContainerId = also[j]
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// FoldUpdates is ExpandUpdates' inverse for a policy: every run of
// consecutive updates that make the same change (the same cpuset_cpus,
// cpuset_mems, rdt_class and blockio_class) becomes one update, the first
// one's container_id with the others in also_container_ids. Expanding the
// result gives back us, in the same order. Updates that already carry
// also_container_ids, or have no container_id, are kept as they are. A folded
// run's update is a new message; us and its elements are not changed. Use it
// only when the host's InitRequest.host_abi_minor is at least
// MinorGroupedUpdates.
//
// Comparing the lists costs one pointer comparison when the policy reuses one
// string for a group's list, as policies that keep a pool's or a balloon's
// list do, and a byte comparison otherwise.
func FoldUpdates(us []*ContainerUpdate) []*ContainerUpdate {
	if len(us) < 2 {
		return us
	}
	var out []*ContainerUpdate
	for i := 0; i < len(us); {
		j := i + 1
		if u := us[i]; groupable(u) {
			for j < len(us) && groupable(us[j]) && sameChange(u, us[j]) {
				j++
			}
		}
		if j-i == 1 {
			if out != nil {
				out = append(out, us[i])
			}
			i++
			continue
		}
		if out == nil {
			out = append(make([]*ContainerUpdate, 0, len(us)-(j-i)+1), us[:i]...)
		}
		u := us[i]
		g := &ContainerUpdate{ContainerId: u.ContainerId, CpusetCpus: u.CpusetCpus, CpusetMems: u.CpusetMems, RdtClass: u.RdtClass, BlockioClass: u.BlockioClass,
			AlsoContainerIds: make([]string, 0, j-i-1)}
		for _, m := range us[i+1 : j] {
			g.AlsoContainerIds = append(g.AlsoContainerIds, m.ContainerId)
		}
		out = append(out, g)
		i = j
	}
	if out == nil {
		return us
	}
	return out
}

// groupable tells whether u can head or join a group: it has a container id
// and no group of its own.
func groupable(u *ContainerUpdate) bool {
	return u != nil && u.ContainerId != "" && len(u.AlsoContainerIds) == 0
}

// sameChange tells whether u and v make the same change.
func sameChange(u, v *ContainerUpdate) bool {
	return sameString(u.CpusetCpus, v.CpusetCpus) && sameString(u.CpusetMems, v.CpusetMems) &&
		sameString(u.RdtClass, v.RdtClass) && sameString(u.BlockioClass, v.BlockioClass)
}

// sameString is a == b, answered without reading the bytes when both are one
// string in memory.
func sameString(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	return unsafe.StringData(a) == unsafe.StringData(b) || a == b
}

// ChangedUpdate is the update that moves container id from the cpuset and
// mems it was given (oldCPUs, oldMems) to new ones: only the fields that
// changed to a non-empty value are set (an empty one means "not pinned",
// which an update cannot express); nil when neither did.
func ChangedUpdate(id, oldCPUs, newCPUs, oldMems, newMems string) *ContainerUpdate {
	u := &ContainerUpdate{ContainerId: id}
	if newCPUs != oldCPUs && newCPUs != "" {
		u.CpusetCpus = newCPUs
	}
	if newMems != oldMems && newMems != "" {
		u.CpusetMems = newMems
	}
	if u.CpusetCpus == "" && u.CpusetMems == "" {
		return nil
	}
	return u
}
