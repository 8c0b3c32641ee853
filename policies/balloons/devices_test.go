package balloons

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// handTopology is a node no fixture describes: six CPUs on one node with
// per-thread L1 instruction caches, per-core L1 data caches, an L2 over
// CPUs 0-3 and another over 4-5, one L3, the caches listed out of sysfs'
// order; a PCI device in a VMD domain (10000) with local CPUs 4-5, one with
// no affinity, and interfaces on each.
func handTopology() *abi.Topology {
	t := &abi.Topology{NumaNodes: []*abi.NUMANode{{Id: 0, MemoryBytes: 1 << 30, Cpus: []uint32{0, 1, 2, 3, 4, 5}}}}
	for id := range uint32(6) {
		t.Cpus = append(t.Cpus, &abi.CPU{Id: id, CoreId: id / 2, ThreadSiblings: []uint32{id &^ 1, id | 1}})
	}
	const (
		data  = abi.CacheType_CACHE_TYPE_DATA
		instr = abi.CacheType_CACHE_TYPE_INSTRUCTION
		uni   = abi.CacheType_CACHE_TYPE_UNIFIED
	)
	for _, c := range []struct {
		level uint32
		typ   abi.CacheType
		cpus  []uint32
	}{
		{3, uni, []uint32{0, 1, 2, 3, 4, 5}},
		{2, uni, []uint32{4, 5}},
		{1, instr, []uint32{5}}, {1, instr, []uint32{4}}, {1, instr, []uint32{3}},
		{1, instr, []uint32{2}}, {1, instr, []uint32{1}}, {1, instr, []uint32{0}},
		{2, uni, []uint32{0, 1, 2, 3}},
		{1, data, []uint32{4, 5}}, {1, data, []uint32{2, 3}}, {1, data, []uint32{0, 1}},
	} {
		t.Caches = append(t.Caches, &abi.Cache{Id: uint32(len(t.Caches)), Level: c.level, Type: c.typ, Cpus: c.cpus})
	}
	t.PciDevices = []*abi.PCIDevice{
		{Address: "10000:e1:00.0", LocalCpus: []uint32{4, 5}},
		{Address: "0000:00:1f.0"},
	}
	t.NetworkInterfaces = []*abi.NetworkInterface{
		{Name: "vmdnic", PciAddress: "10000:e1:00.0"},
		{Name: "lo", Virtual: true},
	}
	return t
}

