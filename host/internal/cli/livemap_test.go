package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/cpumap"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// TestLiveMapNote: /debug/cpus' map shows the journal's containers and the
// policy's pools; a refused Pools answer leaves the pools off and says so in
// the map's note (not its title), and a policy without pools gets no note.
func TestLiveMapNote(t *testing.T) {
	sysfs := t.TempDir()
	if err := topologytest.Restore(filepath.Join("..", "..", "topology", "testdata", "captured-vm"), sysfs); err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Discover(sysfs)
	if err != nil {
		t.Fatal(err)
	}
	journal := &abi.RestoreState{
		Pods:       []*abi.PodSandbox{{Id: "p", Name: "web", Namespace: "default"}},
		Containers: []*abi.Container{{Id: "c", PodSandboxId: "p", Name: "nginx", Assignment: &abi.ContainerAdjustment{CpusetCpus: "0"}}},
	}
	refused := fmt.Errorf("policy answer refused: %w", errors.New(`pools[0].cpus: "0-3": 2 is not among the node's online CPUs "0-1"`))
	for _, tt := range []struct {
		name      string
		pools     []resmgr.Pool
		err       error
		wantPools int
		wantNote  string
	}{
		{"pools", []resmgr.Pool{{Name: "shared", CPUs: []uint32{1}}}, nil, 1, ""},
		{"no Pools capability", nil, resmgr.ErrNoPools, 0, ""},
		{"refused answer", nil, refused, 0, "the policy's pools are not shown: " + refused.Error()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := liveMap(topo, journal, tt.pools, tt.err)
			pools, containers := 0, 0
			for _, h := range m.Holders {
				switch h.Kind {
				case cpumap.KindPool:
					pools++
				case cpumap.KindContainer:
					containers++
					if h.CPUs != cpuset.MustParse("0").String() {
						t.Errorf("container drawn on %q, its assignment is 0", h.CPUs)
					}
				}
			}
			if pools != tt.wantPools || containers != 1 {
				t.Errorf("%d pools and %d containers on the map, want %d and 1", pools, containers, tt.wantPools)
			}
			if m.Note != tt.wantNote || m.Title != "CPUs of node "+nodeName() {
				t.Errorf("title %q, note %q; want the node's title and note %q", m.Title, m.Note, tt.wantNote)
			}
		})
	}
}

// TestStatusCommand: `nriwasm status` prints the agent's /debug/cpus map,
// read as JSON (format=json), as text; an agent that is not there is named
// with the address asked.
func TestStatusCommand(t *testing.T) {
	topo, err := topology.Discover(capturedVM(t))
	if err != nil {
		t.Fatal(err)
	}
	journal := &abi.RestoreState{
		Pods:       []*abi.PodSandbox{{Id: "p", Name: "web", Namespace: "default"}},
		Containers: []*abi.Container{{Id: "c", PodSandboxId: "p", Name: "nginx", Assignment: &abi.ContainerAdjustment{CpusetCpus: "1"}}},
	}
	m := liveMap(topo, journal, nil, resmgr.ErrNoPools)
	var want bytes.Buffer
	if err := m.Text(&want, false); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(cpumap.Handler(func(context.Context) (*cpumap.Map, error) { return m, nil }))
	defer srv.Close()
	out, errOut, code := run(t, "status", "--address", strings.TrimPrefix(srv.URL, "http://"))
	if code != 0 || out != want.String() || !strings.Contains(out, "default/web/nginx") {
		t.Fatalf("exit %d, stderr %q; printed\n%s\nwant\n%s", code, errOut, out, want.String())
	}
	addr := freeAddress(t)
	if _, errOut, code := run(t, "status", "--address", addr); code == 0 || !strings.Contains(errOut, "agent at "+addr) {
		t.Fatalf("no agent: exit %d, stderr %q", code, errOut)
	}
}
