package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/cpumap"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// Runner drives one policy through a scenario, keeping the node's state as the
// agent will: it applies every answer that passes the agent's shape checks and
// sends each later request with the containers' current cpusets and assignments.
type Runner struct {
	topo   *abi.Topology
	config []byte
	limits *limits
	node   *node
	report *Report
	client *abi.Client
	step   *StepReport // the step in progress, nil outside Run
	inits  int
	labels cpumap.Labels // the maps' labels, the same for a container all along
	// driver is the DRA driver name Init gives the policy, "<policy>.nri.io"
	// as the agent names it by default; claims' CDI devices are its.
	driver    string
	restarter Restarter
	// restore, when set, is what the next Init restores instead of the
	// node's journal: the checkpoint a restart step read back.
	restore *abi.RestoreState
}

// Restarter starts the policy afresh for a restart step, as the agent does
// when its process starts again: a new instance, prepared through the
// Runner's Init (which then sends what the checkpoint holds). It returns the
// transport later steps use.
type Restarter func(ctx context.Context) (abi.Transport, error)

// SetRestarter sets how restart steps start the policy afresh; without one,
// a restart step is reported as an error.
func (r *Runner) SetRestarter(f Restarter) { r.restarter = f }

// NewRunner returns a Runner for a node with topology topo and a policy
// configured with config.
func NewRunner(topo *abi.Topology, config []byte) (*Runner, error) {
	var cpus, nodes []uint32
	for _, c := range topo.GetCpus() {
		cpus = append(cpus, c.Id)
	}
	for _, n := range topo.GetNumaNodes() {
		nodes = append(nodes, n.Id)
	}
	limits, err := newLimits(topo)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return &Runner{
		topo: topo, config: config, limits: limits, node: newNode(),
		report: &Report{Node: NodeReport{Name: NodeName, CPUs: topology.FormatList(cpus), NUMANodes: topology.FormatList(nodes)}},
	}, nil
}

// Machine names the machine the topology is of, for the report (the
// reference machine simulate runs on without a sysfs tree).
func (r *Runner) Machine(name string) { r.report.Node.Machine = name }

// Warn records a message the policy logged at warning level: in the step in
// progress, or before any, in the policy's report. The host's log hook calls
// it (simulate does for both the Wasm and the native policy).
func (r *Runner) Warn(msg string) {
	if r.step != nil {
		r.step.Warnings = append(r.step.Warnings, msg)
		return
	}
	r.report.Policy.Warnings = append(r.report.Policy.Warnings, msg)
}

// Init prepares a policy instance: Info and Init on the first, Init with the
// node's journal on every instance rebuilt after a failure. It is a Wasm
// policy's wasm.RestoreFunc; call it once on any other transport before Run.
func (r *Runner) Init(ctx context.Context, t abi.Transport) error {
	c := abi.NewClient(t)
	if r.inits == 0 {
		info, err := c.Info(ctx, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor})
		if err != nil {
			return err // the client's error names the call
		}
		md := info.GetMetadata()
		r.report.Policy = PolicyReport{Name: md.GetName(), Version: md.GetVersion(), SDK: md.GetSdk()}
		r.driver = (&config.DRA{Domain: config.DefaultDRADomain}).DriverName(md.GetName())
	}
	restore := r.restore
	if restore == nil {
		restore = r.node.journal()
	}
	resp, err := c.Init(ctx, &abi.InitRequest{Config: r.config, NodeName: NodeName, Topology: r.topo, Restore: restore, DriverName: r.driver})
	r.inits++
	if r.step != nil {
		r.step.Calls = append(r.step.Calls, fmt.Sprintf("Init (restoring %d pods, %d containers, %d claims)",
			len(restore.Pods), len(restore.Containers), len(restore.Claims)))
	}
	if err != nil {
		return err // the client's error names the call (Init)
	}
	if r.inits == 1 {
		r.report.Policy.WantsDRA = resp.GetWantsDra()
	}
	return nil
}

