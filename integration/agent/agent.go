//go:build integration

// Package agent runs the real node agent, `nriwasm run`, as a subprocess for
// integration tests: against a containerd from integration/containerd, with
// its log captured (and printed when the test fails), its readiness awaited,
// and its metrics, checkpoint and memory use readable.
//
//	bin, err := agent.Build(dir)               // once per test binary (TestMain; Main does it)
//	c := containerd.Start(t, containerd.Options{})
//	a := agent.Start(t, agent.Options{Binary: bin, NRISocket: c.NRISocket})
//	j, err := a.Journal()                      // the agent's checkpoint
//
// StartNode does the two starts in one; OnlineCPUs checks the node has the
// CPUs a test needs.
//
// Start registers a cleanup that SIGKILLs the agent, also when the test
// fails; register it after containerd.Start so that the agent goes first.
package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/host/state"
)

// Package is the agent's main package, built by Build.
const Package = "github.com/nriwasm/nriwasm/host/cmd/nriwasm"

// Build compiles the nriwasm binary (with its built-in policies) into dir
// and returns its path. Run it once per test binary, from TestMain.
func Build(dir string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building nriwasm: %w", err)
	}
	bin := filepath.Join(dir, "nriwasm")
	cmd := exec.Command(gobin, "build", "-o", bin, Package)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", Package, err, out)
	}
	return bin, nil
}

// Options configure Start.
type Options struct {
	// Binary is the nriwasm binary from Build. Required.
	Binary string
	// NRISocket is the runtime's NRI socket (--nri-socket). Required.
	NRISocket string
	// StateDir is the agent's state directory (--state-dir), which also
	// holds the compiled-code cache; default a new t.TempDir().
	StateDir string
	// Policy is --policy: a built-in name or a .wasm path; default the
	// built-in default (topology-aware).
	Policy string
	// Config, if set, is written to a file passed with --config (YAML; the
	// flags above override its fields).
	Config string
	// Sysfs is --sysfs; default /sys.
	Sysfs string
	// ReadyTimeout bounds each start until /readyz answers 200; default 2m.
	ReadyTimeout time.Duration
	// MetricsAddress is --metrics-address; default 127.0.0.1:0 (a free port,
	// read from the agent's log). Two agents given one fixed address share
	// it as two pods on the host network do.
	MetricsAddress string
}

// Agent is a running (or stopped) `nriwasm run`.
type Agent struct {
	// StateDir holds the checkpoint (state.FileName) and the cache.
	StateDir string
	// LogPath is the agent's stdout and stderr, every start appended.
	LogPath string
	// MetricsURL is http://host:port of the current start's /metrics,
	// /healthz and /readyz.
	MetricsURL string
	// ReadyAfter is how long the current start took from exec to the
	// first 200 from /readyz.
	ReadyAfter time.Duration

	opts       Options
	configPath string // the --config file, "" without Options.Config
	args       []string
	proc       *process
	starts     int
	startOff   int64 // where the current start's part of the log begins
	client     *http.Client
}

type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // cmd.Wait's result, valid after done
}

// Start runs the agent and waits until /readyz answers 200, which needs the
// runtime's first Synchronize: start containerd first. It fails the test if
// the agent exits or is not ready in time. Cleanup kills the agent and, if
// the test failed, logs the agent's log.
func Start(t testing.TB, o Options) *Agent {
	t.Helper()
	if o.Binary == "" || o.NRISocket == "" {
		t.Fatal("agent.Start: Binary and NRISocket are required")
	}
	if o.StateDir == "" {
		o.StateDir = t.TempDir()
	}
	if o.Sysfs == "" {
		o.Sysfs = "/sys"
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 2 * time.Minute
	}
	if o.MetricsAddress == "" {
		o.MetricsAddress = "127.0.0.1:0"
	}
	dir := t.TempDir()
	a := &Agent{
		StateDir: o.StateDir,
		LogPath:  filepath.Join(dir, "nriwasm.log"),
		opts:     o,
		client:   &http.Client{Timeout: 5 * time.Second},
	}
	// Port 0: the agent picks a free port and logs it ("agent started …
	// metrics=127.0.0.1:N"), so parallel tests never race for one.
	a.args = []string{"run", "--nri-socket", o.NRISocket, "--sysfs", o.Sysfs,
		"--state-dir", o.StateDir, "--metrics-address", o.MetricsAddress}
	if o.Policy != "" {
		a.args = append(a.args, "--policy", o.Policy)
	}
	if o.Config != "" {
		path := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(path, []byte(o.Config), 0o600); err != nil {
			t.Fatalf("writing the agent's config: %v", err)
		}
		a.configPath = path
		a.args = append(a.args, "--config", path)
	}
	t.Cleanup(func() {
		if err := a.kill(); err != nil {
			t.Errorf("agent teardown: %v", err)
		}
		if t.Failed() {
			t.Logf("agent log (%s), last 64 KiB:\n%s", a.LogPath, a.logTail(64<<10))
		}
	})
	if err := a.start(); err != nil {
		t.Fatal(err)
	}
	return a
}

