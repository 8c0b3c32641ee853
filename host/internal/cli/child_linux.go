package cli

import (
	"errors"
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd's process when the agent dies
// (PR_SET_PDEATHSIG), so that a compile outlives no agent killed with
// SIGKILL: its restart starts a compile of its own. The signal comes when
// the thread that started the child exits: start it with startPinned.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// processExists reports whether a process has the id pid (one of another
// user counts).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
