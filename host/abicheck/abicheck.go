// Package abicheck holds the checks every policy module must pass before it is
// pushed, whoever wrote it and in whatever language: the ABI handshake, a
// description (Info) that the host and the registry accept, empty calls that
// answer instead of trapping, deterministic answers, the same answers from an
// instance rebuilt from the host's journal as from the one it replaces, and
// answers within the host's limits; plus, where the author gives one, an
// answer-by-answer comparison of a scenario's report with a golden file or
// with a native build of the same policy.
//
// `nriwasm policy test` runs them on a module file; a Go test runs them with
//
//	results, err := abicheck.Run(ctx, "my-policy", module, topo, abicheck.WithConfig(cfg))
//	if err != nil { t.Fatal(err) }
//	if err := results.Err(); err != nil { t.Fatal(err) }
//
// The module is compiled once per Run and each check starts on a fresh
// instance of it, so one failure does not hide another.
package abicheck

import (
	"context"
	"errors"
	"fmt"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/internal/scenario"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// The checks' names, in the order Run runs them.
const (
	// Handshake: the module loads (it is Wasm, exports the calling
	// convention, starts within the start-up deadline) and reports ABI v1.
	Handshake = "Handshake"
	// Describe: Info answers metadata the host accepts (a DNS-label name, a
	// semver version, this ABI, capabilities that are calls of this ABI,
	// each once) and the module is sealed with exactly that metadata.
	Describe = "Describe"
	// EmptyCalls: Init with the configuration succeeds, then every call with
	// an empty request, and a call the ABI does not know, answers (a policy
	// error is an answer) instead of trapping or answering malformed bytes.
	EmptyCalls = "EmptyCalls"
	// Determinism: the scenario gives the same report and, where DumpState is
	// implemented, the same dump on a fresh instance and played again on that
	// instance after a new Init: an answer depends on the calls since Init,
	// nothing else (wazero's clock and random source are already fixed, so
	// the history of the instance is what could leak in: state kept across
	// Init, the order of a Go map's iteration).
	Determinism = "Determinism"
	// RestoreAfterRebuild: an instance dropped before every call and rebuilt
	// from the host's journal (Init with RestoreState) gives the same answers
	// as the instance that kept its state.
	RestoreAfterRebuild = "RestoreAfterRebuild"
	// AnswersWithinLimits: no call of the scenario fails in the runtime
	// (trap, deadline, memory limit, an answer over the size limits or
	// malformed) and every answer passes the agent's shape checks.
	AnswersWithinLimits = "AnswersWithinLimits"
	// Golden: the scenario's report equals WithGolden's.
	Golden = "Golden"
	// Native: the scenario's report equals a native build's.
	Native = "Native"
)

// Result is one check's outcome.
type Result struct {
	// Check is the check's name (Handshake, Describe, …).
	Check string
	// Err is why it failed; nil when it passed.
	Err error
}

// Results are a run's outcomes, in the order the checks ran.
type Results []Result

// Err joins the failed checks' errors, each prefixed by the check's name;
// nil when every check passed.
func (rs Results) Err() error {
	var errs []error
	for _, r := range rs {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Check, r.Err))
		}
	}
	return errors.Join(errs...)
}

// Failed names the checks that failed.
func (rs Results) Failed() []string {
	var names []string
	for _, r := range rs {
		if r.Err != nil {
			names = append(names, r.Check)
		}
	}
	return names
}

// Run runs every check on module, called name in logs and errors, on a node
// with topology topo. It returns an error only for bad inputs (no topology,
// a bad option such as a scenario that does not parse) or when ctx ends; a
// module's failures are in the Results. When Handshake fails nothing else
// can run, and Results holds it alone.
func Run(ctx context.Context, name string, module []byte, topo *abi.Topology, opts ...Option) (Results, error) {
	c, err := newChecker(name, module, topo, opts)
	if err != nil {
		return nil, err
	}
	if err := c.load(ctx); err != nil {
		return Results{{Handshake, err}}, ctx.Err()
	}
	defer c.p.Close(ctx)
	results := Results{{Handshake, c.handshake()}}
	results = append(results, Result{Describe, c.describe(ctx)})
	results = append(results, Result{EmptyCalls, c.emptyCalls(ctx)})
	first, second, firstErr := c.playTwice(ctx)
	if firstErr != nil {
		for _, check := range []string{Determinism, RestoreAfterRebuild, AnswersWithinLimits, Golden, Native} {
			if check == Golden && c.o.golden == nil || check == Native && c.o.native == nil {
				continue
			}
			results = append(results, Result{check, fmt.Errorf("the scenario did not run: %w", firstErr)})
		}
		return results, ctx.Err()
	}
	results = append(results, Result{Determinism, sameRun(first, second, "the same instance after a new Init")})
	results = append(results, Result{RestoreAfterRebuild, c.restore(ctx, first)})
	results = append(results, Result{AnswersWithinLimits, withinLimits(first.report)})
	if c.o.golden != nil {
		results = append(results, Result{Golden, diff(string(c.o.golden), string(first.yaml), "the golden file", "this module")})
	}
	if c.o.native != nil {
		results = append(results, Result{Native, c.native(ctx, first)})
	}
	return results, ctx.Err()
}

