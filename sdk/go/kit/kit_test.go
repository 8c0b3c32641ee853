package kit_test

import (
	"errors"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit"
)

// TestInit: the configuration is decoded, then the topology indexed; a bad
// configuration is refused before the topology is looked at.
func TestInit(t *testing.T) {
	var order []string
	parse := func(b []byte) (string, error) {
		order = append(order, "config")
		if string(b) == "bad" {
			return "", errors.New("bad config")
		}
		return string(b), nil
	}
	index := func(topo *abi.Topology) (int, error) {
		order = append(order, "topology")
		if len(topo.GetCpus()) == 0 {
			return 0, errors.New("no CPUs")
		}
		return len(topo.GetCpus()), nil
	}
	topo := &abi.Topology{Cpus: []*abi.CPU{{Id: 0}, {Id: 1}}}
	cfg, ix, err := kit.Init(&abi.InitRequest{Config: []byte("good"), Topology: topo}, parse, index)
	if err != nil || cfg != "good" || ix != 2 {
		t.Errorf("Init = %q, %d, %v; want good, 2, nil", cfg, ix, err)
	}
	order = nil
	if _, _, err := kit.Init(&abi.InitRequest{Config: []byte("bad")}, parse, index); err == nil || err.Error() != "bad config" || len(order) != 1 {
		t.Errorf("a bad configuration and no topology: %v after %v; want the configuration's error alone", err, order)
	}
	if _, _, err := kit.Init(&abi.InitRequest{Config: []byte("good")}, parse, index); err == nil || err.Error() != "no CPUs" {
		t.Errorf("no topology: %v, want the index's error", err)
	}
}
