package builtin_test

import (
	"testing"

	"github.com/nriwasm/nriwasm/policies/builtin"
)

// BenchmarkModuleSize reports each built-in policy's module size, the figure
// the guest-size goals are stated in (docs/performance.md, "Footprint"): the
// agent's memory and start time both grow with it. The time is Module's, which
// copies nothing.
//
//	go test -run '^$' -bench ModuleSize -benchtime 1x ./policies/builtin/
func BenchmarkModuleSize(b *testing.B) {
	for _, name := range builtin.Names() {
		b.Run(name, func(b *testing.B) {
			var module []byte
			for b.Loop() {
				var ok bool
				if module, ok = builtin.Module(name); !ok {
					b.Fatalf("no built-in policy %q", name)
				}
			}
			b.ReportMetric(float64(len(module))/1e6, "MB")
		})
	}
}
