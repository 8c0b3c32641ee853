package state

import (
	_ "embed"
	"flag"
	"os"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite testdata/checkpoint-v1.golden")

// goldenV1 is a version-1 checkpoint of goldenJournal. Rebuild it (only when the
// fixture changes; a format change needs a new version and a new file) with
//
//	go test ./host/state -run TestGolden -update
//
//go:embed testdata/checkpoint-v1.golden
var goldenV1 []byte

// goldenJournal covers every kind of record. Its maps hold one entry each:
// Marshal writes map entries in Go's random map order (see RATIONALE.md).
func goldenJournal() *Journal {
	one := map[string]string{"app": "web"}
	j := New()
	for i := range 2 {
		p := pod(i)
		p.Labels, p.Annotations = one, one
		j.AddPod(p)
		j.AddClaim(claim(i))
	}
	for i := range 4 {
		c, a := container(i), adjustment(i)
		c.Labels, c.Annotations, a.Annotations = one, one, one
		if i == 3 {
			a = nil // started unpinned after a policy failure
		}
		j.AddContainer(c, a)
	}
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: "ctr-0002", CpusetCpus: "8-15", RdtClass: "gold"})
	return j
}

// TestGolden pins the on-disk format: this build writes exactly the committed
// bytes, and reads them back. Every later build must keep reading them.
func TestGolden(t *testing.T) {
	data, err := Marshal(nil, goldenJournal())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/checkpoint-v1.golden", data, 0o644); err != nil {
			t.Fatal(err)
		}
		goldenV1 = data
	}
	t.Run("write", func(t *testing.T) {
		if string(data) != string(goldenV1) {
			t.Fatalf("Marshal wrote %d bytes that differ from testdata/checkpoint-v1.golden (%d bytes); "+
				"a format change needs a new Version", len(data), len(goldenV1))
		}
	})
	t.Run("read", func(t *testing.T) {
		j, err := Unmarshal(goldenV1)
		if err != nil {
			t.Fatal(err)
		}
		testkit.EqualProto(t, j.RestoreState(), goldenJournal().RestoreState())
	})
	t.Run("header", func(t *testing.T) {
		testkit.Equal(t, string(goldenV1[:12]), "NRIWASM\x00\x00\x00\x00\x01")
	})
}
