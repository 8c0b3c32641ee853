package topologyaware

import (
	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// Init implements policy.Initializer: it parses the configuration, builds the
// pool tree from the topology and re-adopts every container of restore.
func (p *Policy) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	cfg, ix, err := kit.Init(r, ParseConfig, newTopoIndex)
	if err != nil {
		return nil, err
	}
	restored := readClaims(r.GetRestore().GetClaims())
	var claimed cpuset.Set
	if !r.GetSwap() {
		claimed = claimedCPUs(restored)
	}
	st, err := newState(cfg, ix, r.GetDriverName(), claimed)
	if err != nil {
		return nil, err
	}
	if err := st.adoptClaims(restored, r.GetSwap()); err != nil {
		return nil, err
	}
	st.adoptAll(r.GetRestore().GetPods(), r.GetRestore().GetContainers())
	p.st = st
	return &abi.InitResponse{WantsDra: cfg.DRA}, nil
}

// CreateContainer implements policy.ContainerCreator: a repeat answers what
// the first create was given.
func (p *Policy) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	return containers.Create(r, p.st.ctrs, (*container).adjustment, p.st.place, func(c *container) []*abi.ContainerUpdate { return p.st.updates(c.id) })
}

// forget serves StopContainer and RemoveContainer (containers.Forget): the
// container's CPUs go back to the pool at once.
func (p *Policy) forget(id string) []*abi.ContainerUpdate {
	p.st.remove(id)
	return p.st.updates("")
}

// Synchronize implements policy.Synchronizer: containers the runtime no
// longer runs are forgotten, unknown ones with an assignment are adopted as
// they are, unknown ones without one are placed (and told so by an update).
func (p *Policy) Synchronize(r *abi.SynchronizeRequest) (*abi.SynchronizeResponse, error) {
	live := map[string]bool{}
	var adopt, fresh []*abi.Container
	for _, c := range r.GetContainers() {
		if c.GetState() == abi.ContainerState_CONTAINER_STATE_STOPPED || c.GetId() == "" {
			continue
		}
		live[c.GetId()] = true
		switch {
		case p.st.ctrs[c.GetId()] != nil:
		case hasAssignment(c):
			adopt = append(adopt, c)
		default:
			fresh = append(fresh, c)
		}
	}
	for _, c := range p.st.containers() {
		if !live[c.id] {
			p.st.remove(c.id)
		}
	}
	p.st.adoptAll(r.GetPods(), adopt)
	pods := podsByID(r.GetPods())
	placed := map[string]*abi.ContainerUpdate{}
	for _, spec := range sortByID(fresh) {
		c, err := p.st.place(pods[spec.GetPodSandboxId()], spec)
		if err != nil {
			// It runs already: leave it where it is rather than refuse the sync.
			policy.Log.Warnf("synchronize: container %s left unmanaged: %v", spec.GetId(), err)
			continue
		}
		if c.sent != "" || c.mems != "" {
			placed[c.id] = &abi.ContainerUpdate{ContainerId: c.id, CpusetCpus: c.sent, CpusetMems: c.mems}
		}
	}
	var updates []*abi.ContainerUpdate
	for _, u := range p.st.plainUpdates("") {
		if pu := placed[u.ContainerId]; pu != nil {
			// A later placement moved its CPUs or (memory accounting) its
			// memory nodes: the one update says where it ends up.
			if u.CpusetCpus != "" {
				pu.CpusetCpus = u.CpusetCpus
			}
			if u.CpusetMems != "" {
				pu.CpusetMems = u.CpusetMems
			}
			continue
		}
		updates = append(updates, u)
	}
	for _, u := range placed {
		updates = append(updates, u)
	}
	return &abi.SynchronizeResponse{Updates: sortUpdates(updates)}, nil
}
