//go:build integration

package agent

import (
	"fmt"
	"os"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/integration/containerd"
)

// Main is the TestMain of a package whose tests run the agent:
//
//	func TestMain(m *testing.M) { agent.Main(m, "nriwasm-it-", &binary, nil, nil) }
//
// It builds nriwasm (Build) into a new temporary directory named with
// prefix, sets *binary to it, calls setup with the directory (for more
// things to build or find there; nil for none), runs the tests with run
// (nil: m.Run; kubeapi.Main to share an API server) and exits with their
// code once the directory is removed. A failure before the tests is printed
// and exits 1.
func Main(m *testing.M, prefix string, binary *string, setup func(dir string) error, run func(*testing.M) int) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if *binary, err = Build(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if setup != nil {
			if err := setup(dir); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		if run == nil {
			run = (*testing.M).Run
		}
		return run(m)
	}()
	os.Exit(code)
}

// OnlineCPUs returns the node's online CPUs, failing the test when there are
// fewer than least (a test that tells placements apart needs two).
func OnlineCPUs(t testing.TB, least int) cpuset.Set {
	t.Helper()
	list, err := containerd.OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	online, err := cpuset.Parse(list)
	if err != nil {
		t.Fatalf("online CPUs %q: %v", list, err)
	}
	if online.Size() < least {
		t.Fatalf("online CPUs %q: the test needs at least %d to tell placements apart", list, least)
	}
	return online
}

// Node is a private containerd with the agent registered as its NRI plugin.
type Node struct {
	Containerd *containerd.Containerd
	Agent      *Agent
}

// StartNode starts containerd with co, then the agent with o, its
// NRISocket containerd's, and waits until the agent is ready. Cleanup kills
// the agent, then tears containerd down.
func StartNode(t testing.TB, co containerd.Options, o Options) Node {
	t.Helper()
	c := containerd.Start(t, co)
	o.NRISocket = c.NRISocket
	return Node{Containerd: c, Agent: Start(t, o)}
}
