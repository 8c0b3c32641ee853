package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
)

// TestAvailableCPUs resolves availableCPUs: online (no restriction), a list,
// and the pods' cgroup; the policy's topology keeps only those CPUs, and a
// CPU that is not online is an error naming the field.
func TestAvailableCPUs(t *testing.T) {
	topo := func() *abi.Topology {
		return &abi.Topology{Cpus: []*abi.CPU{{Id: 0}, {Id: 1}, {Id: 2}, {Id: 3}}}
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "cpuset", "kubepods"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "cpuset", "kubepods", "cpuset.cpus"), []byte("1-3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		value   string
		want    []uint32
		wantErr string
	}{
		{config.AvailableOnline, nil, ""},
		{"0,2", []uint32{0, 2}, ""},
		{config.AvailableCgroup, []uint32{1, 2, 3}, ""},
		{"2-5", nil, "availableCPUs: available CPUs 2-5: 4-5 not online"},
	} {
		cfg := config.Default()
		cfg.AvailableCPUs = tt.value
		tp := topo()
		got, err := availableCPUs(cfg, tp, root)
		if tt.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("%s: %v, want %q", tt.value, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, %v; want %v", tt.value, got, err, tt.want)
		}
		if tt.want != nil && len(tp.Cpus) != len(tt.want) {
			t.Errorf("%s: the policy's topology has %d CPUs, want %d", tt.value, len(tp.Cpus), len(tt.want))
		}
	}
}
