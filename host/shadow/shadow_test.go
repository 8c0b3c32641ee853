package shadow_test

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/nriwasm/nriwasm/host/shadow"
)

// TestShadowDiverges: the same policy with another configuration (two CPUs
// reserved instead of one) puts a container without a CPU request on other
// shared CPUs of the reserved node (the containers with a request go to
// another node alike); the divergence is counted per method, kept with both answers and
// served as JSON. The active answers are the ones without a shadow.
func TestShadowDiverges(t *testing.T) {
	alone := newRig(t, reserveOne, nil, "")
	want := []string{alone.create(t, "c0", 500), alone.create(t, "c1", 2000), alone.create(t, "c2", 0)}

	r := newRig(t, reserveOne, &nativePolicy{}, reserveTwo)
	if got := []string{r.create(t, "c0", 500), r.create(t, "c1", 2000), r.create(t, "c2", 0)}; !slices.Equal(got, want) {
		t.Fatalf("with a shadow the active policy answered cpus %q, alone %q", got, want)
	}
	rep := r.waitFor(t, "7 compared requests", func(rep shadow.Report) bool { return rep.Compared == 7 })
	if rep.State != shadow.StateRunning {
		t.Fatalf("state %q, want %q", rep.State, shadow.StateRunning)
	}
	cc := rep.Methods["CreateContainer"]
	if cc == nil || cc.Compared != 3 || cc.Divergences != 1 || rep.Divergences != 1 {
		t.Fatalf("CreateContainer counts %+v (total %d), want 3 compared, 1 diverged", cc, rep.Divergences)
	}
	if rp := rep.Methods["RunPodSandbox"]; rp == nil || rp.Compared != 3 || rp.Divergences != 0 {
		t.Fatalf("RunPodSandbox counts %+v, want 3 compared, none diverged", rp)
	}
	d := rep.Last[0]
	if d.Method != "CreateContainer" || d.Subject != "default/pod-c2/c" || d.Active.CPUs != "1-7" || d.Shadow.CPUs != "2-7" {
		t.Fatalf("divergence %+v, want CreateContainer of default/pod-c2/c with cpus 1-7 (active) and 2-7 (shadow)", d)
	}
	if d.Differences[0].Field != "cpus" {
		t.Fatalf("differences %v, want cpus first", d.Differences)
	}
	if got := counter(t, r, "nriwasm_shadow_divergences_total", "CreateContainer"); got != 1 {
		t.Fatalf("nriwasm_shadow_divergences_total{method=CreateContainer} = %v, want 1", got)
	}

	w := httptest.NewRecorder()
	r.shadow.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/debug/shadow", nil))
	var served shadow.Report
	if err := json.Unmarshal(w.Body.Bytes(), &served); err != nil {
		t.Fatalf("the endpoint's answer is not a report: %v\n%s", err, w.Body)
	}
	if served.Divergences != 1 || len(served.Last) != 1 || served.Last[0].Shadow.CPUs != "2-7" {
		t.Fatalf("served report %+v, want the shadow's", served)
	}
}

// counter reads a counter of the rig's registry by its method label.
func counter(t *testing.T, r *rig, name, method string) float64 {
	t.Helper()
	mfs, err := r.met.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" && l.GetValue() == method {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