// TestParseDevice: each accepted form reads as its device; everything else
// is refused with a reason.
func TestParseDevice(t *testing.T) {
	for _, tc := range []struct {
		path string
		want device
		err  string // a refusal's message part; "" for accepted
	}{
		{"/sys/class/net/eth0", device{kind: devNet, name: "eth0"}, ""},
		{"/sys/class/net/eth0/", device{kind: devNet, name: "eth0"}, ""},
		{"/sys/bus/pci/devices/0000:3b:00.0", device{kind: devPCI, name: "0000:3b:00.0"}, ""},
		{"/sys/devices/system/node/node3", device{kind: devNode, id: 3}, ""},
		{"/sys/devices/system/cpu/cpu17", device{kind: devCPU, id: 17}, ""},
		{"/sys/devices/system/cpu/cpu17/cache/index3", device{kind: devCache, id: 17, index: 3}, ""},
		{"/sys/devices/system/cpu/cpu0/cache/index0", device{kind: devCache, id: 0, index: 0}, ""},
		{"/sys/devices/pci0000:00/0000:00:1f.6", device{kind: devPCI, name: "0000:00:1f.6"}, ""},
		{"/sys/devices/pci0000:00/0000:00:1c.0/0000:3b:00.0", device{kind: devPCI, name: "0000:3b:00.0"}, ""},
		{"/sys/devices/pci0000:00/0000:00:1c.0/0000:3b:00.0/net/eth0", device{kind: devPCI, name: "0000:3b:00.0"}, ""},
		{"/sys/devices/pci0000:00/0000:00:03.0/virtio0/net/eth0", device{kind: devPCI, name: "0000:00:03.0"}, ""},
		{"/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0/nvme/nvme0",
			device{kind: devPCI, name: "10000:e1:00.0"}, ""},

		{"podresourceapi:nvidia.com/gpu", device{}, "not supported: the ABI does not carry pod-resources assignments"},
		{"sys/class/net/eth0", device{}, "relative path"},
		{"eth0", device{}, "relative path"},
		{"", device{}, "relative path"},
		{"/sys/class/net/../net/eth0", device{}, "clean path"},
		{"/sys//class/net/eth0", device{}, "clean path"},
		{"/sys/class/net", device{}, "want one of"},
		{"/sys/class/net/eth0/device", device{}, "want one of"},
		{"/sys/bus/pci/devices/eth0", device{}, "want one of"},
		{"/sys/bus/pci/devices/0000:3B:00.0", device{}, "want one of"},
		{"/sys/bus/pci/devices/0000:3b:00.8", device{}, "want one of"},
		{"/sys/devices/system/node/nodeX", device{}, "want one of"},
		{"/sys/devices/system/cpu/cpu-1", device{}, "want one of"},
		{"/sys/devices/system/cpu/cpu1/topology", device{}, "want one of"},
		{"/sys/devices/system/cpu/cpu1/cache", device{}, "want one of"},
		{"/sys/devices/system/cpu/cpu1/cache/index", device{}, "want one of"},
		{"/sys/devices/system/cpu/cpu1/cache/index0/level", device{}, "want one of"},
		{"/sys/devices/system/cpu/cpux/cache/index0", device{}, "want one of"},
		{"/sys/devices/pci0000:00", device{}, "want one of"},
		{"/sys/devices/pci0000:00/power", device{}, "want one of"},
		{"/sys/devices/platform/serial8250/0000:00:1f.6", device{}, "want one of"},
		{"/dev/nvidia0", device{}, "want one of"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, err := parseDevice(tc.path)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err == "" && got != tc.want:
				t.Fatalf("got %+v, want %+v", got, tc.want)
			case tc.err != "" && err == nil:
				t.Fatalf("accepted as %+v, want a refusal with %q", got, tc.err)
			case tc.err != "" && !strings.Contains(err.Error(), tc.err):
				t.Fatalf("refused with %q, want %q in it", err, tc.err)
			case tc.err != "" && !strings.Contains(err.Error(), devicePaths) && !strings.HasPrefix(tc.path, "podresourceapi:"):
				t.Fatalf("refused with %q: does not list the accepted forms", err)
			}
		})
	}
}

