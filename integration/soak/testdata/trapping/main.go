// Command trapping is the topology-aware policy with faults, for the soak
// (integration/soak): it traps (a Go panic, which the host sees as a Wasm
// trap) in any call about a pod named
//
//   - "trapone-…": unless the instance is fresh, that is, no such call came
//     since its Init. The host retries the call on an instance rebuilt from
//     its journal, which then answers: a rebuild and a restore under load.
//   - "trapall-…": always. The retry traps too: the container is started
//     unpinned (fail-open), and the next instance is rebuilt from the journal.
//
// The soak's TestMain builds it:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o trapping.wasm ./testdata/trapping
package main

import (
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

func init() {
	policy.Register(&trapping{Policy: topologyaware.New()})
}

func main() {}

// trapping wraps topology-aware; served counts the calls about pods since
// Init.
type trapping struct {
	*topologyaware.Policy
	served int
}

// fault traps as the pod's name says, then counts the call.
func (p *trapping) fault(pod *abi.PodSandbox) {
	name := pod.GetName()
	if strings.HasPrefix(name, "trapall-") || (strings.HasPrefix(name, "trapone-") && p.served > 0) {
		panic("trapping: fault injected for pod " + name)
	}
	p.served++
}

func (p *trapping) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	p.served = 0
	return p.Policy.Init(r)
}

func (p *trapping) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	p.fault(r.GetPod())
	return p.Policy.CreateContainer(r)
}

func (p *trapping) StopContainer(r *abi.StopContainerRequest) (*abi.StopContainerResponse, error) {
	p.fault(r.GetPod())
	return p.Policy.StopContainer(r)
}

func (p *trapping) RemoveContainer(r *abi.RemoveContainerRequest) (*abi.RemoveContainerResponse, error) {
	p.fault(r.GetPod())
	return p.Policy.RemoveContainer(r)
}