// Report plays the scenario once through module and returns its report as
// YAML, the golden file a later Run compares with (WithGolden). It is what
// `nriwasm simulate` prints for the same topology, configuration and
// scenario. Of the options, WithGolden and WithNative play no part.
func Report(ctx context.Context, name string, module []byte, topo *abi.Topology, opts ...Option) ([]byte, error) {
	c, err := newChecker(name, module, topo, opts)
	if err != nil {
		return nil, err
	}
	if err := c.load(ctx); err != nil {
		return nil, err
	}
	defer c.p.Close(ctx)
	pl, err := c.play(ctx, false)
	if err != nil {
		return nil, err
	}
	return pl.yaml, nil
}

func newChecker(name string, module []byte, topo *abi.Topology, opts []Option) (*checker, error) {
	if topo == nil {
		return nil, errors.New("abicheck: topology: nil")
	}
	var o options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	sc := o.sc
	if sc == nil {
		var err error
		if sc, err = scenario.Parse(scenario.Example); err != nil {
			return nil, fmt.Errorf("abicheck: bundled example scenario: %w", err)
		}
	}
	return &checker{name: name, module: module, topo: topo, o: o, sc: sc}, nil
}

type checker struct {
	name   string
	module []byte
	topo   *abi.Topology
	o      options
	sc     *scenario.Scenario

	// p is the module, loaded once; each check starts on a fresh instance
	// (fresh), and prepare, when set, readies every instance built after a
	// failure as the agent's journal would.
	p       *wasm.Policy
	prepare wasm.RestoreFunc
}

// load loads the module with the caller's options.
func (c *checker) load(ctx context.Context) error {
	opts := append(append([]wasm.Option{}, c.o.wasm...), wasm.WithRestore(func(ctx context.Context, t abi.Transport) error {
		if c.prepare == nil {
			return nil
		}
		return c.prepare(ctx, t)
	}))
	p, err := wasm.Load(ctx, c.name, c.module, opts...)
	c.p = p
	return err
}

// fresh drops the current instance: the next call meets a new one, which
// nothing prepares; the caller initializes it and then sets prepare.
func (c *checker) fresh(ctx context.Context) {
	c.prepare = nil
	c.p.Discard(ctx)
}

func (c *checker) handshake() error {
	p := c.p
	if major := p.Version() >> 16; major != abi.ABIMajor {
		return fmt.Errorf("the module reports ABI v%d.%d, this host speaks v%d", major, p.Version()&0xffff, abi.ABIMajor)
	}
	return nil
}

// describe checks Info's metadata and the seal.
func (c *checker) describe(ctx context.Context) error {
	p := c.p
	info, err := abi.NewClient(p).Info(ctx, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor})
	if err != nil {
		return fmt.Errorf("the Info call: %w", err)
	}
	md := info.GetMetadata()
	if md == nil {
		return errors.New("the Info answer carries no metadata")
	}
	if err := wasm.ValidateMetadata(md); err != nil {
		return fmt.Errorf("the Info metadata: %w", err)
	}
	if v := p.Version(); md.AbiMinor != v&0xffff {
		return fmt.Errorf("the Info metadata: abi_minor %d, the handshake reported v%d.%d", md.AbiMinor, v>>16, v&0xffff)
	}
	seen := map[abi.Method]bool{}
	for _, m := range md.Capabilities {
		if _, known := abi.Method_name[int32(m)]; !known || m == abi.Method_METHOD_UNSPECIFIED || m == abi.Method_METHOD_INFO {
			return fmt.Errorf("the Info metadata: capabilities: %s is not a call a policy implements in ABI v%d.%d", m.Short(), abi.ABIMajor, abi.ABIMinor)
		}
		if seen[m] {
			return fmt.Errorf("the Info metadata: capabilities: %s is listed twice", m.Short())
		}
		seen[m] = true
	}
	if p.Metadata() == nil {
		return fmt.Errorf("the module is not sealed: run nriwasm policy seal on it (push and the agent read its %s section)", abi.MetadataSection)
	}
	return nil
}

// emptyCall is one call with an empty request.
type emptyCall struct {
	method abi.Method
	req    abi.Message
}