// TestDeviceCPUs: every form resolves to the CPUs close to the device on
// the fixture machines and the hand-built topology; a device the node lacks
// is not found.
func TestDeviceCPUs(t *testing.T) {
	topos := map[string]*abi.Topology{"hand": handTopology()}
	for _, name := range []string{
		// 8 cores, cpuN and cpuN+8 siblings, one L3; NIC eno1 at
		// 0000:00:1f.6 (no NUMA affinity: every CPU local).
		"Desktop1Socket",
		// CPUs alternate sockets: node 0 is the even CPUs 0-22 and
		// 48-70, node 2 the odd 1-23 and 49-71; ens1f0 (0000:17:00.0
		// below root 0000:16:02.0) on node 0, a GPU (0000:b2:00.0 below
		// 0000:b0:04.0) on node 2; one L3 per node.
		"Server2Socket4NodesInterleaved",
		// 8 nodes of 9 cores: node n has CPUs 9n…9n+8 and 72+9n…;
		// ens5f0 (0000:5e:00.0) on node 1.
		"Server4Socket144CPU",
		// 6 P cores (cpu0-11, siblings 2k, 2k+1) with their own L2, 8 E
		// cores (cpu12-19) sharing an L2 per 4, one L3.
		"HybridLaptop",
	} {
		topos[name] = policytest.Machine(t, name)
	}
	for _, tc := range []struct {
		machine, path string
		want          string // the CPUs; "-" when the node has no such device
	}{
		{"Desktop1Socket", "/sys/devices/system/cpu/cpu3/cache/index0", "3,11"},
		{"Desktop1Socket", "/sys/devices/system/cpu/cpu3/cache/index1", "3,11"},
		{"Desktop1Socket", "/sys/devices/system/cpu/cpu11/cache/index2", "3,11"},
		{"Desktop1Socket", "/sys/devices/system/cpu/cpu3/cache/index3", "0-15"},
		{"Desktop1Socket", "/sys/devices/system/cpu/cpu3/cache/index4", "-"},
		{"Desktop1Socket", "/sys/devices/system/cpu/cpu16/cache/index0", "-"},
		{"Desktop1Socket", "/sys/devices/system/cpu/cpu5", ""},
		{"Desktop1Socket", "/sys/devices/system/cpu/cpu16", "-"},
		{"Desktop1Socket", "/sys/devices/system/node/node0", "0-15"},
		{"Desktop1Socket", "/sys/devices/system/node/node1", "-"},
		{"Desktop1Socket", "/sys/class/net/eno1", "0-15"},
		{"Desktop1Socket", "/sys/class/net/eth9", "-"},
		{"Desktop1Socket", "/sys/class/net/lo", ""},
		{"Desktop1Socket", "/sys/bus/pci/devices/0000:00:1f.6", "0-15"},
		{"Desktop1Socket", "/sys/devices/pci0000:00/0000:00:1f.6/net/eno1", "0-15"},
		{"Desktop1Socket", "/sys/devices/pci0000:00/0000:00:1d.0/0000:01:00.0/nvme/nvme0", "0-15"},
		{"Desktop1Socket", "/sys/devices/pci0000:00/0000:00:1d.0/0000:02:00.0", "-"},

		{"Server2Socket4NodesInterleaved", "/sys/devices/system/cpu/cpu1/cache/index3", "1-23:2,49-71:2"},
		{"Server2Socket4NodesInterleaved", "/sys/devices/system/cpu/cpu50/cache/index2", "2,50"},
		{"Server2Socket4NodesInterleaved", "/sys/devices/system/cpu/cpu50/cache/index0", "2,50"},
		{"Server2Socket4NodesInterleaved", "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/net/ens1f0", "0-22:2,48-70:2"},
		{"Server2Socket4NodesInterleaved", "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.1", "0-22:2,48-70:2"},
		{"Server2Socket4NodesInterleaved", "/sys/devices/pci0000:b0/0000:b0:04.0/0000:b2:00.0", "1-23:2,49-71:2"},
		{"Server2Socket4NodesInterleaved", "/sys/bus/pci/devices/0000:b2:00.0", "1-23:2,49-71:2"},
		{"Server2Socket4NodesInterleaved", "/sys/devices/pci0000:b0/0000:b0:04.0", "1-23:2,49-71:2"},
		{"Server2Socket4NodesInterleaved", "/sys/class/net/ens2f0", "1-23:2,49-71:2"},

		{"Server4Socket144CPU", "/sys/devices/system/cpu/cpu100/cache/index3", "27-35,99-107"},
		{"Server4Socket144CPU", "/sys/devices/system/cpu/cpu5/cache/index2", "5,77"},
		{"Server4Socket144CPU", "/sys/devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0/net/ens5f0", "9-17,81-89"},
		{"Server4Socket144CPU", "/sys/class/net/ens5f0", "9-17,81-89"},
		{"Server4Socket144CPU", "/sys/devices/system/node/node7", "63-71,135-143"},

		{"HybridLaptop", "/sys/devices/system/cpu/cpu13/cache/index2", "12-15"},
		{"HybridLaptop", "/sys/devices/system/cpu/cpu19/cache/index2", "16-19"},
		{"HybridLaptop", "/sys/devices/system/cpu/cpu13/cache/index0", "13"},
		{"HybridLaptop", "/sys/devices/system/cpu/cpu1/cache/index2", "0-1"},
		{"HybridLaptop", "/sys/devices/system/cpu/cpu1/cache/index3", "0-19"},
		{"HybridLaptop", "/sys/devices/pci0000:00/0000:00:03.0/virtio1/net/eth0", "0-19"},

		{"hand", "/sys/devices/system/cpu/cpu1/cache/index0", "0-1"},
		{"hand", "/sys/devices/system/cpu/cpu1/cache/index1", "1"},
		{"hand", "/sys/devices/system/cpu/cpu1/cache/index2", "0-3"},
		{"hand", "/sys/devices/system/cpu/cpu1/cache/index3", "0-5"},
		{"hand", "/sys/devices/system/cpu/cpu1/cache/index4", "-"},
		{"hand", "/sys/devices/system/cpu/cpu4/cache/index1", "4"},
		{"hand", "/sys/devices/system/cpu/cpu4/cache/index2", "4-5"},
		{"hand", "/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0/nvme/nvme0", "4-5"},
		{"hand", "/sys/class/net/vmdnic", "4-5"},
		{"hand", "/sys/devices/pci0000:00/0000:00:1f.0", ""},
		{"hand", "/sys/class/net/lo", ""},
	} {
		t.Run(tc.machine+tc.path, func(t *testing.T) {
			got, found := deviceCPUsOn(t, topos[tc.machine], tc.path)
			switch {
			case tc.want == "-" && found:
				t.Fatalf("found with CPUs %q; want no such device", got)
			case tc.want == "-":
			case !found:
				t.Fatalf("not found; want CPUs %s", tc.want)
			case !got.Equal(wantCPUs(t, tc.want)):
				t.Fatalf("CPUs %q, want %s", got, tc.want)
			}
		})
	}
}

