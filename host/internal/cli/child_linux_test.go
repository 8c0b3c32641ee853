package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// compileParentEnv makes the test binary an agent that compiles in a child
// process (compileInChild) with the executable the variable names, into a
// directory under the one compileDirEnv names, and waits for it.
const (
	compileParentEnv = "NRIWASM_TEST_COMPILE_PARENT"
	compileDirEnv    = "NRIWASM_TEST_COMPILE_DIR"
)

// compileAsParent is the test binary as that agent.
func compileAsParent(exe string) int {
	if _, err := compileInChild(context.Background(), os.Getenv(compileDirEnv), exe, nil, nil); err != nil {
		return 1
	}
	return 0
}

// TestChildDiesWithTheAgent: an agent killed with SIGKILL while its child
// compiles takes the child with it, rather than leaving it compiling for an
// agent that is gone; the directory the child was writing stays, and the
// next agent's removeStaleCompiles removes it, and nothing else.
func TestChildDiesWithTheAgent(t *testing.T) {
	dir := t.TempDir()
	cacheDir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	child := filepath.Join(dir, "compile")
	script := "#!/bin/sh\necho $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nexec sleep 600\n"
	if err := os.WriteFile(child, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	agent := exec.Command(os.Args[0], "-test.run", "^$")
	agent.Env = append(os.Environ(), compileParentEnv+"="+child, compileDirEnv+"="+cacheDir)
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

	left, err := filepath.Glob(filepath.Join(cacheDir, compileDirPrefix+strconv.Itoa(agent.Process.Pid)+"-*"))
	if err != nil || len(left) != 1 {
		t.Fatalf("the killed agent's compile directory: %v, %v; want the one it made", left, err)
	}
	// Beside it: what must stay. A live agent's directory (this process
	// is one), a file and a directory not named as compileInChild names
	// them, and the cache's own directory.
	keep := []string{
		compileDirPrefix + strconv.Itoa(os.Getpid()) + "-1",
		compileDirPrefix + "123",
		"wazero",
	}
	for _, name := range keep {
		if err := os.Mkdir(filepath.Join(cacheDir, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	file := compileDirPrefix + strconv.Itoa(agent.Process.Pid) + "-file"
	if err := os.WriteFile(filepath.Join(cacheDir, file), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, file)
	if n := removeStaleCompiles(cacheDir, logr.Discard()); n != 1 {
		t.Fatalf("removeStaleCompiles removed %d, want the killed agent's 1", n)
	}
	if _, err := os.Stat(left[0]); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s: %v; want it removed", left[0], err)
	}
	for _, name := range keep {
		if _, err := os.Stat(filepath.Join(cacheDir, name)); err != nil {
			t.Errorf("%s removed: %v", name, err)
		}
	}
}

// TestStartPinnedOutlivesItsCaller: a child started by startPinned with a
// parent-death signal lives on when the thread of the goroutine that asked
// for it exits (the kernel ties the signal to the thread that forks). The
// caller here is locked to its thread and returns, so the Go runtime ends
// that thread; a child forked on it would be killed.
func TestStartPinnedOutlivesItsCaller(t *testing.T) {
	stdin, feed, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	cmd := exec.Command("/bin/sh", "-c", "read line")
	cmd.Stdin = stdin
	dieWithParent(cmd)
	type started struct {
		wait func() error
		err  error
		tid  int
	}
	var r started
	onEndingThread(func() {
		r.wait, r.err = startPinned(cmd)
		r.tid = syscall.Gettid()
	})
	stdin.Close()
	if r.err != nil {
		t.Fatal(r.err)
	}
	task := "/proc/self/task/" + strconv.Itoa(r.tid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(task); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the caller's thread %d still exists 10 s after its goroutine returned", r.tid)
		}
	}
	if _, err := feed.WriteString("done\n"); err != nil {
		t.Fatalf("the child is gone with its caller's thread: %v", err)
	}
	if err := r.wait(); err != nil {
		t.Fatalf("the child ended with %v once its caller's thread exited; want it to run to its end", err)
	}
}

// onEndingThread runs fn on a goroutine locked to an OS thread that ends
// when fn returns. Not the main thread: the Go runtime never ends that one
// (it parks it), so a goroutine that finds itself there holds it and runs
// fn from another.
func onEndingThread(fn func()) {
	done := make(chan struct{})
	var run func()
	run = func() {
		runtime.LockOSThread() // never unlocked but on the main thread: the thread ends with this goroutine
		if syscall.Gettid() == syscall.Getpid() {
			go run()
			<-done
			runtime.UnlockOSThread()
			return
		}
		fn()
		close(done)
	}
	go run()
	<-done
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
