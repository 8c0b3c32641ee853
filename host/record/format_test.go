package record

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	recordv1 "github.com/nriwasm/nriwasm/host/record/v1"
)

// TestFormatRoundTrip: a file read back encodes to frames that read back the
// same, header and exchanges, whether it was written before the format moved
// to generated messages (testdata) or after.
func TestFormatRoundTrip(t *testing.T) {
	paths, err := filepath.Glob("testdata/written-by-*/record-*.nrr")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no record under testdata: %v", err)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	old, err := parseFile(paths[0], data)
	if err != nil {
		t.Fatal(err)
	}
	if old.Torn || len(old.Exchanges) != 7 {
		t.Fatalf("%s: torn %v, %d exchanges; want 7, whole", paths[0], old.Torn, len(old.Exchanges))
	}
	again := encodeFile(t, old)
	back, err := parseFile("again.nrr", again)
	if err != nil {
		t.Fatal(err)
	}
	if !sameHeader(old.Header, back.Header) {
		t.Fatalf("header read back %+v, first read %+v", back.Header, old.Header)
	}
	for i, x := range old.Exchanges {
		y := back.Exchanges[i]
		if x.Seq != y.Seq || x.Method != y.Method || string(x.Request) != string(y.Request) || !x.Response.EqualVT(y.Response) || x.Error != y.Error {
			t.Fatalf("exchange %d read back %+v, first read %+v", i, y, x)
		}
	}
}

func sameHeader(a, b *Header) bool {
	return a.NodeName == b.NodeName && a.Policy == b.Policy && string(a.Config) == string(b.Config) &&
		a.DriverName == b.DriverName && a.Seq == b.Seq && a.Topology.EqualVT(b.Topology) && a.Restore.EqualVT(b.Restore)
}

// TestFormatVersion: a header of another format version is refused, naming
// both versions; one without a version (not a record header) as version 0.
func TestFormatVersion(t *testing.T) {
	for _, v := range []uint32{0, Version + 1} {
		b, err := encodeFrame(&recordv1.Frame{Frame: &recordv1.Frame_Header{Header: &recordv1.Header{
			Version: v, NodeName: "node-1", Topology: &abi.Topology{},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseFile("new.nrr", b)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d,", v)) || !strings.Contains(err.Error(), "reads version 1") {
			t.Fatalf("version %d: error %v, want the version refused", v, err)
		}
	}
}