// Restart starts the agent again with the same options and state directory
// (stop or kill it first) and waits until it is ready.
func (a *Agent) Restart(t testing.TB) {
	t.Helper()
	if a.running() {
		t.Fatal("agent.Restart: the agent is still running; Stop or Kill it first")
	}
	if err := a.start(); err != nil {
		t.Fatal(err)
	}
}

// Kill SIGKILLs the agent and waits for it to exit: no shutdown, no last
// checkpoint.
func (a *Agent) Kill(t testing.TB) {
	t.Helper()
	if err := a.kill(); err != nil {
		t.Fatal(err)
	}
}

// Stop sends SIGTERM and waits (up to 30 s) for the agent to exit; it fails
// the test if the agent does not exit cleanly.
func (a *Agent) Stop(t testing.TB) {
	t.Helper()
	if !a.running() {
		t.Fatal("agent.Stop: the agent is not running")
	}
	if err := a.proc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("agent.Stop: %v", err)
	}
	select {
	case <-a.proc.done:
	case <-time.After(30 * time.Second):
		t.Fatal("agent.Stop: the agent did not exit within 30 s of SIGTERM")
	}
	if a.proc.err != nil {
		t.Fatalf("agent.Stop: the agent exited with %v", a.proc.err)
	}
}

// WriteConfig replaces the agent's configuration file (started with
// Options.Config): the running agent applies the change live, or refuses it.
func (a *Agent) WriteConfig(yaml string) error {
	if a.configPath == "" {
		return errors.New("agent.WriteConfig: the agent was started without Options.Config")
	}
	tmp := a.configPath + ".new"
	if err := os.WriteFile(tmp, []byte(yaml), 0o600); err != nil {
		return fmt.Errorf("writing the agent's config: %w", err)
	}
	if err := os.Rename(tmp, a.configPath); err != nil {
		return fmt.Errorf("replacing the agent's config: %w", err)
	}
	return nil
}

// PID is the current start's process id.
func (a *Agent) PID() int { return a.proc.cmd.Process.Pid }

// Running reports whether the agent's process has not exited.
func (a *Agent) Running() bool { return a.running() }

func (a *Agent) running() bool {
	if a.proc == nil {
		return false
	}
	select {
	case <-a.proc.done:
		return false
	default:
		return true
	}
}

func (a *Agent) start() error {
	logf, err := os.OpenFile(a.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the agent log: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	a.starts++
	off, err := logf.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("agent log: %w", err)
	}
	a.startOff = off
	fmt.Fprintf(logf, "=== harness: start %d: %s %s ===\n", a.starts, a.opts.Binary, strings.Join(a.args, " "))

	cmd := exec.Command(a.opts.Binary, a.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the agent: %w", err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	a.proc = p
	a.MetricsURL, a.ReadyAfter = "", 0

	ctx, cancel := context.WithTimeout(context.Background(), a.opts.ReadyTimeout)
	defer cancel()
	// Poll often: the time to ready is one of the figures reported.
	const tick = 2 * time.Millisecond
	var addr string
	err = a.poll(ctx, tick, func() (bool, error) {
		addr = a.metricsAddress(off)
		return addr != "", nil
	})
	if err != nil {
		return fmt.Errorf("agent start %d: waiting for its \"agent started\" log line: %w", a.starts, err)
	}
	a.MetricsURL = "http://" + addr
	var last string
	err = a.poll(ctx, tick, func() (bool, error) {
		code, body, err := a.get(ctx, "/readyz")
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("%d %s", code, strings.TrimSpace(body))
		return code == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("agent start %d: waiting for /readyz = 200 (last: %s): %w", a.starts, last, err)
	}
	a.ReadyAfter = time.Since(begin)
	return nil
}

var startedRE = regexp.MustCompile(`msg="agent started" .*\bmetrics=(\S+)`)

// metricsAddress finds the address in the "agent started" line logged since
// offset off.
func (a *Agent) metricsAddress(off int64) string {
	b, err := os.ReadFile(a.LogPath)
	if err != nil || int64(len(b)) < off {
		return ""
	}
	if m := startedRE.FindSubmatch(b[off:]); m != nil {
		return string(m[1])
	}
	return ""
}

func (a *Agent) kill() error {
	if !a.running() {
		return nil
	}
	if err := a.proc.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing the agent: %w", err)
	}
	select {
	case <-a.proc.done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("the agent (pid %d) did not exit within 30 s of SIGKILL", a.PID())
	}
}

// poll calls cond every tick until it returns true or an error, ctx ends,
// or the agent exits.
func (a *Agent) poll(ctx context.Context, tick time.Duration, cond func() (bool, error)) error {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-a.proc.done:
			return fmt.Errorf("the agent exited: %v", a.proc.err)
		case <-t.C:
		}
	}
}

