package balloons_test

import (
	"testing"

	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// teeOpener opens harnesses whose every call is compared; calls counts them.
var teeOpener = policytest.TeeOpener(builds, openOn)

// TestNativeAndWasmAgree runs every scenario on every fixture machine
// natively and through the built-in .wasm, requiring proto.Equal answers at
// every call (DumpState's included, so the states agree too).
func TestNativeAndWasmAgree(t *testing.T) { policytest.Agree(t, machines, scenarios, 10, teeOpener) }
