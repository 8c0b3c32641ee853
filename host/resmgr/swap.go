package resmgr

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/state"
)

// Identity names the policy module a manager runs.
type Identity struct {
	// Reference is policy.name as configured: a built-in name, a path or an
	// OCI reference.
	Reference string `json:"reference"`
	// Name is the module's own name (its sealed name, else the file's).
	Name string `json:"name"`
	// Digest is "sha256:<hex>" of the module's bytes.
	Digest string `json:"digest"`
	// Pinned is, for an OCI reference, the reference pinned to the manifest
	// digest loaded: a restart with the same policy.name loads it again (the
	// agent's Recheck then swaps to what the tag names now).
	Pinned string `json:"pinned,omitempty"`
}

// String is "name (digest) from reference".
func (id Identity) String() string {
	return fmt.Sprintf("%s (%s) from %s", id.Name, id.Digest, id.Reference)
}

// ModuleDigest is the digest an Identity records for a module's bytes.
func ModuleDigest(module []byte) string {
	sum := sha256.Sum256(module)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Candidate is a policy module a swap may switch to.
type Candidate struct {
	// Identity names the module.
	Identity Identity
	// DriverName is the DRA driver name the agent gives this policy, as
	// WithDriverName.
	DriverName string
	// Load loads it, as New's load.
	Load LoadFunc
}

// ResolveFunc resolves a configuration's policy section (policy.name and how
// the module runs) to a candidate: the agent's reads the built-in module, the
// file, or the OCI reference through the registry and its cache.
type ResolveFunc func(ctx context.Context, cfg *config.Config) (Candidate, error)

// Move is a live container a new policy's restore would move.
type Move struct {
	ID, Pod, Container string // the container's id, its pod's namespace/name, its name
	FromCPUs, ToCPUs   string // its cpuset CPUs now and after the swap
	FromMems, ToMems   string // its memory nodes now and after the swap
}

func (mv Move) String() string {
	var parts []string
	if mv.FromCPUs != mv.ToCPUs {
		parts = append(parts, fmt.Sprintf("cpus %q → %q", mv.FromCPUs, mv.ToCPUs))
	}
	if mv.FromMems != mv.ToMems {
		parts = append(parts, fmt.Sprintf("mems %q → %q", mv.FromMems, mv.ToMems))
	}
	return fmt.Sprintf("%s/%s (%s): %s", mv.Pod, mv.Container, mv.ID, strings.Join(parts, ", "))
}

// maxMovesListed bounds the moves a refusal's message lists.
const maxMovesListed = 10

// SwapRefusedError is a swap refused because the new policy's restore would
// move more live containers than policy.swap.maxMoves; the running policy
// stays.
type SwapRefusedError struct {
	From, To Identity
	MaxMoves int
	// Moves are the containers that would move, by id.
	Moves []Move
}

func (e *SwapRefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "swap from policy %s to %s refused: its restore would move %d live container(s), over policy.swap.maxMoves %d; the running policy stays: ",
		e.From.Name, e.To.Name, len(e.Moves), e.MaxMoves)
	for i, mv := range e.Moves {
		if i == maxMovesListed {
			fmt.Fprintf(&b, "; and %d more", len(e.Moves)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(mv.String())
	}
	return b.String()
}

// ErrRestartRequired is wrapped by a live change refused because it needs a
// restart: a policy configuration or a swapped-in policy that turns DRA on or
// off, or renames the DRA driver.
var ErrRestartRequired = errors.New("restart required")

// Identity returns the running policy's identity.
func (m *Manager) Identity() Identity {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.identity
}

// Recheck resolves the running configuration's policy again and swaps to it
// when it names another module (an OCI tag now naming another digest). It
// does nothing for a policy that is not an OCI reference, or without
// WithResolve.
func (m *Manager) Recheck(ctx context.Context) error {
	m.swapMu.Lock()
	defer m.swapMu.Unlock()
	return m.recheck(ctx)
}

// recheck is Recheck with swapMu held.
func (m *Manager) recheck(ctx context.Context) error {
	cfg := m.Config()
	if m.resolve == nil || !cfg.Policy.IsOCI() {
		return nil
	}
	cand, err := m.resolve(ctx, cfg)
	if err != nil {
		m.metrics.Swap(metrics.SwapFailed)
		err = fmt.Errorf("resolve policy %s again: %w", cfg.Policy.Name, err)
		m.log.Error(err, "the running policy stays")
		return err
	}
	if cand.Identity.Digest == m.Identity().Digest {
		return nil
	}
	m.log.Info("policy reference names another module; swapping", "reference", cfg.Policy.Name,
		"from", m.Identity().Digest, "to", cand.Identity.Digest)
	return m.swap(ctx, cfg, cand)
}

// swapTo resolves cfg's policy and swaps to it; ApplyConfig's path for a
// change a swap applies. reason says why, for the log.
func (m *Manager) swapTo(ctx context.Context, cfg *config.Config, reason string) error {
	if m.resolve == nil {
		m.metrics.ConfigReload(metrics.ReloadRestartRequired)
		err := fmt.Errorf("%s: this agent cannot swap policies live: restart it to apply the change", reason)
		m.log.Error(err, "configuration change refused; the running configuration stays until a restart")
		return err
	}
	m.log.Info("swapping the policy", "reason", reason, "policy", cfg.Policy.Name)
	cand, err := m.resolve(ctx, cfg)
	if err == nil {
		err = m.swap(ctx, cfg, cand)
	} else {
		m.metrics.Swap(metrics.SwapFailed)
		err = fmt.Errorf("swap to policy %s: %w", cfg.Policy.Name, err)
		m.log.Error(err, "the running policy stays")
	}
	switch {
	case err == nil:
		m.metrics.ConfigReload(metrics.ReloadApplied)
	case errors.Is(err, ErrRestartRequired):
		m.metrics.ConfigReload(metrics.ReloadRestartRequired)
	default:
		m.metrics.ConfigReload(metrics.ReloadRejected)
	}
	return err
}

// incoming is a policy being swapped in: how its instances are initialized
// before the switch (Init with cfg's policy configuration and the journal as
// it was at rs) and after it (as every instance, m.restore).
type incoming struct {
	m        *Manager
	cfg      *config.Config
	driver   string
	rs       *abi.RestoreState
	wantsDRA bool
	switched atomic.Bool
}

// restore is the incoming policy's wasm.RestoreFunc. Before the switch its
// Init says it is a swap (InitRequest.swap): the policy refuses a journal it
// cannot honour in full, and the running policy stays.
func (in *incoming) restore(ctx context.Context, t abi.Transport) error {
	if in.switched.Load() {
		return in.m.restore(ctx, t)
	}
	resp, err := abi.NewClient(t).Init(ctx, &abi.InitRequest{
		Config: in.cfg.Policy.Data, NodeName: in.m.node, Topology: in.m.topo, Restore: in.rs, DriverName: in.driver, Swap: true,
	})
	if err != nil {
		return err
	}
	in.wantsDRA = resp.GetWantsDra()
	return nil
}

// check hands the incoming policy the journal's pods and containers through
// Synchronize, as the runtime does after a restart (each container with the
// cpusets it runs on), and returns its checked updates and the containers
// they would move.
func (in *incoming) check(ctx context.Context, p Policy) ([]*abi.ContainerUpdate, []Move, error) {
	containers := make([]*abi.Container, len(in.rs.GetContainers()))
	for i, c := range in.rs.GetContainers() {
		containers[i] = runtimeView(c)
	}
	resp, err := abi.NewClient(p, abi.KeepGroups()).Synchronize(ctx, &abi.SynchronizeRequest{Pods: in.rs.GetPods(), Containers: containers})
	if err != nil {
		return nil, nil, fmt.Errorf("synchronize: %w", err)
	}
	us := resp.GetUpdates()
	byID := make(map[string]*abi.Container, len(containers))
	for _, c := range in.rs.GetContainers() {
		byID[c.GetId()] = c
	}
	if err := in.m.limits.Updates("updates", us, func(id string) bool { return byID[id] != nil }); err != nil {
		return nil, nil, fmt.Errorf("synchronize: %w", err)
	}
	return us, moves(in.rs, us), nil
}

// runtimeView is c as the runtime reports it: running on the cpusets it was
// assigned, with its assignment (as state.Journal.Reconcile annotates it).
func runtimeView(c *abi.Container) *abi.Container {
	v := c.CloneVT()
	if a := v.GetAssignment(); a.GetCpusetCpus() != "" || a.GetCpusetMems() != "" {
		if v.Resources == nil {
			v.Resources = &abi.Resources{}
		}
		if a.GetCpusetCpus() != "" {
			v.Resources.CpusetCpus = a.GetCpusetCpus()
		}
		if a.GetCpusetMems() != "" {
			v.Resources.CpusetMems = a.GetCpusetMems()
		}
	}
	return v
}

// moves are the containers of rs whose cpuset CPUs or memory nodes us
// changes, applied in order as the journal applies them; sorted by id.
func moves(rs *abi.RestoreState, us []*abi.ContainerUpdate) []Move {
	pods := make(map[string]*abi.PodSandbox, len(rs.GetPods()))
	for _, p := range rs.GetPods() {
		pods[p.GetId()] = p
	}
	var out []Move
	for _, c := range rs.GetContainers() { // sorted by id
		a := c.GetAssignment()
		cpus, mems := a.GetCpusetCpus(), a.GetCpusetMems()
		for id, u := range abi.EachContainer(us) {
			if id != c.GetId() {
				continue
			}
			if u.GetCpusetCpus() != "" {
				cpus = u.GetCpusetCpus()
			}
			if u.GetCpusetMems() != "" {
				mems = u.GetCpusetMems()
			}
		}
		if cpus == a.GetCpusetCpus() && mems == a.GetCpusetMems() {
			continue
		}
		pod := pods[c.GetPodSandboxId()]
		out = append(out, Move{
			ID: c.GetId(), Pod: pod.GetNamespace() + "/" + pod.GetName(), Container: c.GetName(),
			FromCPUs: a.GetCpusetCpus(), ToCPUs: cpus, FromMems: a.GetCpusetMems(), ToMems: mems,
		})
	}
	return out
}

// swap switches to cand with configuration cfg if its restore keeps the live
// containers where they are (at most cfg's policy.swap.maxMoves move); swapMu
// is held. The order (docs/rollout.md, RATIONALE.md):
//
//  1. Under the lock, a copy of the journal and its generation.
//  2. Outside it, while the running policy serves: load the new module, Init
//     its instance restoring that copy, and hand it the live containers
//     through Synchronize; a failure, or too many moves, ends here.
//  3. Under the lock: if the journal changed since the copy (events were
//     served meanwhile), the new instance is discarded and rebuilt from the
//     journal as it is now and synchronized again — it then knows exactly
//     what the running policy answered, and no event is lost or seen twice.
//     The moves are counted again; within the bound, the new policy replaces
//     the old, its updates (the moves) are applied and sent to the runtime,
//     and its identity is recorded next to the checkpoint.
//  4. Outside the lock, the old policy is closed.
func (m *Manager) swap(ctx context.Context, cfg *config.Config, cand Candidate) error {
	start := time.Now()
	m.mu.Lock()
	from := m.identity
	in := &incoming{m: m, cfg: cfg, driver: cand.DriverName, rs: m.journal.RestoreState()}
	gen := m.journal.Generation()
	m.mu.Unlock()
	to := cand.Identity
	log := m.log.WithValues("from", from.String(), "to", to.String())
	fail := func(result string, p Policy, err error) error {
		if p != nil {
			_ = p.Close(ctx)
		}
		m.metrics.Swap(result)
		log.Error(err, "policy swap refused; the running policy stays", "result", result)
		return err
	}

	p, err := cand.Load(ctx, in.restore)
	if err != nil {
		return fail(metrics.SwapFailed, nil, fmt.Errorf("swap to policy %s: load and restore from the journal: %w", to.Name, err))
	}
	us, mvs, err := in.check(ctx, p)
	if err != nil {
		return fail(metrics.SwapFailed, p, fmt.Errorf("swap to policy %s: %w", to.Name, err))
	}
	maxMoves := cfg.Policy.Swap.MaxMoves
	if len(mvs) > maxMoves {
		return fail(metrics.SwapRefused, p, &SwapRefusedError{From: from, To: to, MaxMoves: maxMoves, Moves: mvs})
	}

	m.mu.Lock()
	if g := m.journal.Generation(); g != gen {
		in.rs = m.journal.RestoreState()
		p.Discard(ctx)
		us, mvs, err = in.check(ctx, p) // rebuilds the instance from in.rs first
		if err != nil {
			m.mu.Unlock()
			return fail(metrics.SwapFailed, p, fmt.Errorf("swap to policy %s: with the journal's changes since it loaded: %w", to.Name, err))
		}
		if len(mvs) > maxMoves {
			m.mu.Unlock()
			return fail(metrics.SwapRefused, p, &SwapRefusedError{From: from, To: to, MaxMoves: maxMoves, Moves: mvs})
		}
		log.V(1).Info("journal changed while the new policy loaded; restored it again under the lock", "changes", g-gen)
	}
	if err := m.draChange(cfg, cand.DriverName, in.wantsDRA); err != nil {
		m.mu.Unlock()
		return fail(metrics.SwapRestartRequired, p, fmt.Errorf("swap to policy %s: %w", to.Name, err))
	}
	old := m.policy
	in.switched.Store(true)
	m.policy, m.client = p, m.newClient(p) // observers (observe.go) see the new policy's answers
	m.cfg, m.identity, m.driver, m.wantsDRA = cfg, to, cand.DriverName, in.wantsDRA
	m.rebuilds, m.dropped = p.Rebuilds(), droppedLogs(p)
	if m.fallback != fromJournal {
		m.fallback = fromJournal
		m.degraded.Store(nil)
		m.metrics.Degraded(false)
	}
	updates, _ := m.acceptUpdates(abi.Method_METHOD_SYNCHRONIZE, us)
	if err := m.discoverPools(ctx); err != nil {
		log.Error(err, "the new policy's pools are not reported")
	}
	m.changed()
	if err := m.saveIdentity(); err != nil {
		log.Error(err, "the new policy's identity is not recorded; a restart loads policy.name afresh")
	}
	if len(updates) > 0 && m.updateSink != nil {
		m.updateSink(updates)
	}
	m.watchCode(p)
	m.mu.Unlock()

	if err := old.Close(ctx); err != nil {
		log.Error(err, "closing the policy swapped out")
	}
	m.metrics.Swap(metrics.SwapAccepted)
	log.Info("policy swapped", "moved", len(mvs), "maxMoves", maxMoves, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// draChange refuses a swap that changes whether or under which name DRA is
// served: the DRA driver is started with the agent. Called with the lock.
func (m *Manager) draChange(cfg *config.Config, driver string, wantsDRA bool) error {
	if cfg.DRA.Enabled != nil && !*cfg.DRA.Enabled {
		return nil
	}
	serving := cfg.DRA.Enabled != nil || m.wantsDRA
	if cfg.DRA.Enabled == nil && wantsDRA != m.wantsDRA {
		return fmt.Errorf("%w: the new policy turns DRA %s", ErrRestartRequired, onOff(wantsDRA))
	}
	if serving && driver != m.driver {
		return fmt.Errorf("%w: the DRA driver would be renamed from %s to %s", ErrRestartRequired, m.driver, driver)
	}
	return nil
}

// recordIdentity compares the policy record next to the checkpoint with the
// policy New loaded (a different one means the journal's assignments came
// from another policy: the configuration changed while the agent was down),
// then records the loaded one. Called from New.
func (m *Manager) recordIdentity() {
	if m.identity == (Identity{}) {
		return
	}
	data, err := m.saver.ck.LoadPolicy()
	var prev Identity
	if err == nil && data != nil {
		err = json.Unmarshal(data, &prev)
	}
	switch {
	case err != nil:
		m.log.Error(err, "the policy record next to the checkpoint is unreadable; it is written again")
	case data != nil && prev == m.identity:
		// A restart of the same policy: the record stands, and its synced
		// write (a few milliseconds of the start to ready) is not needed.
		return
	case data != nil:
		m.log.Info("the checkpoint was written under another policy; the loaded one restored it",
			"recorded", prev.String(), "loaded", m.identity.String())
	}
	if err := m.saveIdentity(); err != nil {
		m.log.Error(err, "the policy's identity is not recorded")
	}
}

// saveIdentity writes the running policy's identity next to the checkpoint.
// Called with the lock held (or from New). Lock order: the manager's, then
// the saver's.
func (m *Manager) saveIdentity() error {
	data, err := json.Marshal(m.identity)
	if err != nil {
		return fmt.Errorf("encode policy identity: %w", err)
	}
	m.saver.mu.Lock()
	defer m.saver.mu.Unlock()
	return m.saver.ck.SavePolicy(data)
}

// RecordedIdentity reads the identity of the policy recorded in stateDir (the
// last one a manager loaded or swapped to there); ok is false when there is
// none or it is unreadable.
func RecordedIdentity(stateDir string) (id Identity, ok bool) {
	data, err := state.NewCheckpoint(stateDir).LoadPolicy()
	if err != nil || data == nil || json.Unmarshal(data, &id) != nil {
		return Identity{}, false
	}
	return id, true
}
