package policy

import abi "github.com/nriwasm/nriwasm/abi/v1"

// One wrapper per call: each puts a response into its field of the envelope.

func wrapInfo(v *abi.InfoResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Info{Info: v}}
}

func wrapInit(v *abi.InitResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Init{Init: v}}
}

func wrapReconfigure(v *abi.ReconfigureResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Reconfigure{Reconfigure: v}}
}

func wrapDevices(v *abi.DevicesResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Devices{Devices: v}}
}

func wrapAllocate(v *abi.AllocateResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Allocate{Allocate: v}}
}

func wrapRelease(v *abi.ReleaseResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Release{Release: v}}
}

func wrapSynchronize(v *abi.SynchronizeResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Synchronize{Synchronize: v}}
}

func wrapRunPodSandbox(v *abi.RunPodSandboxResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_RunPodSandbox{RunPodSandbox: v}}
}

func wrapCreateContainer(v *abi.CreateContainerResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_CreateContainer{CreateContainer: v}}
}

func wrapUpdateContainer(v *abi.UpdateContainerResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_UpdateContainer{UpdateContainer: v}}
}

func wrapStopContainer(v *abi.StopContainerResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_StopContainer{StopContainer: v}}
}

func wrapRemoveContainer(v *abi.RemoveContainerResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_RemoveContainer{RemoveContainer: v}}
}

func wrapStopPodSandbox(v *abi.StopPodSandboxResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_StopPodSandbox{StopPodSandbox: v}}
}

func wrapRemovePodSandbox(v *abi.RemovePodSandboxResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_RemovePodSandbox{RemovePodSandbox: v}}
}

func wrapDumpState(v *abi.DumpStateResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_DumpState{DumpState: v}}
}

func wrapPools(v *abi.PoolsResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Pools{Pools: v}}
}
