//go:build integration

package containerd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Options configure Start. The zero value is usable.
type Options struct {
	// CDISpecDirs are the directories containerd reads CDI specs from;
	// default none (CDI devices cannot be resolved).
	CDISpecDirs []string
	// NRISocket is the absolute path NRI listens on (under 108 bytes);
	// default <root>/nri.sock.
	NRISocket string
	// LogLevel is containerd's log level; default "info".
	LogLevel string
	// StartTimeout bounds each start of containerd until CRI and NRI are
	// ready; default 60s.
	StartTimeout time.Duration
	// CNIConfig, when set, is written into containerd's CNI configuration
	// directory before it starts (as 10-nriwasm.conflist): a list with only
	// a loopback plugin makes the runtime report NetworkReady, which a
	// kubelet waits for, while pods keep using the host network.
	CNIConfig []byte
}

// Containerd is a private containerd started by Start.
type Containerd struct {
	// Root holds everything: config, state, sockets, log, image archive.
	Root string
	// Address is containerd's gRPC socket; it also serves CRI.
	Address string
	// NRISocket is the socket NRI plugins connect to.
	NRISocket string
	// CgroupRoot is the cgroup (e.g. /nriwasm-123) under which pods get
	// their parents; it is removed on cleanup.
	CgroupRoot string
	// LogPath is containerd's log (stdout and stderr of every start).
	LogPath string

	opts   Options
	bin    binaries
	proc   *process
	conn   *grpc.ClientConn
	rt     runtimeapi.RuntimeServiceClient
	images runtimeapi.ImageServiceClient
	pods   atomic.Int64 // counter for default pod names
}

type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // cmd.Wait's result, valid after done
}

// maxShimSocketDir is containerd's limit for the shim socket directory on
// Linux: 107 usable bytes minus "/" and a 64-hex-digit name.
const maxShimSocketDir = 42

// Start starts containerd under a new temporary root, waits until CRI and
// NRI are ready, and imports the busybox image (ImageRef). Cleanup removes
// everything, also when the test fails. Start fails the test if anything is
// missing; it never skips.
func Start(t testing.TB, opts Options) *Containerd {
	t.Helper()
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if os.Geteuid() != 0 {
		t.Fatal("containerd integration tests need root")
	}
	bin, err := findBinaries()
	if err != nil {
		t.Fatal(err)
	}
	// A short root: sockets must stay under 108 bytes and the shim socket
	// directory under 42 characters, whatever TMPDIR and the test name are.
	root, err := os.MkdirTemp("/tmp", "nriw-")
	if err != nil {
		t.Fatalf("creating the containerd root: %v", err)
	}
	c := &Containerd{
		Root:       root,
		Address:    filepath.Join(root, "c.sock"),
		NRISocket:  opts.NRISocket,
		CgroupRoot: "/" + filepath.Base(root),
		LogPath:    filepath.Join(root, "containerd.log"),
		opts:       opts,
		bin:        bin,
	}
	if c.NRISocket == "" {
		c.NRISocket = filepath.Join(root, "nri.sock")
	}
	t.Cleanup(func() { c.cleanup(t) })

	if !filepath.IsAbs(c.NRISocket) || len(c.NRISocket) >= 108 {
		t.Fatalf("NRI socket %q must be absolute and shorter than 108 bytes", c.NRISocket)
	}
	for _, d := range []string{c.path("nri", "plugins"), c.path("nri", "conf.d"), c.path("cni"), c.path("opt"), c.path("tmp"), c.shimSocketDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatalf("creating %s: %v", d, err)
		}
	}
	if err := c.writeConfig(c.path("config.toml")); err != nil {
		t.Fatal(err)
	}
	if opts.CNIConfig != nil {
		if err := os.WriteFile(c.path("cni", "10-nriwasm.conflist"), opts.CNIConfig, 0o644); err != nil {
			t.Fatalf("writing the CNI configuration: %v", err)
		}
	}
	archive := c.path("busybox-oci.tar")
	if err := writeImage(bin.busybox, archive); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout)
	defer cancel()
	if err := c.start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.importImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
	return c
}

// Stop stops containerd with SIGTERM (SIGKILL after 20 s). Shims and
// containers keep running, as with a real daemon restart. NRI plugins see
// their connection close.
func (c *Containerd) Stop(t testing.TB) {
	t.Helper()
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
}

// Restart stops containerd if it runs and starts it again with the same
// root and config, waiting until CRI and NRI are ready.
func (c *Containerd) Restart(t testing.TB) {
	t.Helper()
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.StartTimeout)
	defer cancel()
	if err := c.start(ctx); err != nil {
		t.Fatal(err)
	}
}

// Runtime is the CRI runtime service client, for calls the helpers lack. It
// changes with every (re)start.
func (c *Containerd) Runtime() runtimeapi.RuntimeServiceClient { return c.rt }

// Images is the CRI image service client. It changes with every (re)start.
func (c *Containerd) Images() runtimeapi.ImageServiceClient { return c.images }

func (c *Containerd) path(elem ...string) string {
	return filepath.Join(append([]string{c.Root}, elem...)...)
}

func (c *Containerd) shimSocketDir() string { return c.path("s") }

func (c *Containerd) running() bool {
	if c.proc == nil {
		return false
	}
	select {
	case <-c.proc.done:
		return false
	default:
		return true
	}
}