// emptyCalls lists every call but Info and Init with an empty request, then
// a method number the ABI does not know.
var emptyCalls = []emptyCall{
	{abi.Method_METHOD_DEVICES, &abi.DevicesRequest{}},
	{abi.Method_METHOD_ALLOCATE, &abi.AllocateRequest{}},
	{abi.Method_METHOD_RELEASE, &abi.ReleaseRequest{}},
	{abi.Method_METHOD_SYNCHRONIZE, &abi.SynchronizeRequest{}},
	{abi.Method_METHOD_RUN_POD_SANDBOX, &abi.RunPodSandboxRequest{}},
	{abi.Method_METHOD_CREATE_CONTAINER, &abi.CreateContainerRequest{}},
	{abi.Method_METHOD_UPDATE_CONTAINER, &abi.UpdateContainerRequest{}},
	{abi.Method_METHOD_STOP_CONTAINER, &abi.StopContainerRequest{}},
	{abi.Method_METHOD_REMOVE_CONTAINER, &abi.RemoveContainerRequest{}},
	{abi.Method_METHOD_STOP_POD_SANDBOX, &abi.StopPodSandboxRequest{}},
	{abi.Method_METHOD_REMOVE_POD_SANDBOX, &abi.RemovePodSandboxRequest{}},
	{abi.Method_METHOD_DUMP_STATE, &abi.DumpStateRequest{}},
	{abi.Method_METHOD_POOLS, &abi.PoolsRequest{}},
	{abi.Method_METHOD_RECONFIGURE, &abi.ReconfigureRequest{}},
	{abi.Method(99), &abi.DumpStateRequest{}},
}

// emptyCalls initializes a fresh instance and sends every emptyCall; each must
// answer the call's response or an Error, the unknown method UNIMPLEMENTED.
func (c *checker) emptyCalls(ctx context.Context) error {
	c.fresh(ctx)
	p := c.p
	client := abi.NewClient(p)
	if _, err := client.Info(ctx, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor}); err != nil {
		return fmt.Errorf("the Info call: %w", err)
	}
	init := func() error {
		_, err := client.Init(ctx, &abi.InitRequest{Config: c.o.config, NodeName: scenario.NodeName, Topology: c.topo})
		return err
	}
	if err := init(); err != nil {
		return fmt.Errorf("the Init with the configuration: %w", err)
	}
	var errs []error
	for _, ec := range emptyCalls {
		resp, err := p.Call(ctx, ec.method, ec.req)
		if err == nil {
			err = answers(ec.method, resp)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("an empty %s request: %w", ec.method.Short(), err))
			// A runtime failure drops the instance: start the next call on an
			// initialized one, so each call is judged on its own.
			if err := init(); err != nil {
				return errors.Join(append(errs, fmt.Errorf("the Init after the failure: %w", err))...)
			}
		}
	}
	return errors.Join(errs...)
}

// answers checks that resp answers method: its own response or an Error, and
// UNIMPLEMENTED for a method the ABI does not know.
func answers(method abi.Method, resp *abi.Response) error {
	if pe := resp.GetError(); pe != nil {
		if _, known := abi.Method_name[int32(method)]; !known && pe.Code != abi.ErrorCode_ERROR_CODE_UNIMPLEMENTED {
			return fmt.Errorf("answered %s, want UNIMPLEMENTED for a call the ABI does not know", pe.Code)
		}
		return nil
	}
	if _, known := abi.Method_name[int32(method)]; !known {
		return fmt.Errorf("answered %T, want an UNIMPLEMENTED error for a call the ABI does not know", resp.GetResult())
	}
	// The Response's fields are numbered as the methods they answer.
	if f := resp.ProtoReflect().WhichOneof(resultOneof); f == nil || int32(f.Number()) != int32(method) {
		return fmt.Errorf("%w: %T", abi.ErrWrongResponse, resp.GetResult())
	}
	return nil
}

var resultOneof = (&abi.Response{}).ProtoReflect().Descriptor().Oneofs().ByName("result")

// played is one run of the scenario.
type played struct {
	report *scenario.Report
	yaml   []byte
	dump   string // DumpState's JSON at the end, "" when not implemented
}

