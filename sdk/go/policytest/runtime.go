package policytest

import (
	"context"
	"slices"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Runtime drives one policy instance the way the host and containerd do,
// and holds what the runtime would: every pod, and every container as
// created with its Assignment kept current (the create adjustment, then
// each update applied).
type Runtime struct {
	TB       testing.TB
	Client   *abi.Client
	Topology *abi.Topology
	// Config is the configuration in force (Init's, then each accepted
	// Reconfigure's).
	Config     string
	Pods       map[string]*abi.PodSandbox
	Containers map[string]*abi.Container
	// Order are the container ids in creation order.
	Order []string
	// Claims are the prepared claims, in preparation order.
	Claims []*abi.PreparedClaim
	// AfterChange, when set, runs after every call that may have changed
	// the placement, failed ones included: a policy's own invariants.
	AfterChange func()
	// SortedUpdates requires every answer's updates in container id order.
	SortedUpdates bool
}

// OpenOnMachine starts a policy instance behind t on the fixture machine
// (Machine) as node "n1", with config and restore: Open with that Init, an
// OpenOn for Runtimes.
func OpenOnMachine(tb testing.TB, t abi.Transport, machine, config string, restore *abi.RestoreState) (*Runtime, error) {
	return Open(tb, t, &abi.InitRequest{Config: []byte(config), NodeName: "n1", Topology: Machine(tb, machine), Restore: restore})
}

// Open starts a policy instance behind t with Init. A restore's pods,
// containers and claims become the runtime's, as the host's journal holds
// them. The runtime is returned with Init's error, so a test can check a
// refusal.
func Open(tb testing.TB, t abi.Transport, init *abi.InitRequest) (*Runtime, error) {
	rt := &Runtime{TB: tb, Client: abi.NewClient(t), Topology: init.GetTopology(), Config: string(init.GetConfig()),
		Pods: map[string]*abi.PodSandbox{}, Containers: map[string]*abi.Container{}}
	_, err := rt.Client.Init(context.Background(), init)
	if restore := init.GetRestore(); err == nil && restore != nil {
		for _, p := range restore.Pods {
			rt.Pods[p.Id] = p
		}
		for _, c := range restore.Containers {
			rt.Containers[c.Id] = c.CloneVT()
			rt.Order = append(rt.Order, c.Id)
		}
		rt.Claims = restore.Claims
	}
	return rt, err
}

func (rt *Runtime) changed() {
	if rt.AfterChange != nil {
		rt.TB.Helper()
		rt.AfterChange()
	}
}

// TryCreate creates the container s describes; a refusal is returned, not
// failed.
func (rt *Runtime) TryCreate(s Spec) (*abi.CreateContainerResponse, error) {
	rt.TB.Helper()
	return rt.TryCreateRequest(s.Request())
}

// TryCreateRequest creates a container, keeping its pod if the runtime
// holds it already; a refusal is returned, not failed.
func (rt *Runtime) TryCreateRequest(req *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	rt.TB.Helper()
	resp, err := rt.Client.CreateContainer(context.Background(), req)
	if err != nil {
		rt.changed()
		return nil, err
	}
	req.Container.Assignment = resp.Adjustment
	if old := rt.Pods[req.Pod.Id]; old != nil {
		req.Pod = old
	}
	rt.Pods[req.Pod.Id], rt.Containers[req.Container.Id] = req.Pod, req.Container
	rt.Order = append(rt.Order, req.Container.Id)
	rt.Apply(resp.Updates)
	rt.changed()
	return resp, nil
}

// Create is TryCreate failing tb on a refusal.
func (rt *Runtime) Create(s Spec) *abi.CreateContainerResponse {
	rt.TB.Helper()
	resp, err := rt.TryCreate(s)
	if err != nil {
		rt.TB.Fatalf("CreateContainer(%s): %v", s.ID, err)
	}
	return resp
}

// Remove removes container id, failing tb on an error, and returns the
// updates the removal caused.
func (rt *Runtime) Remove(id string) []*abi.ContainerUpdate {
	rt.TB.Helper()
	c := rt.Containers[id]
	resp, err := rt.Client.RemoveContainer(context.Background(), &abi.RemoveContainerRequest{Pod: rt.Pods[c.GetPodSandboxId()], Container: c})
	if err != nil {
		rt.TB.Fatalf("RemoveContainer(%s): %v", id, err)
	}
	delete(rt.Containers, id)
	for i, o := range rt.Order {
		if o == id {
			rt.Order = append(rt.Order[:i:i], rt.Order[i+1:]...)
			break
		}
	}
	rt.Apply(resp.Updates)
	rt.changed()
	return resp.Updates
}

// Update changes container id's resources; a refusal is returned.
func (rt *Runtime) Update(id string, res *abi.Resources) ([]*abi.ContainerUpdate, error) {
	rt.TB.Helper()
	c := rt.Containers[id]
	resp, err := rt.Client.UpdateContainer(context.Background(), &abi.UpdateContainerRequest{Pod: rt.Pods[c.GetPodSandboxId()], Container: c, Resources: res})
	if err != nil {
		rt.changed()
		return nil, err
	}
	c.Resources = res
	rt.Apply(resp.Updates)
	rt.changed()
	return resp.Updates, nil
}

// Reconfigure hands the policy a new configuration; a refusal is returned
// and leaves Config as it was.
func (rt *Runtime) Reconfigure(config string) error {
	rt.TB.Helper()
	resp, err := rt.Client.Reconfigure(context.Background(), &abi.ReconfigureRequest{Config: []byte(config)})
	if err != nil {
		rt.changed()
		return err
	}
	rt.Config = config
	rt.Apply(resp.Updates)
	rt.changed()
	return nil
}

// Apply records updates as the runtime would. An update of a container the
// runtime does not run fails tb; one container updated twice in an answer,
// or with SortedUpdates an answer out of id order, is an error.
func (rt *Runtime) Apply(updates []*abi.ContainerUpdate) {
	rt.TB.Helper()
	seen := make(map[string]bool, len(updates))
	for i, u := range updates {
		if seen[u.ContainerId] {
			rt.TB.Errorf("container %q updated twice in one answer", u.ContainerId)
		}
		seen[u.ContainerId] = true
		if rt.SortedUpdates && i > 0 && updates[i-1].ContainerId >= u.ContainerId {
			rt.TB.Errorf("updates not sorted by id: %q before %q", updates[i-1].ContainerId, u.ContainerId)
		}
		c := rt.Containers[u.ContainerId]
		if c == nil {
			rt.TB.Fatalf("update for unknown container %q", u.ContainerId)
			continue
		}
		if c.Assignment == nil {
			c.Assignment = &abi.ContainerAdjustment{}
		}
		if u.CpusetCpus != "" {
			c.Assignment.CpusetCpus = u.CpusetCpus
		}
		if u.CpusetMems != "" {
			c.Assignment.CpusetMems = u.CpusetMems
		}
	}
}

// CPUs is the cpuset the runtime holds for container id.
func (rt *Runtime) CPUs(id string) cpuset.Set {
	rt.TB.Helper()
	return MustSet(rt.TB, rt.Containers[id].GetAssignment().GetCpusetCpus())
}

// RestoreState is what the host's journal holds: each pod once, the
// containers in creation order as running, with their current assignment,
// and the prepared claims.
func (rt *Runtime) RestoreState() *abi.RestoreState {
	rs := &abi.RestoreState{Claims: rt.Claims}
	seen := map[string]bool{}
	for _, id := range rt.Order {
		c := rt.Containers[id]
		if p := rt.Pods[c.PodSandboxId]; !seen[p.GetId()] {
			seen[p.GetId()] = true
			rs.Pods = append(rs.Pods, p)
		}
		rc := c.CloneVT()
		rc.State = abi.ContainerState_CONTAINER_STATE_RUNNING
		rs.Containers = append(rs.Containers, rc)
	}
	return rs
}

// TryAllocate allocates a claim; the policy's answer (its devices and the
// updates) is kept as the host would prepare it. A refusal is returned.
func (rt *Runtime) TryAllocate(c *abi.Claim) (*abi.AllocateResponse, error) {
	rt.TB.Helper()
	resp, err := rt.Client.Allocate(context.Background(), &abi.AllocateRequest{Claim: c})
	if err != nil {
		rt.changed()
		return nil, err
	}
	if !slices.ContainsFunc(rt.Claims, func(p *abi.PreparedClaim) bool { return p.Claim.GetUid() == c.GetUid() }) {
		rt.Claims = append(rt.Claims, &abi.PreparedClaim{Claim: c, Allocation: resp})
	}
	rt.Apply(resp.Updates)
	rt.changed()
	return resp, nil
}

// Allocate is TryAllocate failing tb on a refusal.
func (rt *Runtime) Allocate(c *abi.Claim) *abi.AllocateResponse {
	rt.TB.Helper()
	resp, err := rt.TryAllocate(c)
	if err != nil {
		rt.TB.Fatalf("Allocate(%s): %v", c.GetUid(), err)
	}
	return resp
}

// TryRelease releases claim uid (a claim the runtime does not hold is
// sent by uid alone); a refusal is returned and keeps the claim.
func (rt *Runtime) TryRelease(uid string) ([]*abi.ContainerUpdate, error) {
	rt.TB.Helper()
	i := slices.IndexFunc(rt.Claims, func(p *abi.PreparedClaim) bool { return p.Claim.GetUid() == uid })
	c := &abi.Claim{Uid: uid}
	if i >= 0 {
		c = rt.Claims[i].Claim
	}
	resp, err := rt.Client.Release(context.Background(), &abi.ReleaseRequest{Claim: c})
	if err != nil {
		rt.changed()
		return nil, err
	}
	if i >= 0 {
		rt.Claims = slices.Delete(rt.Claims, i, i+1)
	}
	rt.Apply(resp.Updates)
	rt.changed()
	return resp.Updates, nil
}

// Release is TryRelease failing tb on a refusal.
func (rt *Runtime) Release(uid string) []*abi.ContainerUpdate {
	rt.TB.Helper()
	u, err := rt.TryRelease(uid)
	if err != nil {
		rt.TB.Fatalf("Release(%s): %v", uid, err)
	}
	return u
}
