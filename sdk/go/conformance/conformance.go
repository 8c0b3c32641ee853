// Package conformance is the reference policy every SDK implements the same way
// (sdk/rust/conformance is the Rust port), so one suite, host/wasm's TestConformance,
// checks calls, errors and limits of every build against this package run natively:
// its answers are fixed by the rules below, and a port must give equal responses.
//
//   - Describe: name "conformance", version "1.0.0".
//   - Init and Reconfigure: config "reject" → ERROR_CODE_INVALID_ARGUMENT, field
//     "config"; wants_dra is true when config is "dra".
//   - Devices: one device "dev0" with attribute "conformance.nriwasm.io/index"
//     (int 0) and capacity "units" of "4".
//   - Allocate: one PreparedDevice per result, with CDI env
//     "CONFORMANCE_<REQUEST>=<device>" and a Ready condition.
//   - CreateContainer: the adjustment copies the container's env in reverse order,
//     sets cpuset_cpus to the annotation "conformance.nriwasm.io/cpuset" and adds
//     the annotation "conformance.nriwasm.io/seen" with the number of containers
//     created since Init (counting those Init's restore lists) and
//     "conformance.nriwasm.io/first" with the name of the first of them (a
//     string kept from an earlier request). The container's name selects a misbehaviour: "panic" panics,
//     "loop" never returns, "oom" allocates without bound, "print" writes to stdout
//     and stderr and then panics, "refuse" answers ERROR_CODE_RESOURCE_EXHAUSTED
//     with field "container.name", "log" logs one message per level.
//   - RunPodSandbox answers an empty response and records nothing (the
//     benchmarks' empty call).
//   - UpdateContainer (recorded too) answers updates from the container's
//     annotations: for each id in "conformance.nriwasm.io/each" (comma-separated)
//     one update with cpuset_cpus "0-1" and cpuset_mems "0", then for the ids in
//     "conformance.nriwasm.io/group" one grouped update (the first id, the rest in
//     also_container_ids) with cpuset_cpus "2-3". The SDK folds the first kind
//     for a v1.1 host and expands the second for a v1.0 host (abi/README.md
//     section 13), so both hosts see the same updates container by container.
//   - Pools (ABI v1.2) answers one pool "all": cpus "0-3", shared_cpus "2-3",
//     memory_nodes "0", capacity 4000 milli-CPU, allocated 100 per container
//     created so far, and container_ids holding the first container's name once
//     there is one. It records nothing.
//   - Every other call records its method name; DumpState answers the list as a
//     JSON array of strings. A successful Init starts the list, and the counts
//     above, over.
package conformance

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// Annotations the policy reads and writes.
const (
	CPUSetAnnotation = "conformance.nriwasm.io/cpuset"
	SeenAnnotation   = "conformance.nriwasm.io/seen"
	FirstAnnotation  = "conformance.nriwasm.io/first"
	// EachAnnotation lists the containers UpdateContainer updates one by one.
	EachAnnotation = "conformance.nriwasm.io/each"
	// GroupAnnotation lists the containers UpdateContainer updates as one group.
	GroupAnnotation = "conformance.nriwasm.io/group"
)

// Policy is the conformance policy. The zero value is ready to register.
type Policy struct {
	created int
	first   string
	events  []string
	sink    [][]byte
}

// Describe implements policy.Policy.
func (*Policy) Describe() policy.Description {
	return policy.Description{Name: "conformance", Version: "1.0.0", Summary: "the ABI conformance reference policy"}
}

func checkConfig(config []byte) (bool, error) {
	switch string(config) {
	case "reject":
		return false, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "config", "config %q is rejected by design", config)
	case "dra":
		return true, nil
	}
	return false, nil
}

// Init implements policy.Initializer.
func (p *Policy) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	dra, err := checkConfig(r.Config)
	if err != nil {
		return nil, err
	}
	// Answers depend only on what came since Init (abi/README.md section 11):
	// the state starts over from the restore journal.
	p.created, p.first, p.events, p.sink = 0, "", []string{"Init"}, nil
	for _, c := range r.GetRestore().GetContainers() {
		p.count(c.GetName())
	}
	return &abi.InitResponse{WantsDra: dra}, nil
}

// Reconfigure implements policy.Reconfigurer.
func (p *Policy) Reconfigure(r *abi.ReconfigureRequest) (*abi.ReconfigureResponse, error) {
	dra, err := checkConfig(r.Config)
	if err != nil {
		return nil, err
	}
	p.events = append(p.events, "Reconfigure")
	return &abi.ReconfigureResponse{WantsDra: dra}, nil
}

// Devices implements policy.DeviceProvider.
func (p *Policy) Devices(*abi.DevicesRequest) (*abi.DevicesResponse, error) {
	p.events = append(p.events, "Devices")
	return &abi.DevicesResponse{Devices: []*abi.Device{{
		Name: "dev0",
		Attributes: map[string]*abi.DeviceAttribute{
			"conformance.nriwasm.io/index": {Value: &abi.DeviceAttribute_IntValue{IntValue: 0}},
		},
		Capacities: map[string]*abi.DeviceCapacity{"units": {Value: "4"}},
	}}}, nil
}

