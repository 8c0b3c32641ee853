package fleet

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
)

// TestServed: the CRD's resource served → true; its group missing (no
// CRD) → false without an error; the server failing → an error.
func TestServed(t *testing.T) {
	gv := v1alpha1.Group + "/" + v1alpha1.Version
	for _, c := range []struct {
		name      string
		resources []*metav1.APIResourceList
		fail      bool
		want      bool
	}{
		{"served", []*metav1.APIResourceList{{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: v1alpha1.Resource}}}}, false, true},
		{"no CRD", []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "nodes"}}}}, false, false},
		{"the group without the kind", []*metav1.APIResourceList{{GroupVersion: gv}}, false, false},
		{"server error", nil, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &fakediscovery.FakeDiscovery{Fake: &k8stesting.Fake{Resources: c.resources}}
			if c.fail {
				d.AddReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("connection refused")
				})
			}
			got, err := Served(d)
			if got != c.want || (err != nil) != c.fail {
				t.Errorf("Served = %v, %v; want %v, error %v", got, err, c.want, c.fail)
			}
		})
	}
}
