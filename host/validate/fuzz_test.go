package validate_test

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
)

// FuzzAdjustment: checking any decodable adjustment never panics, and one
// that passes holds only what the runtime takes.
func FuzzAdjustment(f *testing.F) {
	for _, a := range []*abi.ContainerAdjustment{
		{CpusetCpus: "0-3", CpusetMems: "0", Env: []*abi.KeyValue{{Key: "A", Value: "b"}}},
		{Annotations: map[string]string{"example.com/x": "y"}, RdtClass: "gold", BlockioClass: "low"},
		{MemoryPolicy: &abi.MemoryPolicy{Mode: abi.MemoryPolicyMode_MEMORY_POLICY_MODE_BIND, Nodes: "0-1", Flags: []abi.MemoryPolicyFlag{1}}},
	} {
		b, err := a.MarshalVT()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	limits := mustLimits(f, node())
	f.Fuzz(func(t *testing.T, raw []byte) {
		a := &abi.ContainerAdjustment{}
		if err := a.UnmarshalVT(raw); err != nil {
			return
		}
		if err := limits.Adjustment(a); err != nil {
			return
		}
		if mp := a.GetMemoryPolicy(); mp != nil && mp.GetMode() <= 0 {
			t.Fatalf("memory policy mode %d passed", mp.GetMode())
		}
		if len(a.GetEnv()) > validate.MaxEnv {
			t.Fatalf("%d variables passed", len(a.GetEnv()))
		}
		if err := validate.Class("rdt", a.GetRdtClass()); err != nil {
			t.Fatal(err)
		}
	})
}
