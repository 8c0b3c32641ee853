package policytest_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// toy is the smallest placing policy: a Guaranteed container gets whole
// CPUs of its own (the lowest free), every other one the CPUs nobody owns,
// and is updated when they change. forgetUpdates is its bug.
type toy struct {
	online        cpuset.Set
	owned         map[string]cpuset.Set
	shared        map[string]bool
	forgetUpdates bool
}

func (*toy) Describe() policy.Description { return policy.Description{Name: "toy", Version: "0.0.1"} }

func (p *toy) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	var ids []uint32
	for _, c := range r.GetTopology().GetCpus() {
		ids = append(ids, c.Id)
	}
	p.online, p.owned, p.shared = cpuset.New(ids...), map[string]cpuset.Set{}, map[string]bool{}
	return &abi.InitResponse{}, nil
}

func (p *toy) free() cpuset.Set {
	free := p.online
	for _, s := range p.owned {
		free = free.Difference(s)
	}
	return free
}

func (p *toy) updates(except string) []*abi.ContainerUpdate {
	if p.forgetUpdates {
		return nil
	}
	var out []*abi.ContainerUpdate
	for _, id := range slices.Sorted(maps.Keys(p.shared)) {
		if id != except {
			out = append(out, &abi.ContainerUpdate{ContainerId: id, CpusetCpus: p.free().String()})
		}
	}
	return out
}

func (p *toy) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	c := r.GetContainer()
	if c.GetQosClass() != abi.QOSClass_QOS_CLASS_GUARANTEED {
		p.shared[c.Id] = true
		return &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{CpusetCpus: p.free().String()}}, nil
	}
	n := int(c.GetResources().GetCpuRequestMilli() / 1000)
	free := p.free().Sorted()
	if n == 0 || n >= len(free) {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources", "%d CPUs do not fit in %d free", n, len(free))
	}
	p.owned[c.Id] = cpuset.New(free[:n]...)
	return &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{CpusetCpus: p.owned[c.Id].String()}, Updates: p.updates(c.Id)}, nil
}

func (p *toy) RemoveContainer(r *abi.RemoveContainerRequest) (*abi.RemoveContainerResponse, error) {
	id := r.GetContainer().GetId()
	delete(p.shared, id)
	if _, ok := p.owned[id]; !ok {
		return &abi.RemoveContainerResponse{}, nil
	}
	delete(p.owned, id)
	return &abi.RemoveContainerResponse{Updates: p.updates("")}, nil
}

func toyRunner(tb testing.TB, p *toy) abi.Transport {
	r, err := native.New(p)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// recorder is a testing.TB whose Errorf and Fatalf record instead of
// failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
