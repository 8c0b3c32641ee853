package topologyaware_test

import (
	"context"
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// transports are the two ways a benchmark runs the policy.
var transports = builds.Transports()

// live4096 fills the 4,096-CPU machine with n live containers: Burstable
// 100m to 900m, and every 25th a Guaranteed 1 or 2 exclusive CPUs.
func live4096(b *testing.B, t abi.Transport, n int) *harness {
	h, err := openOn(b, t, "Sparse4096CPU8Socket", "", nil)
	if err != nil {
		b.Fatal(err)
	}
	for i, id := range policytest.IDs(n, "live-") {
		s := burstable(id, int64(100+100*(i%9)))
		if i%25 == 0 {
			s = guaranteed(id, int64(1000+1000*(i/25%2)))
		}
		h.Create(s)
	}
	return h
}

// BenchmarkCreateContainer4096 times CreateContainer decisions, natively
// and through the Wasm module, on Sparse4096CPU8Socket (4,080 online CPUs,
// 16 NUMA nodes) with 2,000 live containers. Each new container is removed
// again, untimed, so the state stays the same size. It reports the median
// and the 99th percentile of the per-call times, as wall time and as the CPU
// time of the calling thread (cpu-: the call's own work, which a loaded
// machine does not inflate), and the containers updated per call. The calls
// go through policytest.AgentClient, which keeps grouped updates as the
// agent does. Through Wasm, "wasm" does the guest's idle work
// (its garbage collection, policytest.Idle) after each iteration, untimed
// and reported apart (idle-), as the agent does between decisions;
// "wasm-busy" never idles, as an agent that gets calls back to back.
func BenchmarkCreateContainer4096(b *testing.B) { benchCreate(b, []int{2000}) }

// BenchmarkCreateContainer4096Live shows how a decision's cost follows the
// number of live containers: it grows only with the members of the pools
// whose shared CPUs the decision changes (they get updates), about 1 in 16
// of the live shared containers on this machine.
func BenchmarkCreateContainer4096Live(b *testing.B) { benchCreate(b, []int{0, 500, 2000, 4000}) }

func benchCreate(b *testing.B, lives []int) {
	for _, tr := range transports {
		for _, bc := range []struct {
			name string
			s    spec
		}{
			{"shared", burstable("bench", 300)},
			{"exclusive", guaranteed("bench", 2000)},
			{"mixed", guaranteed("bench", 1500)},
		} {
			for _, mode := range idleModes(tr) {
				for _, live := range lives {
					name := tr.Name + mode + "/" + bc.name
					if len(lives) > 1 {
						name += fmt.Sprintf("/live=%d", live)
					}
					b.Run(name, func(b *testing.B) { benchCreateOne(b, tr.Open(b), live, bc.s, mode) })
				}
			}
		}
	}
}

// idleModes are the policytest.IdleModes a transport runs in: both through
// Wasm, the first natively (which has no idle work).
func idleModes(tr policytest.Transport) []string {
	if tr.Name == "native" {
		return policytest.IdleModes[:1]
	}
	return policytest.IdleModes
}

func benchCreateOne(b *testing.B, t abi.Transport, live int, s spec, mode string) {
	live4096(b, t, live) // the live containers; the timed calls go through the agent's client
	ctx := context.Background()
	req := s.Request()
	rm := &abi.RemoveContainerRequest{Pod: req.Pod, Container: req.Container}
	client := policytest.AgentClient(t)
	var calls policytest.CallTimes
	var idle policytest.IdleTimes
	updates := 0
	defer policytest.StartTiming(b, t, mode)()
	for range b.N {
		var resp *abi.CreateContainerResponse
		err := calls.Time(b, func() (err error) { resp, err = client.CreateContainer(ctx, req); return err })
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		updates += abi.CountContainers(resp.Updates)
		if resp.Adjustment.CpusetCpus == "" {
			b.Fatal("no cpuset")
		}
		if _, err := client.RemoveContainer(ctx, rm); err != nil {
			b.Fatal(err)
		}
		idle.Idle(b, t, mode)
		b.StartTimer()
	}
	calls.Report(b, "")
	idle.Report(b)
	b.ReportMetric(float64(updates)/float64(b.N), "updates/op")
}

// BenchmarkInit4096 times Init on the largest fixture: empty, and restoring
// the journal of 2,000 live containers.
func BenchmarkInit4096(b *testing.B) {
	req := &abi.InitRequest{NodeName: "n1", Topology: policytest.Machine(b, "Sparse4096CPU8Socket")}
	policytest.BenchInit(b, transports, req, func(b *testing.B, n int) *abi.RestoreState {
		return live4096(b, transports[0].Open(b), n).RestoreState()
	}, 2000)
}
