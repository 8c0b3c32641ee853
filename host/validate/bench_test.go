package validate_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
)

// BenchmarkUpdatesGroup checks the answer of a create in balloons' default
// balloon on a 4,096-CPU node: 218 containers moving to one ~470-byte CPU
// list, as the agent gets it (one group) and as the agent's client used to
// hand it on (expanded: one update per container, each list parsed again).
func BenchmarkUpdatesGroup(b *testing.B) {
	topo := &abi.Topology{NumaNodes: []*abi.NUMANode{{Id: 0, MemoryBytes: 1 << 30}}}
	for id := range uint32(4096) {
		topo.Cpus = append(topo.Cpus, &abi.CPU{Id: id})
	}
	limits, err := validate.New(topo)
	if err != nil {
		b.Fatal(err)
	}
	cpus := make([]string, 120)
	for i := range cpus {
		cpus[i] = strconv.Itoa(3 * i)
	}
	group := &abi.ContainerUpdate{ContainerId: "c0", CpusetCpus: strings.Join(cpus, ","), CpusetMems: "0"}
	live := map[string]bool{"c0": true}
	for i := 1; i < 218; i++ {
		id := fmt.Sprintf("c%d", i)
		group.AlsoContainerIds = append(group.AlsoContainerIds, id)
		live[id] = true
	}
	grouped := []*abi.ContainerUpdate{group}
	isLive := func(id string) bool { return live[id] }
	b.Run("grouped", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if err := limits.Updates("updates", grouped, isLive); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("expanded", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			us, err := abi.ExpandUpdates(grouped)
			if err != nil {
				b.Fatal(err)
			}
			if err := limits.Updates("updates", us, isLive); err != nil {
				b.Fatal(err)
			}
		}
	})
}
