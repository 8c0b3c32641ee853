package dra

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// shutdownRecorder is a Manager that only records shutdown requests.
type shutdownRecorder struct{ reasons []error }

func (s *shutdownRecorder) Devices(context.Context) (*abi.DevicesResponse, error) { return nil, nil }
func (s *shutdownRecorder) PrepareClaim(context.Context, *abi.Claim, func(*abi.AllocateResponse) error) (*abi.AllocateResponse, error) {
	return nil, nil
}
func (s *shutdownRecorder) UnprepareClaim(context.Context, string, func() error) error { return nil }
func (s *shutdownRecorder) Shutdown(reason error)                                      { s.reasons = append(s.reasons, reason) }

type noSpecs struct{}

func (noSpecs) Write(string, []*abi.PreparedDevice) ([]string, error) { return nil, nil }
func (noSpecs) Remove(string) error                                   { return nil }

// recoverable wraps err the way the kubeletplugin helper marks publishing
// errors (its own type is unexported).
type recoverable struct{ error }

func (recoverable) Is(target error) bool { return target == kubeletplugin.ErrRecoverable }
func (r recoverable) Unwrap() error      { return r.error }

func TestHandleErrorShutsDownOnlyOnFatalErrors(t *testing.T) {
	m := &shutdownRecorder{}
	d, err := New(m, "x.nri.io", "n", fake.NewClientset(), noSpecs{}, WithPluginDataDir("/p"), WithRegistrarDir("/r"))
	if err != nil {
		t.Fatal(err)
	}
	d.HandleError(context.Background(), recoverable{errors.New("slice refused")}, "publishing")
	if len(m.reasons) != 0 {
		t.Fatalf("a recoverable error shut the agent down: %v", m.reasons)
	}
	fatal := errors.New("registrar gone")
	d.HandleError(context.Background(), fmt.Errorf("serve: %w", fatal), "registrar gRPC server failed")
	if len(m.reasons) != 1 || !errors.Is(m.reasons[0], fatal) {
		t.Fatalf("shutdown reasons = %v, want one wrapping %v", m.reasons, fatal)
	}
}
