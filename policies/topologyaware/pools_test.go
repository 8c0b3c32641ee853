package topologyaware_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestPoolTree checks the tree each machine gets: levels with a single child
// are skipped, CPU-less memory nodes join their closest CPU node's pools.
func TestPoolTree(t *testing.T) {
	tests := []struct {
		machine string
		// want is "name parent cpus/mems" per pool, in id order.
		want []string
	}{
		{"Desktop1Socket", []string{"root - 0-15/0"}},
		{"Server2Socket4NodesInterleaved", []string{
			"root - 0-95/0-3",
			"socket0 0 0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,56,58,60,62,64,66,68,70,72,74,76,78,80,82,84,86,88,90,92,94/0-1",
			"node0 1 0,2,4,6,8,10,12,14,16,18,20,22,48,50,52,54,56,58,60,62,64,66,68,70/0",
			"node1 1 24,26,28,30,32,34,36,38,40,42,44,46,72,74,76,78,80,82,84,86,88,90,92,94/1",
			"socket1 0 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,43,45,47,49,51,53,55,57,59,61,63,65,67,69,71,73,75,77,79,81,83,85,87,89,91,93,95/2-3",
			"node2 4 1,3,5,7,9,11,13,15,17,19,21,23,49,51,53,55,57,59,61,63,65,67,69,71/2",
			"node3 4 25,27,29,31,33,35,37,39,41,43,45,47,73,75,77,79,81,83,85,87,89,91,93,95/3",
		}},
		{"Server4Socket144CPU", []string{
			"root - 0-143/0-7",
			"socket0 0 0-17,72-89/0-1", "socket0/die0 1 0-8,72-80/0", "socket0/die1 1 9-17,81-89/1",
			"socket1 0 18-35,90-107/2-3", "socket1/die0 4 18-26,90-98/2", "socket1/die1 4 27-35,99-107/3",
			"socket2 0 36-53,108-125/4-5", "socket2/die0 7 36-44,108-116/4", "socket2/die1 7 45-53,117-125/5",
			"socket3 0 54-71,126-143/6-7", "socket3/die0 10 54-62,126-134/6", "socket3/die1 10 63-71,135-143/7",
		}},
		{"PMEM112CPUIsolated", []string{"root - 0-111/0-3", "socket0 0 0-27,56-83/0,2", "socket1 0 28-55,84-111/1,3"}},
	}
	for _, tc := range tests {
		t.Run(tc.machine, func(t *testing.T) {
			d := newHarness(t, tc.machine, "").dump()
			var got []string
			for i, p := range d.Pools {
				if p.ID != i {
					t.Errorf("pool %s has id %d at %d", p.Name, p.ID, i)
				}
				parent := "-"
				if p.Parent != nil {
					parent = fmt.Sprint(*p.Parent)
				}
				got = append(got, fmt.Sprintf("%s %s %s/%s", p.Name, parent, p.CPUs, p.Mems))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("pools:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
