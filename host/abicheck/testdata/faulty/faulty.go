// Package faulty is a small policy that passes every abicheck check unless its
// configuration names a fault that breaks one of them; abicheck's tests run
// its .wasm (host/abicheck/testdata/faulty.wasm, built by make policies) to
// prove each check catches what it is for.
//
// Without a fault it gives each container the lowest free CPU of the node,
// frees it on RemoveContainer and takes the CPUs back from Init's restore
// state. A configuration "fault=NAME" selects a fault; any other means none:
//
//   - nil-container: CreateContainer dereferences a missing container (EmptyCalls)
//   - dump-calls: DumpState counts the calls the instance served, across Inits (Determinism)
//   - forget: Init ignores the restore state (RestoreAfterRebuild)
//   - huge-env: a created container gets a 300 KiB environment value (AnswersWithinLimits)
//   - native-differs: the native build hands out CPUs from the top (Native)
package faulty

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// calls counts the CreateContainer calls the instance served; Init does not
// reset it (the dump-calls fault).
var calls int

// Policy is the faulty policy; its zero value is ready.
type Policy struct {
	fault string
	cpus  []uint32          // the node's CPUs, ascending
	taken map[string]uint32 // container id → CPU
}

// Describe implements policy.Policy.
func (p *Policy) Describe() policy.Description {
	return policy.Description{Name: "faulty", Version: "1.0.0", Summary: "one CPU per container, with faults on request (abicheck's tests)"}
}

// Init implements policy.Initializer.
func (p *Policy) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	fault, _ := strings.CutPrefix(string(r.GetConfig()), "fault=")
	if !strings.HasPrefix(string(r.GetConfig()), "fault=") {
		fault = ""
	}
	p.fault, p.cpus, p.taken = fault, nil, map[string]uint32{}
	for _, c := range r.GetTopology().GetCpus() {
		p.cpus = append(p.cpus, c.GetId())
	}
	slices.Sort(p.cpus)
	if p.fault == "forget" {
		return &abi.InitResponse{}, nil
	}
	for _, c := range r.GetRestore().GetContainers() {
		set, err := cpuset.Parse(c.GetResources().GetCpusetCpus())
		if err == nil && set.Size() == 1 {
			p.taken[c.GetId()] = set.Sorted()[0]
		}
	}
	return &abi.InitResponse{}, nil
}

// Reconfigure implements policy.Reconfigurer: any configuration is accepted
// and changes nothing.
func (p *Policy) Reconfigure(*abi.ReconfigureRequest) (*abi.ReconfigureResponse, error) {
	return &abi.ReconfigureResponse{}, nil
}

// CreateContainer implements policy.ContainerCreator.
func (p *Policy) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	calls++
	var id string
	if p.fault == "nil-container" {
		id = r.Container.Id // panics on an empty request
	} else {
		id = r.GetContainer().GetId()
	}
	if id == "" {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "container.id", "missing")
	}
	cpu, ok := p.free()
	if !ok {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "", "every CPU is taken")
	}
	p.taken[id] = cpu
	adj := &abi.ContainerAdjustment{CpusetCpus: fmt.Sprint(cpu)}
	if p.fault == "huge-env" {
		adj.Env = []*abi.KeyValue{{Key: "HUGE", Value: strings.Repeat("x", 300<<10)}}
	}
	return &abi.CreateContainerResponse{Adjustment: adj}, nil
}

// free is the lowest CPU no container holds (the highest for the native build
// under native-differs).
func (p *Policy) free() (uint32, bool) {
	cpus := p.cpus
	if p.fault == "native-differs" && runtime.GOOS != "wasip1" {
		cpus = slices.Clone(cpus)
		slices.Reverse(cpus)
	}
	for _, c := range cpus {
		held := false
		for _, t := range p.taken {
			held = held || t == c
		}
		if !held {
			return c, true
		}
	}
	return 0, false
}

// RemoveContainer implements policy.ContainerRemover.
func (p *Policy) RemoveContainer(r *abi.RemoveContainerRequest) (*abi.RemoveContainerResponse, error) {
	delete(p.taken, r.GetContainer().GetId())
	return &abi.RemoveContainerResponse{}, nil
}

// DumpState implements policy.StateDumper.
func (p *Policy) DumpState(*abi.DumpStateRequest) (*abi.DumpStateResponse, error) {
	state := map[string]any{"taken": p.taken}
	if p.fault == "dump-calls" {
		state["calls"] = calls
	}
	out, err := json.Marshal(state)
	if err != nil {
		return nil, fmt.Errorf("dump: %w", err)
	}
	return &abi.DumpStateResponse{Json: out}, nil
}
