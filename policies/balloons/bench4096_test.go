package balloons_test

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// transports are the two ways a benchmark runs the policy.
var transports = builds.Transports()

// benchConfig: balloons of up to 8 CPUs for "app", new 2-CPU balloons for
// every "solo" container, a "burst" type sharing its NUMA node's idle CPUs,
// and the default balloon for the rest.
const benchConfig = `
reservedResources: {cpu: 2}
balloonTypes:
- name: app
  namespaces: [app]
  maxCPUs: 8
- name: solo
  namespaces: [solo]
  preferNewBalloons: true
  maxCPUs: 2
- name: burst
  namespaces: [burst]
  maxCPUs: 4
  shareIdleCPUsInSame: numa
`

// live4096 fills the 4,096-CPU machine with n live containers: of every 10,
// seven app containers of 100m to 900m, one solo, one burst and one in the
// default balloon; every 50th in kube-system.
func live4096(b *testing.B, t abi.Transport, n int) *harness {
	h, err := openOn(b, t, "Sparse4096CPU8Socket", benchConfig, nil)
	if err != nil {
		b.Fatal(err)
	}
	h.noCheck = true
	for i, id := range policytest.IDs(n, "live-") {
		s := ctr(id, int64(100+100*(i%9))).In([]string{"app", "app", "app", "solo", "app", "app", "burst", "app", "app", "default"}[i%10])
		if i%50 == 0 {
			s = s.In("kube-system")
		}
		h.Create(s)
	}
	return h
}

// createRemoveCases are BenchmarkCreateRemove4096's containers, one per
// balloon kind.
var createRemoveCases = []struct {
	name string
	s    spec
}{
	{"app", ctr("bench", 1000).In("app")},
	{"solo", ctr("bench", 1500).In("solo")},
	{"burst", ctr("bench", 1000).In("burst")},
	{"default", ctr("bench", 1000)},
}

// BenchmarkCreateRemove4096 times CreateContainer and RemoveContainer
// decisions, natively and through the Wasm module, on Sparse4096CPU8Socket
// (4,080 online CPUs, 16 NUMA nodes) with 2,000 live containers. Each case
// makes a balloon resize: a 1-CPU app container inflates an app balloon
// (its ~10 containers are updated) and its removal deflates it; a solo
// container creates and deletes a balloon; a burst container inflates a
// balloon that shares idle CPUs, changing what every burst balloon of its
// NUMA node shares; a default container resizes the default balloon and
// updates its ~200 containers. It reports the median and the 99th
// percentile of each call, as wall time and as the CPU time of the calling
// thread (create-cpu-, remove-cpu-: the call's own work, which a loaded
// machine does not inflate), and the containers updated per create and
// remove. The calls go through policytest.AgentClient, which keeps grouped
// updates as the agent does.
// Through Wasm, "wasm" does the guest's idle work (its garbage collection,
// policytest.Idle) after each call, untimed and reported apart (idle-), as
// the agent does between decisions; "wasm-busy" never idles, as an agent
// that gets calls back to back.
func BenchmarkCreateRemove4096(b *testing.B) {
	for _, tr := range transports {
		modes := policytest.IdleModes
		if tr.Name == "native" {
			modes = modes[:1]
		}
		for _, mode := range modes {
			for _, bc := range createRemoveCases {
				b.Run(tr.Name+mode+"/"+bc.name, func(b *testing.B) { benchCreateRemove(b, tr.Open(b), bc.s, mode) })
			}
		}
	}
}

func benchCreateRemove(b *testing.B, t abi.Transport, s spec, mode string) {
	live4096(b, t, 2000) // the live containers; the timed calls go through the agent's client
	ctx := context.Background()
	req := s.Request()
	rm := &abi.RemoveContainerRequest{Pod: req.Pod, Container: req.Container}
	client := policytest.AgentClient(t)
	var creates, removes policytest.CallTimes
	var idle policytest.IdleTimes
	updates := 0
	defer policytest.StartTiming(b, t, mode)()
	for range b.N {
		var resp *abi.CreateContainerResponse
		err := creates.Time(b, func() (err error) { resp, err = client.CreateContainer(ctx, req); return err })
		if err != nil {
			b.Fatal(err)
		}
		if resp.Adjustment.CpusetCpus == "" {
			b.Fatal("no cpuset")
		}
		b.StopTimer()
		idle.Idle(b, t, mode)
		b.StartTimer()
		var rresp *abi.RemoveContainerResponse
		if err := removes.Time(b, func() (err error) { rresp, err = client.RemoveContainer(ctx, rm); return err }); err != nil {
			b.Fatal(err)
		}
		updates += abi.CountContainers(resp.Updates) + abi.CountContainers(rresp.Updates)
		b.StopTimer()
		idle.Idle(b, t, mode)
		b.StartTimer()
	}
	b.StopTimer()
	idle.Report(b)
	creates.Report(b, "create-")
	removes.Report(b, "remove-")
	b.ReportMetric(float64(updates)/float64(b.N), "updates/op")
}

// BenchmarkInit4096 times Init on the largest fixture: empty, and restoring
// the journal of 2,000 live containers.
func BenchmarkInit4096(b *testing.B) {
	req := &abi.InitRequest{Config: []byte(benchConfig), NodeName: "n1", Topology: policytest.Machine(b, "Sparse4096CPU8Socket")}
	policytest.BenchInit(b, transports, req, func(b *testing.B, n int) *abi.RestoreState {
		return live4096(b, transports[0].Open(b), n).RestoreState()
	}, 2000)
}
