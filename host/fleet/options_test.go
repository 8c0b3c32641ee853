package fleet

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

// TestOptionsRefuseBadValues: a missing input or a bad option value is New's
// error, naming it and its limit, instead of a default kept silently.
func TestOptionsRefuseBadValues(t *testing.T) {
	client := fake.NewClientset()
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	apply := func(context.Context, string, []byte) Outcome { return Outcome{} }
	running := Outcome{Policy: "topology-aware", PolicyDigest: "sha256:ab"}
	for _, tc := range []struct {
		client kubernetes.Interface
		dyn    dynamic.Interface
		node   string
		apply  Applier
		opt    Option
		want   string
	}{
		{nil, dyn, "node-1", apply, WithRunning(running), "client: nil"},
		{client, nil, "node-1", apply, WithRunning(running), "dynamic client: nil"},
		{client, dyn, "", apply, WithRunning(running), "node name: empty"},
		{client, dyn, "node-1", nil, WithRunning(running), "apply: nil"},
		{client, dyn, "node-1", apply, WithRunning(Outcome{}), `running "" (error <nil>): the policy must be named`},
		{client, dyn, "node-1", apply, WithRunning(Outcome{Policy: "p", Err: errors.New("x")}), "the error nil"},
		{client, dyn, "node-1", apply, WithStarted(nil, nil), "started object: nil"},
	} {
		if a, err := New(tc.client, tc.dyn, tc.node, tc.apply, tc.opt); err == nil || a != nil {
			t.Errorf("New = %v, %v; want an error with %q", a, err, tc.want)
		} else {
			testkit.ErrorContains(t, err, tc.want)
		}
	}
	if _, err := New(client, dyn, "node-1", apply, WithRunning(running)); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
}
