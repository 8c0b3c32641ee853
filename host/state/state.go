// Package state keeps the host's journal and its on-disk checkpoint.
//
// The Journal records what the host told the runtime and kubelet: every live pod,
// every container with the assignment it was given (the CreateContainer
// adjustment with every later ContainerUpdate merged in) and every prepared
// claim. After a restart or a policy rebuild it becomes the policy's
// abi.RestoreState, so running containers keep what they were given.
//
// A Checkpoint stores a Journal in one file of a state directory, written
// atomically and checked on load. A checkpoint that cannot be trusted is set
// aside, never fatal: the agent starts from what the runtime reports.
//
// Between two Saves, the decisions the agent must not lose go to a decision
// log beside the checkpoint (AppendDelta, Append): one record per call, the
// records it changed, appended without rewriting the checkpoint. Load replays
// it over the checkpoint; TrimLog drops what a Save covers.
//
//	ck := state.NewCheckpoint("/var/lib/nriwasm")
//	j, err := ck.Load() // j is never nil; log err and carry on
//	j.AddPod(pod)
//	err = ck.Save(j)
//
// A Journal is not safe for concurrent use: the resource manager serializes every
// call under its one lock. See host/state/RATIONALE.md for the format and why.
package state

import (
	"maps"
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Journal is the host's record of live pods, containers and prepared claims. The
// zero value is not usable; call New. Not safe for concurrent use.
//
// The journal keeps its own copies: messages passed in are cloned and messages
// returned are clones, so callers may reuse or modify theirs.
type Journal struct {
	pods       map[string]*abi.PodSandbox    // by sandbox id
	containers map[string]*abi.Container     // by container id, with Assignment
	claims     map[string]*abi.PreparedClaim // by claim uid
	generation uint64
	// dirty holds the records changed since the last ClearDelta: what the
	// next decision-log record (AppendDelta) carries.
	dirty map[key]struct{}
	// groups holds the grouped updates applied since the last ClearDelta,
	// in order, each with the members it changed: the next record carries
	// them once instead of every member's whole record.
	groups groupList
	// enc holds the records encoded for the checkpoint, from the first
	// Snapshot on (snapshot.go).
	enc encoding
}

// key names one record of a Journal: its kind and its id.
type key struct {
	kind byte // kindPod, kindContainer or kindClaim
	id   string
}

const (
	kindPod byte = iota
	kindContainer
	kindClaim
)

// mark notes that the record (kind, id) changed.
func (j *Journal) mark(kind byte, id string) {
	j.dirty[key{kind, id}] = struct{}{}
	j.enc.markStale(kind, id)
	j.generation++
}

// foldFactor bounds the grouped updates a journal keeps between two records:
// once they name more members than foldFactor times the journaled
// containers, they are folded into their members' whole records. A member
// costs a group its id (~70 bytes on disk, 16 in memory) against its whole
// record's hundreds, so a long run of changes with no record in between (pod
// removals, each moving a balloon) keeps what a whole record per container
// would, and a record is never larger than those whole records.
const foldFactor = 4

// groupList keeps grouped updates already applied, in order, and counts
// their members, bounded by foldFactor: the journal's for the next record,
// its encoding's for the next Snapshot.
type groupList struct {
	list    []*abi.ContainerUpdate
	members int
}

// add keeps g and reports whether the kept groups now name more than
// foldFactor times containers members: the caller then folds them into
// their members (eachMember) and clears the list.
func (l *groupList) add(g *abi.ContainerUpdate, containers int) (fold bool) {
	l.list = append(l.list, g)
	l.members += 1 + len(g.GetAlsoContainerIds())
	return l.members > foldFactor*containers
}

// eachMember calls f with every member of every kept group, in order.
func (l *groupList) eachMember(f func(id string)) {
	for _, g := range l.list {
		f(g.GetContainerId())
		for _, id := range g.GetAlsoContainerIds() {
			f(id)
		}
	}
}

// clear forgets the kept groups, keeping the list's room.
func (l *groupList) clear() {
	clear(l.list)
	l.list, l.members = l.list[:0], 0
}

// addGroup keeps g, a grouped update already applied, for the next record,
// folding the kept groups into their members' whole records past foldFactor.
func (j *Journal) addGroup(g *abi.ContainerUpdate) {
	j.enc.addStaleGroup(g, len(j.containers))
	j.generation++
	if !j.groups.add(g, len(j.containers)) {
		return
	}
	j.groups.eachMember(func(id string) { j.dirty[key{kindContainer, id}] = struct{}{} })
	j.groups.clear()
}

// Counts is how many records a Journal holds.
type Counts struct {
	Pods, Containers, Claims int
}

// New returns an empty journal.
func New() *Journal {
	return &Journal{
		pods:       map[string]*abi.PodSandbox{},
		containers: map[string]*abi.Container{},
		claims:     map[string]*abi.PreparedClaim{},
		dirty:      map[key]struct{}{},
	}
}

// Counts returns how many pods, containers and claims j holds.
func (j *Journal) Counts() Counts {
	return Counts{Pods: len(j.pods), Containers: len(j.containers), Claims: len(j.claims)}
}

// Generation counts the changes made to j since New or FromRestoreState. The
// agent can compare it with the generation it last saved to skip a Save that
// would write the same records.
func (j *Journal) Generation() uint64 { return j.generation }

// Pod returns a copy of the pod with sandbox id, if journaled.
func (j *Journal) Pod(id string) (*abi.PodSandbox, bool) {
	p, ok := j.pods[id]
	return p.CloneVT(), ok
}

// HasPod reports whether the pod with sandbox id is journaled, without
// copying it: CreateContainer's check that its pod is known.
func (j *Journal) HasPod(id string) bool {
	_, ok := j.pods[id]
	return ok
}

// Container returns a copy of the container with id and its assignment, if
// journaled.
func (j *Journal) Container(id string) (*abi.Container, bool) {
	c, ok := j.containers[id]
	return c.CloneVT(), ok
}

// HasContainer reports whether the container with id is journaled, without
// copying it: the check of every id an answer updates.
func (j *Journal) HasContainer(id string) bool {
	_, ok := j.containers[id]
	return ok
}

// ClaimUIDs lists the uids of the prepared claims, sorted.
func (j *Journal) ClaimUIDs() []string {
	return slices.Sorted(maps.Keys(j.claims))
}

// Claim returns a copy of the prepared claim with uid, if journaled.
func (j *Journal) Claim(uid string) (*abi.PreparedClaim, bool) {
	c, ok := j.claims[uid]
	return c.CloneVT(), ok
}
