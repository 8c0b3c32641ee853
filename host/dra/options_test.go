package dra_test

import (
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nriwasm/nriwasm/host/cdi"
	"github.com/nriwasm/nriwasm/host/dra"
	"github.com/nriwasm/nriwasm/internal/testkit"
)

// TestOptionsRefuseBadValues: a missing input or a bad option value is New's
// error, naming it and its limit, instead of a default kept silently.
func TestOptionsRefuseBadValues(t *testing.T) {
	specs, err := cdi.New(t.TempDir(), driver)
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	for _, tc := range []struct {
		driver, node string
		client       kubernetes.Interface
		cdi          dra.SpecWriter
		opt          dra.Option
		want         string
	}{
		{"", node, client, specs, dra.WithPodUID("p"), "driver name: empty"},
		{driver, "", client, specs, dra.WithPodUID("p"), "node name: empty"},
		{driver, node, nil, specs, dra.WithPodUID("p"), "kube client: nil"},
		{driver, node, client, nil, dra.WithPodUID("p"), "CDI spec writer: nil"},
		{driver, node, client, specs, dra.WithPluginDataDir(""), "plugin data directory: empty"},
		{driver, node, client, specs, dra.WithRegistrarDir(""), "registrar directory: empty"},
		{driver, node, client, specs, dra.WithStatus(nil), "status writer: nil"},
		{driver, node, client, specs, dra.WithPodUID(""), "pod UID: empty"},
		{driver, node, client, specs, dra.WithHealthInterval(0), "health interval 0s: must be positive and under 30s"},
		{driver, node, client, specs, dra.WithHealthInterval(time.Minute), "health interval 1m0s: must be positive and under 30s"},
	} {
		d, err := dra.New(nil, tc.driver, tc.node, tc.client, tc.cdi, tc.opt)
		if err == nil || d != nil {
			t.Errorf("New = %v, %v; want an error with %q", d, err, tc.want)
			continue
		}
		testkit.ErrorContains(t, err, tc.want)
	}
	if _, err := dra.New(nil, driver, node, client, specs, dra.WithHealthInterval(time.Second)); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
}