// start launches containerd and waits for CRI and the NRI socket.
func (c *Containerd) start(ctx context.Context) error {
	if c.running() {
		return errors.New("starting containerd: already running")
	}
	// NRI removes a stale socket before listening; removing it here lets
	// the socket's existence mean "NRI is listening".
	if err := os.Remove(c.NRISocket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the stale NRI socket: %w", err)
	}
	logf, err := os.OpenFile(c.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the containerd log: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	fmt.Fprintf(logf, "=== harness: starting containerd at %s ===\n", time.Now().Format(time.RFC3339Nano))

	cmd := exec.Command(c.bin.containerd, "--config", c.path("config.toml"))
	cmd.Env = append(os.Environ(), "PATH="+c.bin.dir+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting containerd: %w", err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	c.proc = p

	if err := c.waitReady(ctx); err != nil {
		return fmt.Errorf("containerd did not become ready (log %s): %w", c.LogPath, err)
	}
	return nil
}

// waitReady polls until the CRI runtime reports RuntimeReady and the NRI
// socket exists, failing early if containerd exits.
func (c *Containerd) waitReady(ctx context.Context) error {
	if err := poll(ctx, c.proc, func() (bool, error) { return isSocket(c.Address), nil }); err != nil {
		return fmt.Errorf("waiting for %s: %w", c.Address, err)
	}
	conn, err := grpc.NewClient("unix://"+c.Address,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, MaxDelay: time.Second},
			MinConnectTimeout: 2 * time.Second,
		}))
	if err != nil {
		return fmt.Errorf("creating the CRI client: %w", err)
	}
	c.conn = conn
	c.rt = runtimeapi.NewRuntimeServiceClient(conn)
	c.images = runtimeapi.NewImageServiceClient(conn)

	var last error
	err = poll(ctx, c.proc, func() (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		st, err := c.rt.Status(cctx, &runtimeapi.StatusRequest{})
		if err != nil {
			last = err
			return false, nil
		}
		for _, cond := range st.GetStatus().GetConditions() {
			if cond.Type == runtimeapi.RuntimeReady && cond.Status {
				return true, nil
			}
		}
		last = fmt.Errorf("CRI status: %v", st.GetStatus())
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRI RuntimeReady (last: %v): %w", last, err)
	}
	if err := poll(ctx, c.proc, func() (bool, error) { return isSocket(c.NRISocket), nil }); err != nil {
		return fmt.Errorf("waiting for the NRI socket %s: %w", c.NRISocket, err)
	}
	return nil
}

// stop terminates containerd: SIGTERM, then SIGKILL after 20 s.
func (c *Containerd) stop() error {
	if c.conn != nil {
		// Calls through the old clients now fail with "the client
		// connection is closing" rather than panicking.
		c.conn.Close()
		c.conn = nil
	}
	if !c.running() {
		return nil
	}
	if err := c.proc.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping containerd: %w", err)
	}
	select {
	case <-c.proc.done:
		return nil
	case <-time.After(20 * time.Second):
	}
	if err := c.proc.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing containerd: %w", err)
	}
	<-c.proc.done
	return errors.New("containerd ignored SIGTERM for 20 s and was killed")
}

// ImportImage imports an image archive (an OCI image layout or a docker
// save tarball) with ctr, locally, into the CRI namespace and waits until CRI
// lists ref, the name the archive gives the image.
func (c *Containerd) ImportImage(ctx context.Context, archive, ref string) error {
	cmd := exec.CommandContext(ctx, c.bin.ctr, "--address", c.Address, "-n", "k8s.io",
		"images", "import", "--local", archive)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ctr images import %s: %w\n%s", archive, err, out)
	}
	return c.waitImage(ctx, ref)
}

// importImage imports the busybox archive (ImportImage of ImageRef).
func (c *Containerd) importImage(ctx context.Context, archive string) error {
	return c.ImportImage(ctx, archive, ImageRef)
}

// waitImage polls until CRI lists ref.
func (c *Containerd) waitImage(ctx context.Context, ref string) error {
	err := poll(ctx, c.proc, func() (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		st, err := c.images.ImageStatus(cctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		if err != nil {
			return false, fmt.Errorf("CRI ImageStatus %s: %w", ref, err)
		}
		return st.GetImage() != nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRI to list the imported image %s: %w", ref, err)
	}
	return nil
}

// poll calls cond every 20 ms until it returns true or an error, the
// context ends, or containerd (proc, if not nil) exits.
func poll(ctx context.Context, proc *process, cond func() (bool, error)) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		var exited <-chan struct{}
		if proc != nil {
			exited = proc.done
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return fmt.Errorf("containerd exited: %v", proc.err)
		case <-tick.C:
		}
	}
}

func isSocket(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// logTail returns up to the last n bytes of containerd's log.
func (c *Containerd) logTail(n int64) string {
	f, err := os.Open(c.LogPath)
	if err != nil {
		return fmt.Sprintf("(no containerd log: %v)", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(containerd log: %v)", err)
	}
	off := max(fi.Size()-n, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return fmt.Sprintf("(reading the containerd log: %v)", err)
	}
	s := string(buf)
	if off > 0 {
		s = "[...]" + s[strings.IndexByte(s, '\n')+1:]
	}
	return s
}
