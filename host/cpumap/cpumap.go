// Package cpumap draws a node's CPUs as its hardware nests them — sockets,
// NUMA nodes, cores, threads — with what holds each CPU: a container pinned
// to it, a pool or balloon. One Map renders as text for a terminal (Text),
// as an SVG in a self-contained HTML page (HTML) and as JSON (the Map
// itself); `nriwasm simulate` draws one after each step and the agent serves
// the live one at /debug/cpus.
package cpumap

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Kinds of holder.
const (
	KindContainer = "container"
	KindPool      = "pool"
)

// Holding is one thing that holds CPUs: a container by its cpuset, or a pool.
type Holding struct {
	// Name is "namespace/pod/container" for a container, the pool's name
	// for a pool.
	Name string
	// Kind is KindContainer or KindPool.
	Kind string
	// CPUs is its cpuset; empty for a container that runs unpinned.
	CPUs cpuset.Set
}

// Map is a node's CPUs and their holders.
type Map struct {
	// Title says what the map shows ("after step 3: pod default/web").
	Title string `json:"title,omitempty"`
	// Note says what the map leaves out and why ("the policy's pools are not
	// shown: …"), when it is incomplete; every format shows it under the
	// title.
	Note string `json:"note,omitempty"`
	// Machine names the machine, when it has a name.
	Machine string   `json:"machine,omitempty"`
	Sockets []Socket `json:"sockets"`
	// Holders are the legend: one entry per distinct (kind, cpuset), its
	// names joined, ordered by first CPU, then name; pinned ones first.
	Holders []Holder `json:"holders"`
}

// Socket is a CPU package.
type Socket struct {
	ID    uint32 `json:"id"`
	Nodes []Node `json:"nodes"`
}

// Node is a NUMA node's CPUs in a socket.
type Node struct {
	ID    uint32 `json:"id"`
	Cores []Core `json:"cores"`
}

// Core is a physical core: its threads (hyperthreads), by CPU id.
type Core struct {
	Threads []Thread `json:"threads"`
}

// Thread is one logical CPU and the labels of the holders that hold it.
type Thread struct {
	CPU     uint32   `json:"cpu"`
	Holders []string `json:"holders,omitempty"`
}

// Holder is a legend entry.
type Holder struct {
	// Label is what the map's cells show: A-Z, a-z, then A1, B1, ...
	Label string `json:"label"`
	Kind  string `json:"kind"`
	// Names are the containers (or pools) holding exactly these CPUs.
	Names []string `json:"names"`
	// CPUs is the cpuset in the kernel's list format, "" when unpinned.
	CPUs string `json:"cpus"`
}

// Labels hands out legend labels that stay put across a series of maps: a
// holding keeps the label it first got (a group of holdings with one cpuset
// shows the earliest label of its members; a new group, a new label for its
// first member). The zero value
// is ready; a nil *Labels labels each map afresh.
type Labels struct {
	byName map[string]int
	next   int
}

func (l *Labels) of(name string) int {
	if l.byName == nil {
		l.byName = map[string]int{}
	}
	i, ok := l.byName[name]
	if !ok {
		i = l.next
		l.byName[name] = i
		l.next++
	}
	return i
}

