//go:build !linux

package cli

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal.
func dieWithParent(*exec.Cmd) {}

// processExists answers true: off Linux an agent does not tell whether the
// owner of a child compile's directory is gone, so it never removes one
// (removeStaleCompiles).
func processExists(int) bool { return true }
