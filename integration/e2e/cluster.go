//go:build integration && e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nriwasm/nriwasm/integration/containerd"
	"github.com/nriwasm/nriwasm/integration/kubeapi"
)

// NodeName is the one node's name.
const NodeName = "nriwasm-e2e"

// loopbackCNI makes containerd report NetworkReady (the kubelet waits for
// it); pods use the host network, so no plugin binary is ever run.
const loopbackCNI = `{"cniVersion": "1.0.0", "name": "nriwasm-e2e", "plugins": [{"type": "loopback"}]}`

// kubeletSysctls are the sysctls the kubelet sets at start; the cluster
// puts back what it found.
var kubeletSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// Cluster is a real one-node cluster started by Start.
type Cluster struct {
	// Dir holds the kubelet's root directory, the NRI socket's directory,
	// the CDI spec directory, the agent's state and the logs.
	Dir string
	// API is etcd and kube-apiserver; Runtime is containerd with NRI.
	API     *kubeapi.Server
	Runtime *containerd.Containerd
	// Client is the admin's clientset; Kubeconfig the admin's kubeconfig.
	Client     kubernetes.Interface
	Kubeconfig string
	// NodeIP is the kubelet's --node-ip.
	NodeIP string
	// KubeletDir is the kubelet's --root-dir; NRISocket, CDIDir and StateDir
	// are what the chart is pointed at.
	KubeletDir, NRISocket, CDIDir, StateDir string
	// Bin is the directory of the cached binaries.
	Bin string

	kubeletConfig                         string
	kubelet, scheduler, controllerManager *kubeapi.Process
	sysctls                               map[string]string
}

// Start starts the cluster and waits until the node is Ready and schedulable.
// Cleanup stops everything, unmounts, removes the cgroups and directories and
// puts the kubelet's sysctls back, also when the test fails.
func Start(t *testing.T) *Cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the e2e cluster needs root")
	}
	bin, err := containerd.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"kubelet", "kube-scheduler", "kube-controller-manager", "helm"} {
		if fi, err := os.Stat(filepath.Join(bin, b)); err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("%s missing from %s (run make integration-deps): %v", b, bin, err)
		}
	}
	ip, err := nodeIP()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/tmp", "nriwe-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{
		Dir: dir, Bin: bin, NodeIP: ip,
		KubeletDir: filepath.Join(dir, "kubelet"),
		NRISocket:  filepath.Join(dir, "nri", "nri.sock"),
		CDIDir:     filepath.Join(dir, "cdi"),
		StateDir:   filepath.Join(dir, "state"),
		Kubeconfig: filepath.Join(dir, "admin.kubeconfig"),
		sysctls:    map[string]string{},
	}
	devicePlugins := leftBehind("/var/lib/kubelet/device-plugins")
	for _, s := range kubeletSysctls {
		if b, err := os.ReadFile(filepath.Join("/proc/sys", s)); err == nil {
			c.sysctls[s] = strings.TrimSpace(string(b))
		}
	}
	t.Cleanup(func() {
		var errs []error
		errs = append(errs, containerd.UnmountUnder(dir))
		for s, v := range c.sysctls {
			if b, err := os.ReadFile(filepath.Join("/proc/sys", s)); err == nil && strings.TrimSpace(string(b)) == v {
				continue // unchanged (or not writable here)
			}
			if err := os.WriteFile(filepath.Join("/proc/sys", s), []byte(v), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restoring sysctl %s=%s: %w", s, v, err))
			}
		}
		errs = append(errs, devicePlugins())
		if err := errors.Join(errs...); err != nil {
			t.Errorf("e2e teardown: %v (kept %s)", err, dir)
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("e2e teardown: %v", err)
		}
	})
	for _, d := range []string{c.KubeletDir, filepath.Dir(c.NRISocket), c.CDIDir, c.StateDir, c.logDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	c.Runtime = containerd.Start(t, containerd.Options{
		NRISocket:   c.NRISocket,
		CDISpecDirs: []string{c.CDIDir},
		CNIConfig:   []byte(loopbackCNI),
	})
	if err := makeCgroupRoot(c.Runtime.CgroupRoot); err != nil {
		t.Fatal(err)
	}
	c.API = kubeapi.Start(t)
	c.Client = c.API.Client()
	if err := c.API.WriteKubeconfig(c.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	ports, err := kubeapi.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	if c.controllerManager, err = kubeapi.StartProcess("kube-controller-manager", c.log("kube-controller-manager"), filepath.Join(bin, "kube-controller-manager"),
		"--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--service-account-private-key-file="+c.API.ServiceAccountKeyFile(),
		"--root-ca-file="+c.API.CAFile(),
		"--use-service-account-credentials=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(ports[0]),
	); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.stopLogged(t, c.controllerManager) })
	if c.scheduler, err = kubeapi.StartProcess("kube-scheduler", c.log("kube-scheduler"), filepath.Join(bin, "kube-scheduler"),
		"--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(ports[1]),
	); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.stopLogged(t, c.scheduler) })

	c.kubeletConfig = filepath.Join(dir, "kubelet.yaml")
	if err := os.WriteFile(c.kubeletConfig, []byte(c.kubeletConfiguration(ports[2], ports[3])), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c.StartKubelet(t)
	t.Cleanup(func() { c.stopLogged(t, c.kubelet) })
	c.WaitNodeReady(t)
	t.Logf("TIMING node Ready %v after the kubelet started", time.Since(start).Round(time.Millisecond))
	return c
}

