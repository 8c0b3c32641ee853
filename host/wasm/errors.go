package wasm

import (
	"errors"
	"fmt"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// The ways a call can fail in the runtime (as opposed to a policy's own Error
// response, which is a normal answer). Test with errors.Is. After any of them but
// ErrClosed the instance is discarded and rebuilt before the next call.
var (
	// ErrTrap is a Wasm trap: a panic, an unreachable, an out-of-bounds access.
	ErrTrap = errors.New("policy trapped")
	// ErrDeadline is a call stopped at its deadline.
	ErrDeadline = errors.New("policy call exceeded its deadline")
	// ErrOutOfMemory is a call that hit the memory limit.
	ErrOutOfMemory = errors.New("policy ran out of memory")
	// ErrExit is a module that exited (proc_exit), e.g. a Go fatal error.
	ErrExit = errors.New("policy exited")
	// ErrMalformedResponse is an answer that breaks the calling convention:
	// a buffer outside memory or bytes that are not a Response.
	ErrMalformedResponse = errors.New("policy answered malformed bytes")
	// ErrRestore is a new instance whose RestoreFunc failed.
	ErrRestore = errors.New("restoring policy instance failed")
	// ErrClosed is a call on a closed Policy.
	ErrClosed = errors.New("policy closed")
)

// restoreError is a new instance whose RestoreFunc failed; it is ErrRestore
// and the cause. The first instance's (Load's) reads as the policy failing to
// start, since for a new node there was nothing to restore.
type restoreError struct {
	policy string
	first  bool
	err    error
}

func (e *restoreError) Error() string {
	if e.first {
		return fmt.Sprintf("policy %q failed to start: %v", e.policy, e.err)
	}
	return fmt.Sprintf("policy %q: %v: %v", e.policy, ErrRestore, e.err)
}

func (e *restoreError) Unwrap() []error { return []error{ErrRestore, e.err} }

// CallError is a call that failed in the runtime. It wraps one of the Err
// values above and the underlying cause.
type CallError struct {
	Policy string
	Method abi.Method
	Kind   error
	Err    error
	// Output is the tail of what the guest wrote to stdout and stderr during the call.
	Output string
}

func (e *CallError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "policy %q: %s: %v", e.Policy, e.Method.Short(), e.Kind)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(compactTrace(e.Err.Error()))
	}
	if out := strings.TrimSpace(e.Output); out != "" {
		if len(out) > maxOutputInError {
			out = out[:maxOutputInError] + "\n[… more in CallError.Output …]"
		}
		fmt.Fprintf(&b, "\nguest output:\n%s", out)
	}
	return b.String()
}

// Unwrap exposes both the kind and the cause to errors.Is and errors.As.
func (e *CallError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Limits of the Wasm stack trace kept in an error message; the guest's own
// output usually says more, and Go's generic frame names run to kilobytes.
const (
	maxOutputInError   = 4 << 10
	maxTraceFrames     = 8
	maxTraceFrameBytes = 120
)

// compactTrace shortens wazero's "wasm stack trace" to its innermost frames.
func compactTrace(msg string) string {
	lines := strings.Split(msg, "\n")
	var b strings.Builder
	frames := 0
	for i, line := range lines {
		isFrame := strings.HasPrefix(line, "\t")
		if isFrame {
			frames++
			if frames > maxTraceFrames {
				if frames == maxTraceFrames+1 {
					b.WriteString("\n\t…")
				}
				continue
			}
			if len(line) > maxTraceFrameBytes {
				line = line[:maxTraceFrameBytes] + "…"
			}
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	return b.String()
}
