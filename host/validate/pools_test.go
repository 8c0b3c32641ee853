package validate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
)

func TestPools(t *testing.T) {
	pool := func(name, cpus, shared, mems string, ids ...string) *abi.Pool {
		return &abi.Pool{Name: name, Cpus: cpus, SharedCpus: shared, MemoryNodes: mems, ContainerIds: ids}
	}
	many := make([]*abi.Pool, abi.MaxPools+1)
	for i := range many {
		many[i] = pool(fmt.Sprintf("p%d", i), "0", "", "")
	}
	tests := []struct {
		name      string
		pools     []*abi.Pool
		opts      []validate.Option
		wantField string // "" for valid
	}{
		{"none", nil, nil, ""},
		{"in bounds", []*abi.Pool{pool("root", "0-7", "2-7", "0-1", "c1"), pool("node0", "0-3", "", "0")}, nil, ""},
		{"reserved CPUs outside the available ones", []*abi.Pool{pool("reserved", "0-1", "0-1", "")},
			[]validate.Option{validate.WithAvailableCPUs([]uint32{2, 3})}, ""},
		{"empty name", []*abi.Pool{pool("", "0", "", "")}, nil, "pools[0].name"},
		{"name too long", []*abi.Pool{pool(strings.Repeat("a", abi.MaxPoolName+1), "0", "", "")}, nil, "pools[0].name"},
		{"name with a newline", []*abi.Pool{pool("a\nb", "0", "", "")}, nil, "pools[0].name"},
		{"name not UTF-8", []*abi.Pool{pool("a\xff", "0", "", "")}, nil, "pools[0].name"},
		{"duplicate name", []*abi.Pool{pool("a", "0", "", ""), pool("a", "1", "", "")}, nil, "pools[1].name"},
		{"cpu offline", []*abi.Pool{pool("a", "0-8", "", "")}, nil, "pools[0].cpus"},
		{"cpus not a list", []*abi.Pool{pool("a", "0-", "", "")}, nil, "pools[0].cpus"},
		{"shared CPUs borrowed from outside the pool", []*abi.Pool{pool("a", "0-3", "4-5", "")}, nil, ""},
		{"shared CPU offline", []*abi.Pool{pool("a", "0-3", "7-8", "")}, nil, "pools[0].shared_cpus"},
		{"memoryless node", []*abi.Pool{pool("a", "0", "", "2")}, nil, "pools[0].memory_nodes"},
		{"empty container id", []*abi.Pool{pool("a", "0", "", "", "c1", "")}, nil, "pools[0].container_ids[1]"},
		{"too many pools", many, nil, "pools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mustLimits(t, node(), tt.opts...).Pools(&abi.PoolsResponse{Pools: tt.pools})
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Pools: %v", err)
				}
				return
			}
			var ve *validate.Error
			if !errors.As(err, &ve) || ve.Field != tt.wantField {
				t.Fatalf("Pools = %v, want an error naming %s", err, tt.wantField)
			}
		})
	}
}