// Build lays out topo's online CPUs and marks what holds each. Holdings with
// the same kind and cpuset share one legend entry. The result depends only on
// its inputs' contents, not their order; labels come from l (nil: afresh).
func Build(topo *abi.Topology, holdings []Holding, l *Labels) *Map {
	m := &Map{Sockets: []Socket{}, Holders: []Holder{}}
	if l == nil {
		l = &Labels{}
	}
	m.Holders = legend(holdings, l)
	byCPU := map[uint32][]string{}
	for _, h := range m.Holders {
		set, _ := cpuset.Parse(h.CPUs)
		for id := range set.All() {
			byCPU[id] = append(byCPU[id], h.Label)
		}
	}
	cpus := slices.Clone(topo.GetCpus())
	slices.SortFunc(cpus, func(a, b *abi.CPU) int {
		return cmp.Or(cmp.Compare(a.PackageId, b.PackageId), cmp.Compare(a.NumaNode, b.NumaNode), cmp.Compare(a.Id, b.Id))
	})
	online := map[uint32]bool{}
	for _, c := range cpus {
		online[c.Id] = true
	}
	placed := map[uint32]bool{}
	for _, c := range cpus {
		if placed[c.Id] {
			continue
		}
		if len(m.Sockets) == 0 || m.Sockets[len(m.Sockets)-1].ID != c.PackageId {
			m.Sockets = append(m.Sockets, Socket{ID: c.PackageId})
		}
		s := &m.Sockets[len(m.Sockets)-1]
		if len(s.Nodes) == 0 || s.Nodes[len(s.Nodes)-1].ID != c.NumaNode {
			s.Nodes = append(s.Nodes, Node{ID: c.NumaNode})
		}
		n := &s.Nodes[len(s.Nodes)-1]
		siblings := slices.Clone(c.ThreadSiblings)
		if !slices.Contains(siblings, c.Id) {
			siblings = append(siblings, c.Id)
		}
		slices.Sort(siblings)
		var core Core
		for _, id := range siblings {
			if online[id] && !placed[id] {
				placed[id] = true
				core.Threads = append(core.Threads, Thread{CPU: id, Holders: byCPU[id]})
			}
		}
		n.Cores = append(n.Cores, core)
	}
	return m
}

// legend merges holdings with equal kind and cpuset and labels them: names
// new to l get labels in the order of the holders' first CPUs.
func legend(holdings []Holding, l *Labels) []Holder {
	type key struct{ kind, cpus string }
	merged := map[key]*Holder{}
	var out []Holder
	for _, h := range holdings {
		k := key{h.Kind, h.CPUs.String()}
		if e := merged[k]; e != nil {
			e.Names = append(e.Names, h.Name)
			continue
		}
		merged[k] = &Holder{Kind: h.Kind, Names: []string{h.Name}, CPUs: k.cpus}
	}
	for _, h := range merged {
		slices.Sort(h.Names)
		out = append(out, *h)
	}
	first := func(h Holder) (uint32, bool) {
		set, _ := cpuset.Parse(h.CPUs)
		ids := set.Sorted()
		if len(ids) == 0 {
			return 0, false
		}
		return ids[0], true
	}
	slices.SortFunc(out, func(a, b Holder) int {
		fa, pa := first(a)
		fb, pb := first(b)
		if pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Names[0], b.Names[0]), cmp.Compare(a.CPUs, b.CPUs))
	})
	index := make([]int, len(out))
	for i, h := range out {
		index[i] = -1
		for _, name := range h.Names {
			if j, ok := l.byName[name]; ok && (index[i] < 0 || j < index[i]) {
				index[i] = j
			}
		}
		if index[i] < 0 {
			index[i] = l.of(h.Names[0])
		}
		out[i].Label = label(index[i])
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(index[a], index[b]) })
	sorted := make([]Holder, len(out))
	for i, j := range order {
		sorted[i] = out[j]
	}
	return sorted
}

// label is the i-th legend label: A-Z, a-z, then A1-z1, A2, ...
func label(i int) string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	l := string(letters[i%len(letters)])
	if n := i / len(letters); n > 0 {
		l += fmt.Sprint(n)
	}
	return l
}

// Summary is the holder's names joined for a legend line.
func (h Holder) Summary() string { return strings.Join(h.Names, ", ") }

// Containers are the holdings of the containers in rs, named
// "namespace/pod/container", each by the cpuset of its assignment (what the
// agent applied), else of its resources (what the runtime reported).
func Containers(rs *abi.RestoreState) []Holding {
	pods := map[string]string{}
	for _, p := range rs.GetPods() {
		pods[p.GetId()] = p.GetNamespace() + "/" + p.GetName()
	}
	var out []Holding
	for _, c := range rs.GetContainers() {
		pod, ok := pods[c.GetPodSandboxId()]
		if !ok {
			pod = c.GetNamespace() + "/" + c.GetPodSandboxId()
		}
		cpus := c.GetAssignment().GetCpusetCpus() // what the host applied
		if cpus == "" {
			cpus = c.GetResources().GetCpusetCpus() // the runtime's own
		}
		set, err := cpuset.Parse(cpus)
		if err != nil {
			set = cpuset.Set{}
		}
		out = append(out, Holding{Name: pod + "/" + c.GetName(), Kind: KindContainer, CPUs: set})
	}
	return out
}
