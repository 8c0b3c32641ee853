package fleet

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
	"github.com/nriwasm/nriwasm/host/resmgr"
)

// TestOutcomeReasons: what the Applier answered becomes the entry's
// Applied condition; the applied generation moves only on success.
func TestOutcomeReasons(t *testing.T) {
	obj := &v1alpha1.PolicyConfig{ObjectMeta: metav1.ObjectMeta{Name: "gpu", UID: "u1", Generation: 3}}
	for _, c := range []struct {
		err    error
		status metav1.ConditionStatus
		reason string
		msg    string
	}{
		{nil, metav1.ConditionTrue, v1alpha1.ReasonApplied, "generation 3 runs"},
		{&config.RestartError{Fields: []string{"dra.enabled"}}, metav1.ConditionFalse, v1alpha1.ReasonRestartRequired, "restart required to change dra.enabled"},
		{fmt.Errorf("swap to policy balloons: %w", resmgr.ErrRestartRequired), metav1.ConditionFalse, v1alpha1.ReasonRestartRequired, "swap to policy balloons"},
		{errors.New("reconfigure policy: config.bogus: unknown field"), metav1.ConditionFalse, v1alpha1.ReasonInvalid, "config.bogus: unknown field; the running configuration stays"},
	} {
		t.Run(c.reason, func(t *testing.T) {
			a := &Agent{node: "node-1", written: map[string]*v1alpha1.NodeStatus{}, outcome: Outcome{Err: c.err, Policy: "topology-aware", PolicyDigest: "sha256:ab"}}
			if c.err == nil {
				a.good = applied{obj.UID, obj.Generation}
			} else {
				a.good = applied{obj.UID, 2}
			}
			e := a.outcomeEntry(obj)
			cond := e.Conditions[0]
			if cond.Status != c.status || cond.Reason != c.reason || !strings.Contains(cond.Message, c.msg) || cond.ObservedGeneration != 3 {
				t.Errorf("condition %+v, want %s %s with %q", cond, c.status, c.reason, c.msg)
			}
			if want := a.good.generation; e.AppliedGeneration != want || e.ObservedGeneration != 3 || e.Node != "node-1" || e.PolicyDigest != "sha256:ab" {
				t.Errorf("entry %+v, want applied generation %d", e, want)
			}
		})
	}
}