// Allocate implements policy.Allocator.
func (p *Policy) Allocate(r *abi.AllocateRequest) (*abi.AllocateResponse, error) {
	p.events = append(p.events, "Allocate")
	resp := &abi.AllocateResponse{}
	for _, res := range r.GetClaim().GetResults() {
		resp.Devices = append(resp.Devices, &abi.PreparedDevice{
			Request: res.Request, Pool: res.Pool, Device: res.Device, ShareId: res.ShareId,
			ContainerEdits: &abi.CDIContainerEdits{Env: []string{
				"CONFORMANCE_" + strings.ToUpper(res.Request) + "=" + res.Device,
			}},
			Status: &abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Ready", Status: "True", Reason: "Prepared"}}},
		})
	}
	return resp, nil
}

// CreateContainer implements policy.ContainerCreator.
func (p *Policy) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	c := r.GetContainer()
	switch c.GetName() {
	case "panic":
		panic("conformance: panic requested")
	case "loop":
		for {
			p.created++
		}
	case "oom":
		for {
			p.sink = append(p.sink, make([]byte, 1<<20))
		}
	case "print":
		fmt.Fprintln(os.Stdout, "conformance: to stdout")
		fmt.Fprintln(os.Stderr, "conformance: to stderr")
		panic("conformance: panic after printing")
	case "refuse":
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.name", "refused by design")
	case "log":
		policy.Log.Debugf("conformance: debug")
		policy.Log.Infof("conformance: info")
		policy.Log.Warnf("conformance: warn")
		policy.Log.Errorf("conformance: error")
	}
	p.count(c.GetName())
	env := slices.Clone(c.GetEnv())
	slices.Reverse(env)
	return &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{
		CpusetCpus:  c.GetAnnotations()[CPUSetAnnotation],
		Env:         env,
		Annotations: map[string]string{SeenAnnotation: strconv.Itoa(p.created), FirstAnnotation: p.first},
	}}, nil
}

// count counts a created (or restored) container and keeps the first one's name.
func (p *Policy) count(name string) {
	p.created++
	if p.created == 1 {
		p.first = name
	}
}

func (p *Policy) record(method string) { p.events = append(p.events, method) }

// Release implements policy.Releaser.
func (p *Policy) Release(*abi.ReleaseRequest) (*abi.ReleaseResponse, error) {
	p.record("Release")
	return nil, nil
}

// Synchronize implements policy.Synchronizer.
func (p *Policy) Synchronize(*abi.SynchronizeRequest) (*abi.SynchronizeResponse, error) {
	p.record("Synchronize")
	return nil, nil
}

// RunPodSandbox implements policy.PodSandboxRunner.
func (p *Policy) RunPodSandbox(*abi.RunPodSandboxRequest) (*abi.RunPodSandboxResponse, error) {
	return nil, nil
}

// UpdateContainer implements policy.ContainerUpdater.
func (p *Policy) UpdateContainer(r *abi.UpdateContainerRequest) (*abi.UpdateContainerResponse, error) {
	p.record("UpdateContainer")
	resp := &abi.UpdateContainerResponse{}
	annotations := r.GetContainer().GetAnnotations()
	if ids := annotations[EachAnnotation]; ids != "" {
		for _, id := range strings.Split(ids, ",") {
			resp.Updates = append(resp.Updates, &abi.ContainerUpdate{ContainerId: id, CpusetCpus: "0-1", CpusetMems: "0"})
		}
	}
	if ids := annotations[GroupAnnotation]; ids != "" {
		all := strings.Split(ids, ",")
		resp.Updates = append(resp.Updates, &abi.ContainerUpdate{ContainerId: all[0], AlsoContainerIds: all[1:], CpusetCpus: "2-3"})
	}
	return resp, nil
}

// StopContainer implements policy.ContainerStopper.
func (p *Policy) StopContainer(*abi.StopContainerRequest) (*abi.StopContainerResponse, error) {
	p.record("StopContainer")
	return nil, nil
}

// RemoveContainer implements policy.ContainerRemover.
func (p *Policy) RemoveContainer(*abi.RemoveContainerRequest) (*abi.RemoveContainerResponse, error) {
	p.record("RemoveContainer")
	return nil, nil
}

// StopPodSandbox implements policy.PodSandboxStopper.
func (p *Policy) StopPodSandbox(*abi.StopPodSandboxRequest) (*abi.StopPodSandboxResponse, error) {
	p.record("StopPodSandbox")
	return nil, nil
}

// RemovePodSandbox implements policy.PodSandboxRemover.
func (p *Policy) RemovePodSandbox(*abi.RemovePodSandboxRequest) (*abi.RemovePodSandboxResponse, error) {
	p.record("RemovePodSandbox")
	return nil, nil
}

// DumpState implements policy.StateDumper.
func (p *Policy) DumpState(*abi.DumpStateRequest) (*abi.DumpStateResponse, error) {
	return &abi.DumpStateResponse{Json: eventsJSON(p.events)}, nil
}

// eventsJSON is the events as a JSON array of strings. The events are method
// names (ASCII letters), for which Go's quoting is JSON's; written out rather
// than with encoding/json, which adds ~0.5 MB of reflection to the guest.
func eventsJSON(events []string) []byte {
	b := []byte{'['}
	for i, e := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, e)
	}
	return append(b, ']')
}

// Pools implements policy.PoolReporter.
func (p *Policy) Pools(*abi.PoolsRequest) (*abi.PoolsResponse, error) {
	pool := &abi.Pool{
		Name: "all", Cpus: "0-3", SharedCpus: "2-3", MemoryNodes: "0",
		CapacityMilliCpu: 4000, AllocatedMilliCpu: 100 * uint64(p.created),
	}
	if p.created > 0 {
		pool.ContainerIds = []string{p.first}
	}
	return &abi.PoolsResponse{Pools: []*abi.Pool{pool}}, nil
}
