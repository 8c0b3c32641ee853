package balloons_test

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestRestoreSwapKeepsClaims: a prepared claim whose balloon device the new
// configuration no longer has refuses a live swap's instance
// (InitRequest.swap: the running policy keeps serving), naming
// config.balloonTypes; after a restart the same claim is dropped with a
// warning, and a configuration that keeps the device takes it back.
func TestRestoreSwapKeepsClaims(t *testing.T) {
	h := mustOpen(t, nativeOpen, "Desktop1Socket", draConfig)
	if _, err := h.allocate(claimFor("u1", "dedicated-1")); err != nil {
		t.Fatal(err)
	}
	open := func(config string, swap bool) error {
		_, err := policytest.Open(t, builds.Native(t), &abi.InitRequest{Config: []byte(config), NodeName: "n1",
			Topology: policytest.Machine(t, "Desktop1Socket"), Restore: h.RestoreState(), Swap: swap})
		return err
	}
	const without = "balloonTypes:\n- name: other\n  minCPUs: 1\n"
	policytest.WantError(t, open(without, true), abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "config.balloonTypes")
	if err := open(without, false); err != nil {
		t.Errorf("restart without the claim's balloon type: %v, want the claim dropped", err)
	}
	if err := open(draConfig, true); err != nil {
		t.Errorf("swap keeping the claim's device: %v", err)
	}
}
