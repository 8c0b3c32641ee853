package topologyaware_test

import (
	"context"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

const draOn = "dra:\n  enabled: true\n"

// cpuClaim is a claim with one result per "device:cpus" ("cpudevnuma000:2";
// without ":cpus" no capacity is named).
func cpuClaim(uid string, results ...string) *abi.Claim {
	c := &abi.Claim{Uid: uid, Namespace: "default", Name: "cpus-" + uid}
	for i, r := range results {
		dev, n, named := strings.Cut(r, ":")
		res := &abi.DeviceAllocation{Request: "req" + string(rune('a'+i)), Pool: "n1", Device: dev}
		if named {
			res.ConsumedCapacity = map[string]string{"dra.cpu/cpu": n}
		}
		c.Results = append(c.Results, res)
	}
	return c
}

// cdiOf is the CDI device of claim uid under the default driver name.
func cdiOf(uid string) string { return abi.CDIDeviceName(driverName, uid, 0) }

// driverName is the policy's default DRA driver name.
const driverName = "topology-aware.nri.io"

// initResponse runs Init on a fresh policy and returns its answer.
func initResponse(t *testing.T, machine, config string) *abi.InitResponse {
	t.Helper()
	r, err := native.New(topologyaware.New())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := abi.NewClient(r).Init(context.Background(), &abi.InitRequest{Config: []byte(config), Topology: policytest.Machine(t, machine)})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