// kubeletConfiguration is what the kubelet needs on this VM: cgroup v1
// allowed, the cgroupfs driver under containerd's cgroup root, swap
// allowed, containerd's socket, its servers on loopback and free ports,
// no eviction or image garbage collection to surprise a test.
func (c *Cluster) kubeletConfiguration(port, healthzPort int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %s
failSwapOn: false
containerRuntimeEndpoint: unix://%s
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: %s}
authorization: {mode: AlwaysAllow}
resolvConf: ""
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "1Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
syncFrequency: 10s
volumePluginDir: %s
`, c.Runtime.CgroupRoot, c.Runtime.Address, port, healthzPort, c.API.CAFile(), filepath.Join(c.Dir, "volume-plugins"))
}

// StartKubelet starts the kubelet (again, after StopKubelet) with the same
// configuration and root directory.
func (c *Cluster) StartKubelet(t *testing.T) {
	t.Helper()
	var err error
	c.kubelet, err = kubeapi.StartProcess("kubelet", c.log("kubelet"), filepath.Join(c.Bin, "kubelet"),
		"--config="+c.kubeletConfig,
		"--kubeconfig="+c.Kubeconfig,
		"--root-dir="+c.KubeletDir,
		"--cert-dir="+filepath.Join(c.Dir, "kubelet-pki"),
		"--node-ip="+c.NodeIP,
		"--hostname-override="+NodeName,
		"--v=2",
	)
	if err != nil {
		t.Fatal(err)
	}
}

// StopKubelet stops the kubelet (SIGTERM); pods and containers keep running.
func (c *Cluster) StopKubelet(t *testing.T) {
	t.Helper()
	if err := c.kubelet.Stop(20 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// WaitNodeReady waits until the node is Ready without a NoSchedule taint.
func (c *Cluster) WaitNodeReady(t *testing.T) {
	t.Helper()
	c.Eventually(t, 2*time.Minute, "the node Ready and schedulable", func(ctx context.Context) (bool, error) {
		if c.kubelet.Exited() {
			return false, fmt.Errorf("the kubelet exited: %v", c.kubelet.Err())
		}
		n, err := c.Client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, taint := range n.Spec.Taints {
			if taint.Effect == corev1.TaintEffectNoSchedule {
				return false, nil
			}
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}

// WaitKubeletUp waits until a kubelet started after since has renewed the
// node's lease: it is past its start-up checks (a kubelet that cannot reach
// the runtime at start exits, as it would under systemd) and serving. The
// node's Ready condition alone still shows the previous kubelet's report.
func (c *Cluster) WaitKubeletUp(t *testing.T, since time.Time) {
	t.Helper()
	c.Eventually(t, 2*time.Minute, "the restarted kubelet's lease renewal", func(ctx context.Context) (bool, error) {
		if c.kubelet.Exited() {
			return false, fmt.Errorf("the kubelet exited: %v", c.kubelet.Err())
		}
		lease, err := c.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil || lease.Spec.RenewTime == nil {
			return false, nil
		}
		return lease.Spec.RenewTime.After(since), nil
	})
}

// Eventually polls cond every 200 ms until it is true; it fails the test
// when cond errs or after timeout, logging the cluster's log tails.
func (c *Cluster) Eventually(t *testing.T, timeout time.Duration, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		ok, err := cond(cctx)
		ccancel()
		if err != nil {
			c.dumpLogs(t)
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			c.dumpLogs(t)
			t.Fatalf("waiting for %s: not after %v", what, timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *Cluster) logDir() string         { return filepath.Join(c.Dir, "logs") }
func (c *Cluster) log(name string) string { return filepath.Join(c.logDir(), name+".log") }
func (c *Cluster) stopLogged(t *testing.T, p *kubeapi.Process) {
	if err := p.Stop(20 * time.Second); err != nil {
		t.Errorf("e2e teardown: %v", err)
	}
}

// dumpLogs logs the tails of the kubelet's, scheduler's and controller
// manager's logs.
func (c *Cluster) dumpLogs(t *testing.T) {
	t.Helper()
	for _, name := range []string{"kubelet", "kube-scheduler", "kube-controller-manager"} {
		t.Logf("%s log, last 16 KiB:\n%s", name, kubeapi.Tail(c.log(name), 16<<10))
	}
}

// makeCgroupRoot creates the kubelet's --cgroup-root in every hierarchy (the
// kubelet refuses one that does not exist), with the parent's CPUs and
// memory nodes in cpuset. containerd's harness removes it with everything
// below.
func makeCgroupRoot(cgroup string) error {
	const mount = "/sys/fs/cgroup"
	entries, err := os.ReadDir(mount)
	if err != nil {
		return fmt.Errorf("listing cgroup hierarchies: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(mount, e.Name(), cgroup)
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating cgroup %s: %w", d, err)
		}
		if e.Name() != "cpuset" {
			continue
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			b, err := os.ReadFile(filepath.Join(mount, "cpuset", f))
			if err != nil {
				return fmt.Errorf("reading the root cpuset: %w", err)
			}
			if err := os.WriteFile(filepath.Join(d, f), b, 0o644); err != nil {
				return fmt.Errorf("initializing %s/%s: %w", d, f, err)
			}
		}
	}
	return nil
}

// leftBehind notes whether dir exists now and returns a function that
// removes it (and its parent, if that did not exist either and is empty)
// when it did not.
func leftBehind(dir string) func() error {
	_, err := os.Stat(dir)
	existed := err == nil
	_, err = os.Stat(filepath.Dir(dir))
	parentExisted := err == nil
	return func() error {
		if existed {
			return nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("removing %s: %w", dir, err)
		}
		if !parentExisted {
			if err := os.Remove(filepath.Dir(dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("removing %s: %w", filepath.Dir(dir), err)
			}
		}
		return nil
	}
}