// playTwice runs the scenario on a fresh instance, then again on the same
// instance after a new Init.
func (c *checker) playTwice(ctx context.Context) (*played, *played, error) {
	first, err := c.play(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	runner, err := scenario.NewRunner(c.topo, c.o.config)
	if err != nil {
		return nil, nil, err
	}
	c.prepare = runner.Init
	if err := runner.Init(ctx, c.p); err != nil {
		return nil, nil, fmt.Errorf("the Init after the first run: %w", err)
	}
	second, err := run(ctx, runner, c.p, c.sc)
	return first, second, err
}

// play runs the scenario on a fresh instance; with rebuild, the instance is
// dropped before every call, so each call meets one rebuilt from the journal.
func (c *checker) play(ctx context.Context, rebuild bool) (*played, error) {
	runner, err := scenario.NewRunner(c.topo, c.o.config)
	if err != nil {
		return nil, err
	}
	c.fresh(ctx)
	if err := runner.Init(ctx, c.p); err != nil {
		return nil, err
	}
	c.prepare = runner.Init
	var t abi.Transport = c.p
	if rebuild {
		t = rebuilding{c.p}
	}
	return run(ctx, runner, t, c.sc)
}

func run(ctx context.Context, runner *scenario.Runner, t abi.Transport, sc *scenario.Scenario) (*played, error) {
	report, err := runner.Run(ctx, t, sc)
	if err != nil {
		return nil, err
	}
	// As nriwasm simulate prints it (CPU maps as comments), so a golden file
	// written by simulate compares line by line.
	out, err := report.YAMLWithMaps(false)
	if err != nil {
		return nil, err
	}
	pl := &played{report: report, yaml: out}
	dump, err := abi.NewClient(t).DumpState(ctx, &abi.DumpStateRequest{})
	if err == nil {
		pl.dump = string(dump.GetJson())
	}
	return pl, nil
}

// rebuilding drops the policy's instance before every call.
type rebuilding struct{ p *wasm.Policy }

func (r rebuilding) Call(ctx context.Context, method abi.Method, req abi.Message) (*abi.Response, error) {
	r.p.Discard(ctx)
	return r.p.Call(ctx, method, req)
}

// restore plays the scenario with a rebuild before every call and compares
// its answers with first's (the report without the rebuilds' own Init lines).
func (c *checker) restore(ctx context.Context, first *played) error {
	rebuilt, err := c.play(ctx, true)
	if err != nil {
		return err
	}
	want, err := withoutRestores(first.report)
	if err != nil {
		return err
	}
	got, err := withoutRestores(rebuilt.report)
	if err != nil {
		return err
	}
	return diff(want, got, "the instance that kept its state", "instances rebuilt from the journal before every call")
}

// withoutRestores renders report without the "Init (restoring …)" calls a
// rebuild adds.
func withoutRestores(report *scenario.Report) (string, error) {
	for _, s := range report.Steps {
		calls := s.Calls[:0:0]
		for _, call := range s.Calls {
			if !strings.HasPrefix(call, "Init (restoring") {
				calls = append(calls, call)
			}
		}
		s.Calls = calls
	}
	out, err := report.YAML()
	return string(out), err
}

// withinLimits fails on every runtime or shape error of the scenario's calls.
func withinLimits(report *scenario.Report) error {
	var errs []error
	for _, s := range report.Steps {
		for _, e := range s.Errors {
			if e.Kind == "runtime" || e.Kind == "invalid" {
				msg := e.Message
				if e.Field != "" {
					msg = e.Field + ": " + msg
				}
				errs = append(errs, fmt.Errorf("steps[%d] (%s) %s: %s", s.Step, s.Kind, e.Call, msg))
			}
		}
	}
	return errors.Join(errs...)
}

// native plays the scenario through the native build and compares reports.
func (c *checker) native(ctx context.Context, first *played) error {
	t, err := c.o.native()
	if err != nil {
		return fmt.Errorf("native build: %w", err)
	}
	runner, err := scenario.NewRunner(c.topo, c.o.config)
	if err != nil {
		return err
	}
	if err := runner.Init(ctx, t); err != nil {
		return fmt.Errorf("native build: %w", err)
	}
	nat, err := run(ctx, runner, t, c.sc)
	if err != nil {
		return fmt.Errorf("native build: %w", err)
	}
	return sameRun(nat, first, "the module")
}

// sameRun compares two runs' reports and dumps.
func sameRun(want, got *played, gotName string) error {
	wantName := "a fresh instance"
	if gotName == "the module" {
		wantName = "the native build"
	}
	if err := diff(string(want.yaml), string(got.yaml), wantName, gotName); err != nil {
		return err
	}
	if want.dump != got.dump {
		return fmt.Errorf("DumpState differs after the same calls:\n%s:\n%s\n%s:\n%s", wantName, want.dump, gotName, got.dump)
	}
	return nil
}

// diff fails when want and got differ, naming the first differing line of the
// reports.
func diff(want, got, wantName, gotName string) error {
	if want == got {
		return nil
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	line := func(ls []string) string {
		if i < len(ls) {
			return fmt.Sprintf("%q", ls[i])
		}
		return "(end of report)"
	}
	return fmt.Errorf("the reports differ from line %d:\n  %s: %s\n  %s: %s", i+1, wantName, line(w), gotName, line(g))
}
