package claimstatus_test

import (
	"fmt"

	"github.com/nriwasm/nriwasm/host/claimstatus"
)

func ExampleCanonicalCIDR() {
	for _, s := range []string{"10.0.0.1/24", "FD00:0:0::1/64", "::ffff:10.1.2.3/120", "10.0.0.1"} {
		c, err := claimstatus.CanonicalCIDR(s)
		fmt.Printf("%-20s → %q, refused: %v\n", s, c, err != nil)
	}
	// Output:
	// 10.0.0.1/24          → "10.0.0.1/24", refused: false
	// FD00:0:0::1/64       → "fd00::1/64", refused: false
	// ::ffff:10.1.2.3/120  → "10.1.2.3/24", refused: false
	// 10.0.0.1             → "", refused: true
}
