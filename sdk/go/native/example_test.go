package native_test

import (
	"context"
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// pinner pins every container to the CPUs its config names.
type pinner struct{ cpus string }

func (*pinner) Describe() policy.Description {
	return policy.Description{Name: "pinner", Version: "0.1.0", Summary: "pins containers"}
}

func (p *pinner) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	if len(r.Config) == 0 {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "config", "want a cpuset")
	}
	p.cpus = string(r.Config)
	return &abi.InitResponse{}, nil
}

func (p *pinner) CreateContainer(*abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	return &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{CpusetCpus: p.cpus}}, nil
}

// A policy runs natively through the same encode and decode path as its Wasm
// build, behind the same typed client the host uses.
func Example() {
	r, err := native.New(&pinner{})
	if err != nil {
		panic(err)
	}
	client := abi.NewClient(r)
	ctx := context.Background()

	info, _ := client.Info(ctx, &abi.InfoRequest{})
	fmt.Println(info.Metadata.Name, info.Metadata.Version, info.Metadata.Capabilities)

	_, err = client.CreateContainer(ctx, &abi.CreateContainerRequest{})
	fmt.Println(err)

	_, err = client.Init(ctx, &abi.InitRequest{})
	fmt.Println(err)

	if _, err := client.Init(ctx, &abi.InitRequest{Config: []byte("0-3")}); err != nil {
		panic(err)
	}
	resp, err := client.CreateContainer(ctx, &abi.CreateContainerRequest{
		Container: &abi.Container{Name: "web"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Adjustment.CpusetCpus)
	// Output:
	// pinner 0.1.0 [METHOD_INIT METHOD_CREATE_CONTAINER]
	// CreateContainer: FAILED_PRECONDITION: CreateContainer before Init
	// Init: INVALID_ARGUMENT: config: want a cpuset
	// 0-3
}
