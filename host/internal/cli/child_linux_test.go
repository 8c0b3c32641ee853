package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// compileParentEnv makes the test binary an agent that compiles in a child
// process (compileInChild) with the executable the variable names, and
// waits for it.
const compileParentEnv = "NRIWASM_TEST_COMPILE_PARENT"

// compileAsParent is the test binary as that agent.
func compileAsParent(exe string) int {
	if _, err := compileInChild(context.Background(), exe, nil, nil); err != nil {
		return 1
	}
	return 0
}

// TestChildDiesWithTheAgent: an agent killed with SIGKILL while its child
// compiles takes the child with it, rather than leaving it compiling for an
// agent that is gone.
func TestChildDiesWithTheAgent(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	child := filepath.Join(dir, "compile")
	script := "#!/bin/sh\necho $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nexec sleep 600\n"
	if err := os.WriteFile(child, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	agent := exec.Command(os.Args[0], "-test.run", "^$")
	agent.Env = append(os.Environ(), compileParentEnv+"="+child)
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = agent.Process.Kill()
			t.Fatal("the child compile never started")
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if err := agent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = agent.Wait()
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d still runs 10 s after its agent was killed", pid)
		}
	}
}

// alive reports whether process pid runs (a zombie waiting for its reaper
// does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