// wantCPUs reads a CPU list whose ranges may have a stride ("1-23:2" is
// the odd CPUs 1-23).
func wantCPUs(t *testing.T, s string) cpuset.Set {
	t.Helper()
	var ids []uint32
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		r, stride, _ := strings.Cut(part, ":")
		step := 1
		if stride != "" {
			var err error
			if step, err = strconv.Atoi(stride); err != nil || step < 1 {
				t.Fatalf("bad stride in %q", s)
			}
		}
		set, err := cpuset.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		all := set.Sorted()
		for id := all[0]; id <= all[len(all)-1]; id += uint32(step) {
			ids = append(ids, id)
		}
	}
	return cpuset.New(ids...)
}

// TestPreferCloseToDevicesRefused: ParseConfig refuses what parseDevice
// refuses, naming the entry's path.
func TestPreferCloseToDevicesRefused(t *testing.T) {
	for _, tc := range []struct{ dev, field, msg string }{
		{"podresourceapi:nvidia.com/gpu", "config.balloonTypes[1].preferCloseToDevices[1]", "not supported: the ABI does not carry pod-resources assignments"},
		{"class/net/eth0", "config.balloonTypes[1].preferCloseToDevices[1]", "relative path"},
		{"/sys/devices/system/cpu/cpu0/cache/index0/size", "config.balloonTypes[1].preferCloseToDevices[1]", "/sys/devices/system/cpu/cpuN/cache/indexM"},
		{"/sys/devices/pci0000:00/firmware_node", "config.balloonTypes[1].preferCloseToDevices[1]", "/sys/devices/pciDDDD:BB/.../ADDR"},
	} {
		t.Run(tc.dev, func(t *testing.T) {
			cfg := "balloonTypes:\n- name: a\n- name: b\n  preferCloseToDevices: [/sys/class/net/eth0, " + tc.dev + "]\n"
			_, err := ParseConfig([]byte(cfg))
			var pe *abi.PolicyError
			if !errors.As(err, &pe) || pe.Code != abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || pe.Field != tc.field {
				t.Fatalf("error %v, want INVALID_ARGUMENT on %s", err, tc.field)
			}
			if !strings.Contains(pe.Message, tc.msg) {
				t.Fatalf("message %q, want %q in it", pe.Message, tc.msg)
			}
		})
	}
}

// logRecorder records the policy log's messages (natively, log/slog's
// default logger).
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Level.String()+" "+rec.Message)
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

// recordLog points log/slog's default logger at a recorder for the test.
func recordLog(t *testing.T) *logRecorder {
	prev := slog.Default()
	r := &logRecorder{}
	slog.SetDefault(slog.New(r))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return r
}

