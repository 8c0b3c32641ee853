package cli

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd's process when the agent dies
// (PR_SET_PDEATHSIG), so that a compile outlives no agent killed with
// SIGKILL: its restart starts a compile of its own.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
