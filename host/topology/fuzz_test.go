package topology

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// fuzzedFiles are the sysfs files FuzzDiscover overwrites, relative to the sysfs root.
var fuzzedFiles = []string{
	"devices/system/cpu/online",
	"devices/system/node/node0/meminfo",
	"devices/system/node/node0/cpulist",
	"devices/system/cpu/cpu1/topology/core_id",
}

// FuzzDiscover reads a captured node whose CPU list, NUMA meminfo, node CPU
// list and core id hold fuzzed bytes: Discover must fail or answer, never
// panic.
func FuzzDiscover(f *testing.F) {
	f.Add([]byte("0-1\n"), []byte("Node 0 MemTotal:       4009912 kB\n"), []byte("0-1\n"), []byte("1\n"))
	f.Add([]byte("0-4294967295"), []byte("Node 0 MemTotal: 99999999999999999999 kB"), []byte(""), []byte("-1"))
	root := f.TempDir()
	if err := topologytest.Restore(filepath.Join("testdata", "captured-vm"), root); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, online, meminfo, nodeCPUs, coreID []byte) {
		for i, data := range [][]byte{online, meminfo, nodeCPUs, coreID} {
			if err := os.WriteFile(filepath.Join(root, fuzzedFiles[i]), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, _ = Discover(root, WithAddressLookup(func(string) ([]string, error) { return nil, nil }))
	})
}

// FuzzParseSize: cache sizes ("32K", "1M") never panic.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"32K", "1M", "0K", "18446744073709551615K", "K", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseSize(s)
	})
}
