package main

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/native"
)

// TestPinAll runs the policy natively, through the same encode and decode
// path as in Wasm.
func TestPinAll(t *testing.T) {
	runner, err := native.New(&PinAll{})
	if err != nil {
		t.Fatal(err)
	}
	client := abi.NewClient(runner)
	ctx := context.Background()
	topo := &abi.Topology{Cpus: []*abi.CPU{{Id: 0}, {Id: 1}, {Id: 2, NumaNode: 1}, {Id: 3, NumaNode: 1}}}
	if _, err := client.Init(ctx, &abi.InitRequest{Topology: topo, Config: []byte("reserved: 0-1")}); err != nil {
		t.Fatal(err)
	}
	resp, err := client.CreateContainer(ctx, &abi.CreateContainerRequest{Container: &abi.Container{Id: "c1"}})
	if err != nil {
		t.Fatal(err)
	}
	if adj := resp.GetAdjustment(); adj.GetCpusetCpus() != "2-3" || adj.GetCpusetMems() != "1" {
		t.Fatalf("adjustment = %v, want cpus 2-3 and mems 1", adj)
	}
	_, err = client.Init(ctx, &abi.InitRequest{Topology: topo, Config: []byte("reserved: 0-3")})
	if pe, ok := err.(*abi.PolicyError); !ok || pe.Field != "config.reserved" {
		t.Fatalf("reserving every CPU: %v, want an error naming config.reserved", err)
	}
}
