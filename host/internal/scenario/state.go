package scenario

import (
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// node is the simulated node: what the agent journals about every live pod,
// container and prepared claim.
type node struct {
	pods       []*livePod // in creation order
	containers map[string]*abi.Container
	claims     []*abi.PreparedClaim // in allocation order
	// gone is, by id, the last container removed from a live pod: what a
	// restart step lists as exited next to a successor of the same name.
	gone map[string]*abi.Container
}

type livePod struct {
	sandbox    *abi.PodSandbox
	containers []string // container ids, in creation order
}

func newNode() *node {
	return &node{containers: map[string]*abi.Container{}, gone: map[string]*abi.Container{}}
}

func (n *node) pod(name string) *livePod {
	for _, p := range n.pods {
		if p.sandbox.Name == name {
			return p
		}
	}
	return nil
}

func (n *node) removePod(name string) {
	n.pods = slices.DeleteFunc(n.pods, func(p *livePod) bool { return p.sandbox.Name == name })
}

func (n *node) removeContainer(p *livePod, id string) {
	if c := n.containers[id]; c != nil {
		n.gone[id] = c
	}
	delete(n.containers, id)
	p.containers = slices.DeleteFunc(p.containers, func(c string) bool { return c == id })
}

func (n *node) claim(key string) int {
	return slices.IndexFunc(n.claims, func(c *abi.PreparedClaim) bool {
		return c.Claim.Namespace+"/"+c.Claim.Name == key
	})
}

// journal is the RestoreState an Init on a rebuilt instance carries.
func (n *node) journal() *abi.RestoreState {
	rs := &abi.RestoreState{}
	for _, p := range n.pods {
		rs.Pods = append(rs.Pods, p.sandbox.CloneVT())
		for _, id := range p.containers {
			rs.Containers = append(rs.Containers, n.containers[id].CloneVT())
		}
	}
	for _, c := range n.claims {
		rs.Claims = append(rs.Claims, c.CloneVT())
	}
	return rs
}

// applyAdjustment records what CreateContainer gave c, as the runtime would
// apply it.
func applyAdjustment(c *abi.Container, adj *abi.ContainerAdjustment) {
	if adj == nil {
		adj = &abi.ContainerAdjustment{}
	}
	c.Assignment = adj.CloneVT()
	if adj.CpusetCpus != "" {
		c.Resources.CpusetCpus = adj.CpusetCpus
	}
	if adj.CpusetMems != "" {
		c.Resources.CpusetMems = adj.CpusetMems
	}
	for _, kv := range adj.Env {
		if i := slices.IndexFunc(c.Env, func(e *abi.KeyValue) bool { return e.Key == kv.Key }); i >= 0 {
			c.Env[i].Value = kv.Value
		} else {
			c.Env = append(c.Env, kv.CloneVT())
		}
	}
	for k, v := range adj.Annotations {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[k] = v
	}
}

// applyUpdate changes a running container's cpuset and classes.
func applyUpdate(c *abi.Container, u *abi.ContainerUpdate) {
	if c.Assignment == nil {
		c.Assignment = &abi.ContainerAdjustment{}
	}
	if u.CpusetCpus != "" {
		c.Resources.CpusetCpus, c.Assignment.CpusetCpus = u.CpusetCpus, u.CpusetCpus
	}
	if u.CpusetMems != "" {
		c.Resources.CpusetMems, c.Assignment.CpusetMems = u.CpusetMems, u.CpusetMems
	}
	if u.RdtClass != "" {
		c.Assignment.RdtClass = u.RdtClass
	}
	if u.BlockioClass != "" {
		c.Assignment.BlockioClass = u.BlockioClass
	}
}
