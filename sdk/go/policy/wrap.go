package policy

import abi "github.com/nriwasm/nriwasm/abi/v1"

// One wrapper per call: each puts a response into its field of the envelope,
// an empty one for nil (a policy that answers nothing, or a call it does not
// implement).

// orEmpty is v, or a new message for nil.
func orEmpty[T any](v *T) *T {
	if v == nil {
		return new(T)
	}
	return v
}

func wrapInfo(v *abi.InfoResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Info{Info: orEmpty(v)}}
}

func wrapInit(v *abi.InitResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Init{Init: orEmpty(v)}}
}

func wrapReconfigure(v *abi.ReconfigureResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Reconfigure{Reconfigure: orEmpty(v)}}
}

func wrapDevices(v *abi.DevicesResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Devices{Devices: orEmpty(v)}}
}

func wrapAllocate(v *abi.AllocateResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Allocate{Allocate: orEmpty(v)}}
}

func wrapRelease(v *abi.ReleaseResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Release{Release: orEmpty(v)}}
}

func wrapSynchronize(v *abi.SynchronizeResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Synchronize{Synchronize: orEmpty(v)}}
}

func wrapRunPodSandbox(v *abi.RunPodSandboxResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_RunPodSandbox{RunPodSandbox: orEmpty(v)}}
}

func wrapCreateContainer(v *abi.CreateContainerResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_CreateContainer{CreateContainer: orEmpty(v)}}
}

func wrapUpdateContainer(v *abi.UpdateContainerResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_UpdateContainer{UpdateContainer: orEmpty(v)}}
}

func wrapStopContainer(v *abi.StopContainerResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_StopContainer{StopContainer: orEmpty(v)}}
}

func wrapRemoveContainer(v *abi.RemoveContainerResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_RemoveContainer{RemoveContainer: orEmpty(v)}}
}

func wrapStopPodSandbox(v *abi.StopPodSandboxResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_StopPodSandbox{StopPodSandbox: orEmpty(v)}}
}

func wrapRemovePodSandbox(v *abi.RemovePodSandboxResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_RemovePodSandbox{RemovePodSandbox: orEmpty(v)}}
}

func wrapDumpState(v *abi.DumpStateResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_DumpState{DumpState: orEmpty(v)}}
}

func wrapPools(v *abi.PoolsResponse) *abi.Response {
	return &abi.Response{Result: &abi.Response_Pools{Pools: orEmpty(v)}}
}
