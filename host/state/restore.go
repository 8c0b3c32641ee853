package state

import (
	"maps"
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Reconcile brings j in line with what the runtime reports in Synchronize. The
// runtime is the truth for what exists, the journal for what was assigned:
//
//   - the journaled pods become exactly the reported ones;
//   - journaled containers the runtime no longer has are removed from j and
//     returned in forgotten, with their assignments;
//   - every reported container is journaled afresh and returned in annotated,
//     with Assignment set to what j had for it, or nil for a container j did not
//     know (whatever Assignment the caller set is ignored).
//
// Both lists are sorted by container id; claims are left alone. The caller's
// messages are not modified.
func (j *Journal) Reconcile(pods []*abi.PodSandbox, containers []*abi.Container) (forgotten, annotated []*abi.Container) {
	for id := range j.pods {
		j.mark(kindPod, id)
	}
	clear(j.pods)
	for _, p := range pods {
		j.AddPod(p)
	}
	live := make(map[string]*abi.Container, len(containers))
	for _, c := range containers {
		if c == nil {
			continue
		}
		n := c.CloneVT()
		n.Assignment = j.containers[n.GetId()].GetAssignment() // owned by j: moved, not shared
		live[n.GetId()] = n
	}
	for _, id := range slices.Sorted(maps.Keys(j.containers)) {
		if _, ok := live[id]; !ok {
			forgotten = append(forgotten, j.containers[id])
			j.mark(kindContainer, id)
		}
	}
	for id := range live {
		j.mark(kindContainer, id)
	}
	j.groups.clear() // every container they name is marked, kept or removed
	j.containers = live
	j.generation++
	for _, id := range slices.Sorted(maps.Keys(live)) {
		annotated = append(annotated, live[id].CloneVT())
	}
	return forgotten, annotated
}

// RestoreState returns a copy of j as the policy's abi.RestoreState: pods and
// containers sorted by id, claims by uid, so equal journals give equal messages.
func (j *Journal) RestoreState() *abi.RestoreState {
	return j.restoreState().CloneVT()
}

// restoreState is RestoreState without the copy: its messages are j's own, valid
// until j changes.
func (j *Journal) restoreState() *abi.RestoreState {
	return &abi.RestoreState{
		Pods:       sortedValues(j.pods),
		Containers: sortedValues(j.containers),
		Claims:     sortedValues(j.claims),
	}
}

func sortedValues[V any](m map[string]V) []V {
	if len(m) == 0 {
		return nil
	}
	out := make([]V, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// FromRestoreState returns a journal holding copies of rs's records; later
// records replace earlier ones with the same id. A nil rs gives an empty journal.
func FromRestoreState(rs *abi.RestoreState) *Journal { return fromRestoreState(rs, true) }

// fromRestoreState is FromRestoreState; without clone the journal takes rs's
// messages over.
func fromRestoreState(rs *abi.RestoreState, clone bool) *Journal {
	j := New()
	for _, p := range rs.GetPods() {
		if p != nil {
			j.pods[p.GetId()] = cloneIf(p, clone)
		}
	}
	for _, c := range rs.GetContainers() {
		if c != nil {
			j.containers[c.GetId()] = cloneIf(c, clone)
		}
	}
	for _, c := range rs.GetClaims() {
		if c != nil {
			j.claims[c.GetClaim().GetUid()] = cloneIf(c, clone)
		}
	}
	return j
}

func cloneIf[M interface{ CloneVT() M }](m M, clone bool) M {
	if clone {
		return m.CloneVT()
	}
	return m
}
