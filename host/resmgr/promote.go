package resmgr

import (
	"context"
	"runtime/debug"
	"time"
)

// codeUpgrader is a Policy that may start on an interpreter while its code
// compiles in the background and move to the compiled code later
// (*wasm.Policy loaded with wasm.WithBackgroundCompile).
type codeUpgrader interface {
	// Compiling is nil when the policy runs compiled code; else it yields
	// each failed compile and is closed once the compiled code is ready.
	Compiling() <-chan error
	// Promote moves the policy to its compiled code through the restore,
	// reporting whether it moved.
	Promote(ctx context.Context) (bool, error)
}

// watchCode follows p, the policy just installed (New, a swap): while it
// runs on the interpreter, nriwasm_policy_interpreted is 1 and each failed
// background compile is counted; once its compiled code is ready, promote
// moves it there.
func (m *Manager) watchCode(p Policy) {
	u, ok := p.(codeUpgrader)
	var compiling <-chan error
	if ok {
		compiling = u.Compiling()
	}
	m.metrics.Interpreted(compiling != nil)
	if compiling == nil {
		return
	}
	go func() {
		for range compiling {
			m.metrics.CompileFailed()
		}
		if m.promote(p, u) {
			// The interpreter's form of the module is garbage now (~155 MiB
			// of Go heap for topology-aware, host/wasm/RATIONALE.md) that the
			// Go runtime would return to the OS only minutes later.
			debug.FreeOSMemory()
		}
	}()
}

// promote moves p to its compiled code under the manager's lock, as a
// rebuild: the policy's restore brings the compiled instance up to date
// from the journal. Nothing happens when p is no longer the running policy
// (swapped out) or is closed. It reports whether p moved.
func (m *Manager) promote(p Policy, u codeUpgrader) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.policy != p {
		return false
	}
	start := time.Now()
	moved, err := u.Promote(context.Background())
	if err != nil {
		m.log.Error(err, "the policy keeps running on the interpreter")
		return false
	}
	if moved {
		m.metrics.Interpreted(false)
		m.log.Info("policy moved from the interpreter to its compiled code", "took", time.Since(start).Round(time.Millisecond).String())
	}
	return moved
}
