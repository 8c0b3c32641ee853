package topologyaware_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
)

// captureWarnings sends the policy's native log to a buffer for the test.
func captureWarnings(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// TestHelmChartConfigStarts: the configuration nri-plugins' Helm chart
// writes starts, with a warning for each field that is ignored.
func TestHelmChartConfigStarts(t *testing.T) {
	raw, err := os.ReadFile("testdata/nri-plugins-helm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	log := captureWarnings(t)
	cfg, err := topologyaware.ParseConfig(raw)
	if err != nil {
		t.Fatalf("ParseConfig(chart config) = %v", err)
	}
	if cfg.ReservedCPU.String() != "750m" || !cfg.PinCPU || !cfg.PinMemory || !cfg.PreferIsolatedCPUs || cfg.UnlimitedBurstable != "package" {
		t.Errorf("config = %+v", cfg)
	}
	for _, f := range []string{"agent", "control", "controllableInterrupts", "instrumentation", "log"} {
		if !strings.Contains(log.String(), "config."+f+": ignored: ") {
			t.Errorf("no warning for %s in the log:\n%s", f, log)
		}
	}
	for _, f := range []string{"colocatePods", "defaultCPUPriority", "unlimitedBurstable", "pinCPU"} {
		if strings.Contains(log.String(), "config."+f+":") {
			t.Errorf("a warning for %s, which is honoured:\n%s", f, log)
		}
	}
	newHarness(t, "Server2Socket4NodesInterleaved", string(raw)).Create(guaranteed("g", 2000))
}

// TestRefusedFieldsInOneError: every field whose value cannot be honoured
// is named in the one error Init answers.
func TestRefusedFieldsInOneError(t *testing.T) {
	config := "schedulingClasses: [{name: x}]\nsharedPoolCPUClass: turbo\ncpuClasses: [{name: slow}]\nreservedResources: {cpu: 1, memory: 1G}\nunlimitedBurstable: l2cache\n"
	_, err := tryHarness(t, "Desktop1Socket", config, nil)
	pe, ok := errors.AsType[*abi.PolicyError](err)
	if !ok || pe.Code != abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || pe.Field != "config.cpuClasses" {
		t.Fatalf("Init = %v, want INVALID_ARGUMENT at config.cpuClasses", err)
	}
	for _, f := range []string{"config.schedulingClasses:", "config.sharedPoolCPUClass:", "config.reservedResources.memory:", "config.unlimitedBurstable:", "and 4 more"} {
		if !strings.Contains(pe.Message, f) {
			t.Errorf("error %q does not name %s", pe.Message, f)
		}
	}
}

// TestSharedPoolByCount: shared containers go to the pool with the fewest
// containers, then the most free capacity (nri-plugins' compareScores), not
// to the one with the most free capacity.
func TestSharedPoolByCount(t *testing.T) {
	h := newHarness(t, "Server2Socket4NodesInterleaved", "")
	mems := func(id string) string { return h.Containers[id].GetAssignment().GetCpusetMems() }
	h.Create(burstable("big", 10000).Limited(10000))
	for _, id := range []string{"b", "c", "d", "e", "f", "g"} {
		h.Create(burstable(id, 100).Limited(100))
	}
	got := []string{mems("big"), mems("b"), mems("c"), mems("d"), mems("e"), mems("f"), mems("g")}
	// node0 holds the reserved CPU: one CPU less for shared containers.
	if want := []string{"1", "2", "3", "0", "2", "3", "0"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("mems %v, want %v", got, want)
	}
	// node1 holds one container but the least free capacity: it is chosen.
	h.Create(burstable("h", 100).Limited(100))
	if got := mems("h"); got != "1" {
		t.Errorf("h got mems %s, want 1 (the pool with the fewest containers)", got)
	}
}

// TestUnlimitedBurstable: a Burstable container without a CPU limit goes to
// a pool at the unlimitedBurstable level (default package), one with a limit
// to the deepest pool. Of pools at that level, the one with more free
// capacity wins: socket1, as socket0 holds the reserved CPU.
func TestUnlimitedBurstable(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"", "2-3"},
		{"unlimitedBurstable: package", "2-3"},
		{"unlimitedBurstable: numa", "1"},
		{"unlimitedBurstable: system", "0-3"},
		{"unlimitedBurstable: die", "2-3"}, // no die pools: the package ones
	} {
		h := newHarness(t, "Server2Socket4NodesInterleaved", tc.config)
		h.Create(burstable("unlimited", 500))
		h.Create(burstable("limited", 500).Limited(1000))
		if got := h.Containers["unlimited"].GetAssignment().GetCpusetMems(); got != tc.want {
			t.Errorf("%q: unlimited burstable got mems %s, want %s", tc.config, got, tc.want)
		}
		if got := h.Containers["limited"].GetAssignment().GetCpusetMems(); len(got) != 1 {
			t.Errorf("%q: limited burstable got mems %s, want one node", tc.config, got)
		}
	}
}
