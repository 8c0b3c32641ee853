package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"sigs.k8s.io/yaml"

	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// fakeSysEnv names the sysfs tree that the test binary, run again as a child,
// mounts over /sys in its own mount namespace before running the command in
// fakeArgsEnv (one argument a line): a different real machine, as far as the
// command can tell.
const (
	fakeSysEnv  = "NRIWASM_TEST_FAKE_SYS"
	fakeArgsEnv = "NRIWASM_TEST_FAKE_ARGS"
)

// onFakeMachine is the child's side: mount, run, return the exit code.
func onFakeMachine(sys string) int {
	if err := syscall.Mount(sys, "/sys", "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		fmt.Fprintln(os.Stderr, "mount the fake /sys:", err)
		return 2
	}
	return Execute(strings.Split(os.Getenv(fakeArgsEnv), "\n"), os.Stdout, os.Stderr)
}

// runOnMachine runs the command in a child whose /sys is m's tree (in a user
// and mount namespace of its own), with a host name and node name of its own
// in the environment.
func runOnMachine(t *testing.T, m topologytest.Machine, node string, args ...string) string {
	t.Helper()
	sys := t.TempDir()
	if err := m.Write(sys); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeSysEnv+"="+sys, fakeArgsEnv+"="+strings.Join(args, "\n"),
		"NODE_NAME="+node, "HOSTNAME="+node, "TZ=Pacific/Auckland")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s on %s: %v: %s", strings.Join(args, " "), node, err, stderr.String())
	}
	return stdout.String()
}

// TestSimulateIsTheSameOnEveryMachine runs `simulate` without flags on two
// different machines (a 16-CPU desktop and a 144-CPU 4-socket server faked
// as /sys): the outputs are byte-identical, while `--sysfs /sys` shows the
// two machines do differ.
func TestSimulateIsTheSameOnEveryMachine(t *testing.T) {
	for _, policy := range []string{"topology-aware", "balloons"} {
		t.Run(policy, func(t *testing.T) {
			args := []string{"simulate", "--policy", policy, "--native"}
			desktop := runOnMachine(t, topologytest.Desktop1Socket(), "desktop", args...)
			server := runOnMachine(t, topologytest.Server4Socket144CPU(), "server", args...)
			if desktop != server {
				t.Errorf("simulate differs between machines:\n%s\n---\n%s", desktop, server)
			}
			if !strings.Contains(desktop, referenceMachine) {
				t.Errorf("simulate does not name the reference machine:\n%s", desktop)
			}
			live := append(args, "--sysfs", "/sys")
			if a, b := runOnMachine(t, topologytest.Desktop1Socket(), "desktop", live...), runOnMachine(t, topologytest.Server4Socket144CPU(), "server", live...); a == b || !strings.Contains(a, "cpus: 0-15\n") || !strings.Contains(b, "cpus: 0-143\n") {
				t.Errorf("--sysfs /sys does not read each machine's /sys:\n%s\n---\n%s", a, b)
			}
		})
	}
}

// TestSimulateBundledExamplesSucceed runs every built-in policy's bundled
// example on the reference machine: no step fails, the
// policy logs no warning, a claim is prepared on a device the policy
// published, and the output is the golden file's.
func TestSimulateBundledExamplesSucceed(t *testing.T) {
	for _, policy := range []string{"topology-aware", "balloons", "conformance"} {
		t.Run(policy, func(t *testing.T) {
			// Natively: the .wasm gives the same (TestSimulateIsDeterministicAndNativeMatchesWasm),
			// and the golden follows the policy's source, not a build of it.
			out, errOut, code := run(t, "simulate", "--policy", policy, "--native")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var report struct {
				Policy struct{ Warnings []string }
				Steps  []struct {
					Kind      string
					Errors    []any
					Warnings  []string
					Published []json.RawMessage
					Claim     *struct{ Devices []struct{ Device string } }
				}
			}
			if err := yaml.Unmarshal([]byte(out), &report); err != nil {
				t.Fatal(err)
			}
			published, claimed := map[string]bool{}, 0
			if len(report.Policy.Warnings) > 0 {
				t.Errorf("Init warnings: %v", report.Policy.Warnings)
			}
			for i, s := range report.Steps {
				if len(s.Errors) > 0 || len(s.Warnings) > 0 {
					t.Errorf("step %d (%s): errors %v, warnings %v", i, s.Kind, s.Errors, s.Warnings)
				}
				for _, raw := range s.Published {
					// Published as resource.k8s.io/v1 writes a ResourceSlice's spec: it
					// decodes strictly into the API type.
					var slice resourceapi.ResourceSliceSpec
					if err := yaml.UnmarshalStrict(raw, &slice); err != nil || slice.Driver != policy+".nri.io" || slice.Pool.Name != "simulated-node" {
						t.Errorf("step %d: published %s is not a ResourceSlice spec of driver %s.nri.io: %v", i, raw, policy, err)
					}
					for _, d := range slice.Devices {
						published[d.Name] = true
					}
				}
				if s.Claim != nil {
					for _, d := range s.Claim.Devices {
						claimed++
						if !published[d.Device] {
							t.Errorf("step %d: claim on %s, which the policy did not publish (%v)", i, d.Device, published)
						}
					}
				}
			}
			if claimed == 0 {
				t.Errorf("no claim was prepared:\n%s", out)
			}
			golden(t, filepath.Join("testdata", "reference-"+policy+".golden"), out)
		})
	}
}

// TestCheckOnTheReferenceMachine: check without --sysfs names the reference
// machine and places its probe on it.
func TestCheckOnTheReferenceMachine(t *testing.T) {
	out, errOut, code := run(t, "check", "--cache-dir", cacheDir)
	if code != 0 {
		t.Fatalf("check exited %d: %s", code, errOut)
	}
	for _, want := range []string{"node          simulated-node: 32 CPUs, 2 NUMA nodes", "from " + referenceMachine, `probe         CreateContainer default/probe → cpus "`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