// TestMissingDeviceIgnored: a well-formed device the node lacks, one with
// no available CPU close to it, or a CPU's own directory (where nri-plugins
// reads no CPUs), is logged naming the type and the entry and is no
// preference; the type's other devices still are.
func TestMissingDeviceIgnored(t *testing.T) {
	ix, err := newTopoIndex(handTopology())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig([]byte(`
balloonTypes:
- name: near
  preferCloseToDevices:
  - /sys/class/net/eth9
  - /sys/devices/system/cpu/cpu4/cache/index2
  - /sys/devices/system/cpu/cpu0/cache/index7
  - /sys/devices/pci0000:00/0000:00:1f.0
  - /sys/devices/pci0000:00/0000:00:1c.0/0000:3b:00.0/net/eth0
  - /sys/devices/system/cpu/cpu5
`))
	if err != nil {
		t.Fatal(err)
	}
	rec := recordLog(t)
	s, err := newState(cfg, ix, "")
	if err != nil {
		t.Fatal(err)
	}
	if p := s.byName["near"].opts.prefer; len(p) != 1 || p[0].String() != "4-5" {
		t.Errorf("preferred %v, want only the L2 of cpu4 (4-5)", p)
	}
	if a := s.byName["default"].opts.avoid; len(a) != 1 || a[0].String() != "4-5" {
		t.Errorf("default avoids %v, want the one resolved device's CPUs 4-5", a)
	}
	want := []string{
		`WARN balloon type "near": config.balloonTypes[0].preferCloseToDevices[0] "/sys/class/net/eth9": the node has no such device; ignored`,
		`WARN balloon type "near": config.balloonTypes[0].preferCloseToDevices[2] "/sys/devices/system/cpu/cpu0/cache/index7": the node has no such device; ignored`,
		`WARN balloon type "near": config.balloonTypes[0].preferCloseToDevices[3] "/sys/devices/pci0000:00/0000:00:1f.0": no available CPU is close to it; ignored`,
		`WARN balloon type "near": config.balloonTypes[0].preferCloseToDevices[4] "/sys/devices/pci0000:00/0000:00:1c.0/0000:3b:00.0/net/eth0": the node has no such device; ignored`,
		`WARN balloon type "near": config.balloonTypes[0].preferCloseToDevices[5] "/sys/devices/system/cpu/cpu5": nri-plugins finds no CPUs close to a CPU's own directory; ignored, as there (its cache/index0 names its core)`,
	}
	if strings.Join(rec.msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged\n%s\nwant\n%s", strings.Join(rec.msgs, "\n"), strings.Join(want, "\n"))
	}
}

// TestFarFromOrder: each type avoids, in order, the isolated CPUs, then
// every set some type prefers (the reserved cpuset, devices, isolated
// CPUs), in the order of the types and their preferences, each once, but
// those it prefers itself: nri-plugins' fillFarFromDevices. Types with
// devices, and reserved, avoid the others' too.
func TestFarFromOrder(t *testing.T) {
	ix, err := newTopoIndex(policytest.Isolate(policytest.Machine(t, "N4C16"), cpuset.MustParse("14-15")))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig([]byte(`
reservedResources: {cpu: "cpuset:0"}
balloonTypes:
- name: a
  preferCloseToDevices: [/sys/devices/system/node/node1]
  preferIsolCpus: true
- name: b
  preferCloseToDevices: [/sys/devices/system/node/node2, /sys/devices/system/node/node1]
- name: c
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := newState(cfg, ix, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"reserved": "14-15 4-7 8-11",
		"a":        "0 8-11",
		"b":        "14-15 0",
		"c":        "14-15 0 4-7 8-11",
		"default":  "14-15 0 4-7 8-11",
	} {
		var got []string
		for _, set := range s.byName[name].opts.avoid {
			got = append(got, set.String())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s avoids %q in turn; want %q", name, got, want)
		}
	}
}

// deviceCPUsOn is the CPUs a preferCloseToDevices path names on topo, and
// whether topo has the device.
func deviceCPUsOn(t *testing.T, topo *abi.Topology, path string) (cpuset.Set, bool) {
	t.Helper()
	ix, err := newTopoIndex(topo)
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseDevice(path)
	if err != nil {
		t.Fatal(err)
	}
	return ix.deviceCPUs(d)
}