// Run plays the scenario through t, which Init must have prepared, and returns
// the report. Errors of single calls are part of the report; Run fails only
// when ctx ends.
func (r *Runner) Run(ctx context.Context, t abi.Transport, sc *Scenario) (*Report, error) {
	if r.inits == 0 {
		return nil, errors.New("simulate: the policy was not initialized (call Runner.Init first)")
	}
	r.client = abi.NewClient(t, abi.KeepGroups())
	r.report.Description = sc.Description
	for _, s := range sc.Steps {
		r.step = &StepReport{Step: s.Index, Kind: s.Kind, Calls: []string{}}
		r.report.Steps = append(r.report.Steps, r.step)
		switch s.Kind {
		case KindPod:
			r.runPod(ctx, s.Pod)
		case KindContainer:
			r.runContainer(ctx, s.Target, s.Container, s.Claims)
		case KindRestart:
			r.runRestart(ctx, s.Exited)
		case KindRemove:
			r.runRemove(ctx, s.Target)
		case KindUpdate:
			r.runUpdate(ctx, s.Target, s.Resources)
		case KindClaim:
			r.runClaim(ctx, s.Claim)
		case KindRelease:
			r.runRelease(ctx, s.ClaimKey)
		case KindReconfigure:
			r.runReconfigure(ctx, s.Config)
		case KindDevices:
			r.runDevices(ctx)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("simulate: steps[%d] (%s): %w", s.Index, s.Kind, err)
		}
		r.report.Maps = append(r.report.Maps, r.cpuMap(fmt.Sprintf("after step %d: %s %s", s.Index, s.Kind, r.step.Target)))
	}
	r.step = nil
	r.report.Final = r.final()
	return r.report, nil
}

// cpuMap draws the node's CPUs and the containers holding them.
func (r *Runner) cpuMap(title string) *cpumap.Map {
	m := cpumap.Build(r.topo, cpumap.Containers(r.node.journal()), &r.labels)
	m.Title, m.Machine = strings.TrimSpace(title), r.report.Node.Machine
	return m
}

// called records a call and, when it failed, its error; it tells whether the
// answer may be used.
func (r *Runner) called(call string, err error) bool {
	r.step.Calls = append(r.step.Calls, call)
	if err != nil {
		r.fail(call, err)
	}
	return err == nil
}

// fail records an error of call.
func (r *Runner) fail(call string, err error) {
	e := ErrorReport{Call: call, Kind: "runtime"}
	if pe, ok := errors.AsType[*abi.PolicyError](err); ok {
		e.Kind, e.Code, e.Field, e.Message = "policy", strings.TrimPrefix(pe.Code.String(), "ERROR_CODE_"), pe.Field, pe.Message
	} else if se, ok := errors.AsType[*shapeError](err); ok {
		e.Kind, e.Field, e.Message = "invalid", se.Field, se.Message
	} else if se, ok := errors.AsType[*skipped](err); ok {
		e.Kind, e.Message = "skipped", se.Error()
	} else {
		e.Message, _, _ = strings.Cut(err.Error(), "\n")
		if ce, ok := errors.AsType[*wasm.CallError](err); ok {
			e.Output = strings.TrimSpace(ce.Output)
		}
	}
	r.step.Errors = append(r.step.Errors, e)
}

// skipped is a step whose target does not exist because an earlier call failed.
type skipped struct{ what string }

func (s *skipped) Error() string {
	return s.what + " is not live (an earlier call failed); nothing was sent"
}

func (r *Runner) final() FinalReport {
	f := FinalReport{Containers: []FinalContainer{}}
	for _, p := range r.node.pods {
		for _, id := range p.containers {
			c := r.node.containers[id]
			f.Containers = append(f.Containers, FinalContainer{ID: id, CPUs: c.Resources.GetCpusetCpus(), Mems: c.Resources.GetCpusetMems()})
		}
	}
	for _, c := range r.node.claims {
		f.Claims = append(f.Claims, c.Claim.Namespace+"/"+c.Claim.Name)
	}
	return f
}
