package v1_test

import (
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Example_wire shows the bytes of the example call in abi/README.md.
func Example_wire() {
	req := &abi.CreateContainerRequest{
		Pod:       &abi.PodSandbox{Id: "p"},
		Container: &abi.Container{Id: "x", Name: "c1"},
	}
	reqBytes, _ := req.MarshalVT()
	resp := &abi.Response{Result: &abi.Response_CreateContainer{
		CreateContainer: &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{}},
	}}
	respBytes, _ := resp.MarshalVT()
	ptr, length := uint64(0x10000), uint64(len(respBytes))
	fmt.Printf("request  % x (%d bytes)\n", reqBytes, len(reqBytes))
	fmt.Printf("response % x\n", respBytes)
	fmt.Printf("returned %#016x\n", ptr<<32|length)
	fmt.Printf("version  %#08x\n", abi.Version(abi.ABIMajor, abi.ABIMinor))
	// Output:
	// request  0a 03 0a 01 70 12 07 0a 01 78 1a 02 63 31 (14 bytes)
	// response 4a 02 0a 00
	// returned 0x0001000000000004
	// version  0x00010005
}

// Example_groupedUpdate shows the bytes of the grouped update in abi/README.md
// section 13 and what the host expands it to.
func Example_groupedUpdate() {
	u := &abi.ContainerUpdate{ContainerId: "a", CpusetCpus: "0-3", AlsoContainerIds: []string{"b", "c"}}
	b, _ := u.MarshalVT()
	fmt.Printf("% x (%d bytes)\n", b, len(b))
	expanded, _ := abi.ExpandUpdates([]*abi.ContainerUpdate{u})
	for _, e := range expanded {
		fmt.Println(e.ContainerId, e.CpusetCpus)
	}
	// Output:
	// 0a 01 61 12 03 30 2d 33 32 01 62 32 01 63 (14 bytes)
	// a 0-3
	// b 0-3
	// c 0-3
}

// ExampleEachContainer walks a grouped answer per container, as the agent
// does, without expanding it.
func ExampleEachContainer() {
	us := []*abi.ContainerUpdate{
		{ContainerId: "a", CpusetCpus: "0-3", AlsoContainerIds: []string{"b", "c"}},
		{ContainerId: "d", CpusetMems: "1"},
	}
	for id, u := range abi.EachContainer(us) {
		fmt.Printf("%s cpus %q mems %q\n", id, u.CpusetCpus, u.CpusetMems)
	}
	fmt.Println(abi.CountContainers(us), "containers")
	// Output:
	// a cpus "0-3" mems ""
	// b cpus "0-3" mems ""
	// c cpus "0-3" mems ""
	// d cpus "" mems "1"
	// 4 containers
}

// Example_energyPerformancePreference shows the bytes of the CPU in
// abi/README.md section 17: v1.4's energy-performance preference, as sysfs
// prints it.
func Example_energyPerformancePreference() {
	c := &abi.CPU{Id: 3, EnergyPerformancePreference: "balance_power"}
	b, _ := c.MarshalVT()
	fmt.Printf("% x\n", b)
	// Output:
	// 08 03 72 0d 62 61 6c 61 6e 63 65 5f 70 6f 77 65 72
}

// Example_classDevices shows the bytes of the PCI function in abi/README.md
// section 18: v1.5's class devices, each as CLASS/NAME below /sys/class.
func Example_classDevices() {
	d := &abi.PCIDevice{Address: "0000:01:00.0", ClassDevices: []string{"drm/card0", "drm/renderD128"}}
	b, _ := d.MarshalVT()
	fmt.Printf("% x\n", b)
	// Output:
	// 0a 0c 30 30 30 30 3a 30 31 3a 30 30 2e 30 4a 09 64 72 6d 2f 63 61 72 64 30 4a 0e 64 72 6d 2f 72 65 6e 64 65 72 44 31 32 38
}
