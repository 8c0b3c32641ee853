package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/spf13/cobra"

	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

func newPolicyPrecompile() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "precompile --out DIR [NAME|FILE.wasm|- ...]",
		Short: "Compile policies for this architecture into a seed of the compilation cache, for the agent's image",
		Long: `precompile compiles the named policies (default: every built-in one) for this
machine's architecture, as the agent does, and writes the compiled code into
DIR with a manifest (seed.json) of each file's sha256 and of the wazero build,
CPU features and deadline instrumentation it was built for. The agent's image
carries DIR (policy.seedDir, default /usr/lib/nriwasm/seed): an agent that has
never run a policy copies its compiled code from there into policy.cacheDir
after checking all of this, instead of compiling it; on any mismatch it logs
why and compiles. "-" reads a module from stdin: the agent runs this command
as a child process to compile a policy that is in neither (docs/agent.md).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out: required")
			}
			if len(args) == 0 {
				args = builtin.Names()
			}
			modules := map[string][]byte{}
			for _, a := range args {
				if a == "-" {
					module, err := io.ReadAll(cmd.InOrStdin())
					if err != nil {
						return fmt.Errorf("read policy from stdin: %w", err)
					}
					modules["stdin"] = module
					continue
				}
				name, module, err := readPolicy(a)
				if err != nil {
					return err
				}
				modules[name] = module
			}
			if err := wasm.Precompile(cmd.Context(), out, modules); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "precompiled %d policies into %s\n", len(modules), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the seed directory to write (created)")
	return cmd
}

// compileDirPrefix begins the name of the directory compileInChild makes
// for the child's seed: compileDirPrefix, the agent's pid, "-", a random
// suffix. The pid says whose it is when an agent killed mid-compile left it
// behind (removeStaleCompiles).
const compileDirPrefix = "nriwasm-compile-"

// compileInChild compiles module in a child process (exe policy precompile
// --out DIR -, the module on stdin) into a new seed directory under parent
// (the compilation cache's directory: on the state directory's disk, not a
// tmpfs), so the compile's memory peak is the child's and leaves with it;
// the agent then loads the policy from that seed (wasm.WithSeedDir) without
// compiling. env is the child's environment (nil: the agent's). The child
// dies with the agent (dieWithParent, started by startPinned). The caller
// removes the directory once the policy is loaded.
func compileInChild(ctx context.Context, parent, exe string, env []string, module []byte) (string, error) {
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%s%d-", compileDirPrefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("compile in a child process: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, "policy", "precompile", "--out", dir, "-")
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(module)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	dieWithParent(cmd)
	wait, err := startPinned(cmd)
	if err == nil {
		err = wait()
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("compile in a child process (%s policy precompile): %w: %s", exe, err, bytes.TrimSpace(out.Bytes()))
	}
	return dir, nil
}

// startPinned starts cmd from a goroutine locked to its OS thread, which
// stays locked until the child has exited, and returns once it started;
// wait waits for it (cmd.Wait). The kernel sends a child's parent-death
// signal (dieWithParent) when the *thread* that forked it exits, not the
// process (golang/go#27505): started from any goroutine, the child would be
// killed whenever the Go runtime ended that thread (it does when a goroutine
// locked to a thread returns).
func startPinned(cmd *exec.Cmd) (wait func() error, err error) {
	started := make(chan error, 1)
	exited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return func() error { return <-exited }, nil
}

// removeStaleCompiles removes the seed directories compileInChild left in
// dir for agents that are gone (killed mid-compile: their child died with
// them, the directory stayed): only directories named as compileInChild
// names them, and only when no process has the pid in the name. It returns
// how many it removed; one it cannot remove is logged and left.
func removeStaleCompiles(dir string, log logr.Logger) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0 // no cache directory yet: nothing left behind
	}
	removed := 0
	for _, e := range entries {
		pid, ok := compileDirOwner(e.Name())
		if !e.IsDir() || !ok || processExists(pid) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(path); err != nil {
			log.Error(err, "cannot remove a child compile's directory left by an agent that is gone", "dir", path)
			continue
		}
		removed++
	}
	if removed > 0 {
		log.Info("removed child compiles' directories left by agents that are gone", "dir", dir, "removed", removed)
	}
	return removed
}

// compileDirOwner is the agent pid in the name of a directory
// compileInChild made; ok is false for any other name.
func compileDirOwner(name string) (pid int, ok bool) {
	rest, found := strings.CutPrefix(name, compileDirPrefix)
	if !found {
		return 0, false
	}
	digits, _, found := strings.Cut(rest, "-")
	if !found {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// childCompile is the agent's wasm.CompileFunc: it compiles a module in a
// child process (compileInChild, into a directory under parent, exe being
// the agent's binary and env the child's environment) into a seed
// directory, which the returned cleanup removes.
func childCompile(parent, exe string, env []string, log logr.Logger) wasm.CompileFunc {
	return func(ctx context.Context, module []byte) (string, func(), error) {
		start := time.Now()
		log.Info("compiling the policy in a child process")
		dir, err := compileInChild(ctx, parent, exe, env, module)
		if err != nil {
			return "", nil, err
		}
		log.Info("policy compiled in a child process", "duration", time.Since(start).Round(time.Millisecond).String())
		return dir, func() { os.RemoveAll(dir) }, nil
	}
}