// Eventually polls cond every 50 ms until it holds, failing the test with
// what cond last reported if it does not within timeout, or at once if the
// agent exits (so use it while the agent runs). cond returns "" when it holds, else what it is waiting for.
func (a *Agent) Eventually(t testing.TB, timeout time.Duration, cond func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last string
	err := a.poll(ctx, 50*time.Millisecond, func() (bool, error) {
		last = cond()
		return last == "", nil
	})
	if err != nil {
		t.Fatalf("after %v: %s (%v)", timeout, last, err)
	}
}

func (a *Agent) get(ctx context.Context, path string) (int, string, error) {
	if a.MetricsURL == "" {
		return 0, "", errors.New("the agent's metrics address is not known yet")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.MetricsURL+path, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Ready reports whether /readyz answers 200 (with its answer otherwise).
func (a *Agent) Ready(ctx context.Context) error {
	code, body, err := a.get(ctx, "/readyz")
	if err != nil {
		return fmt.Errorf("agent /readyz: %w", err)
	}
	if code != http.StatusOK {
		return fmt.Errorf("agent /readyz: %d %s", code, strings.TrimSpace(body))
	}
	return nil
}

// Metrics scrapes /metrics.
func (a *Agent) Metrics(ctx context.Context) (Metrics, error) {
	code, body, err := a.get(ctx, "/metrics")
	if err != nil {
		return nil, fmt.Errorf("agent /metrics: %w", err)
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("agent /metrics: %d %s", code, strings.TrimSpace(body))
	}
	return parseMetrics(body)
}

// Journal reads the agent's checkpoint and replays its decision log over it:
// the pods and containers it journaled with their assignments, as of its last
// decision written before an answer (every CreateContainer and Synchronize) or
// its last save (at most about 50 ms after any other change). It only reads:
// unlike state.Load it removes no temporary file and sets nothing aside, and
// a record being appended as it reads is left out. No checkpoint yet is an
// empty journal.
func (a *Agent) Journal() (*state.Journal, error) {
	// The log first: it replays over any checkpoint written since, so a save
	// that trims it between the two reads loses nothing.
	log, err := os.ReadFile(filepath.Join(a.StateDir, state.FileName+".log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading the agent's decision log: %w", err)
	}
	j := state.New()
	b, err := os.ReadFile(filepath.Join(a.StateDir, state.FileName))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("reading the agent's checkpoint: %w", err)
	default:
		if j, err = state.Unmarshal(b); err != nil {
			return nil, fmt.Errorf("decoding the agent's checkpoint: %w", err)
		}
	}
	if len(log) > 0 {
		// A torn tail is an append in flight: the records before it count.
		_, _ = state.ReplayLog(j, log)
	}
	return j, nil
}

// RSS is the agent's resident set size (VmRSS), in bytes.
func (a *Agent) RSS() (int64, error) { return a.Status("VmRSS") }

// Status is a size field of the agent's /proc/PID/status ("VmRSS",
// "RssAnon", "RssFile", "VmHWM"), in bytes.
func (a *Agent) Status(field string) (int64, error) { return ProcStatus(a.PID(), field) }

// ProcStatus is a size field of process pid's /proc/PID/status, in bytes.
func ProcStatus(pid int, field string) (int64, error) {
	return procField(fmt.Sprintf("/proc/%d/status", pid), field)
}

// procField reads a "Field:   12345 kB" line of a /proc file, in bytes.
func procField(path, field string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("%s of %s: %w", field, path, err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v) // "12345 kB"
			if len(f) != 2 || f[1] != "kB" {
				return 0, fmt.Errorf("%s of %s: %q is not in kB", field, path, line)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s of %s: %q: %w", field, path, line, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%s of %s: no such field", field, path)
}

// Log returns the agent's whole log, every start included.
func (a *Agent) Log() string {
	b, err := os.ReadFile(a.LogPath)
	if err != nil {
		return fmt.Sprintf("(no agent log: %v)", err)
	}
	return string(b)
}

// StartLog returns the current start's part of the agent's log.
func (a *Agent) StartLog() string {
	log := a.Log()
	if int64(len(log)) < a.startOff {
		return log
	}
	return log[a.startOff:]
}

// LogCount counts the agent's log lines (every start) that contain s.
func (a *Agent) LogCount(s string) int {
	n := 0
	for line := range strings.SplitSeq(a.Log(), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

func (a *Agent) logTail(n int) string {
	b, err := os.ReadFile(a.LogPath)
	if err != nil {
		return fmt.Sprintf("(no agent log: %v)", err)
	}
	if len(b) <= n {
		return string(b)
	}
	b = b[len(b)-n:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return "[...]\n" + string(b)
}

// SmapsRollup is a size field of process pid's /proc/PID/smaps_rollup
// ("Pss", "Private_Dirty", "Anonymous"), in bytes.
func SmapsRollup(pid int, field string) (int64, error) {
	return procField(fmt.Sprintf("/proc/%d/smaps_rollup", pid), field)
}
