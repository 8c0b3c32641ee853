package compare

import abi "github.com/nriwasm/nriwasm/abi/v1"

// Subject names what a request is about: "namespace/pod/container" for a
// container's event, "namespace/pod" for a pod's, "claim namespace/name" for
// a claim's, "node" for Synchronize; "" for a request that does not decode.
func Subject(method abi.Method, request []byte) string {
	type podCtr interface {
		GetPod() *abi.PodSandbox
		GetContainer() *abi.Container
		UnmarshalVT([]byte) error
	}
	type pod interface {
		GetPod() *abi.PodSandbox
		UnmarshalVT([]byte) error
	}
	type claim interface {
		GetClaim() *abi.Claim
		UnmarshalVT([]byte) error
	}
	var r any
	switch method {
	case abi.Method_METHOD_SYNCHRONIZE:
		return "node"
	case abi.Method_METHOD_CREATE_CONTAINER:
		r = &abi.CreateContainerRequest{}
	case abi.Method_METHOD_UPDATE_CONTAINER:
		r = &abi.UpdateContainerRequest{}
	case abi.Method_METHOD_STOP_CONTAINER:
		r = &abi.StopContainerRequest{}
	case abi.Method_METHOD_REMOVE_CONTAINER:
		r = &abi.RemoveContainerRequest{}
	case abi.Method_METHOD_RUN_POD_SANDBOX:
		r = &abi.RunPodSandboxRequest{}
	case abi.Method_METHOD_STOP_POD_SANDBOX:
		r = &abi.StopPodSandboxRequest{}
	case abi.Method_METHOD_REMOVE_POD_SANDBOX:
		r = &abi.RemovePodSandboxRequest{}
	case abi.Method_METHOD_ALLOCATE:
		r = &abi.AllocateRequest{}
	case abi.Method_METHOD_RELEASE:
		r = &abi.ReleaseRequest{}
	default:
		return ""
	}
	switch r := r.(type) {
	case podCtr:
		if r.UnmarshalVT(request) != nil {
			return ""
		}
		p := r.GetPod()
		return p.GetNamespace() + "/" + p.GetName() + "/" + r.GetContainer().GetName()
	case pod:
		if r.UnmarshalVT(request) != nil {
			return ""
		}
		return r.GetPod().GetNamespace() + "/" + r.GetPod().GetName()
	case claim:
		if r.UnmarshalVT(request) != nil {
			return ""
		}
		return "claim " + r.GetClaim().GetNamespace() + "/" + r.GetClaim().GetName()
	}
	return ""
}
