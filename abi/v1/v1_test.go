package v1_test

import (
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func TestVersion(t *testing.T) {
	tests := []struct {
		major, minor uint32
		want         uint32
	}{
		{0, 0, 0},
		{1, 0, 0x10000},
		{1, 2, 0x10002},
		{abi.ABIMajor, abi.ABIMinor, abi.ABIMajor<<16 | abi.ABIMinor},
		{0x7fff, 0xffff, 0x7fffffff},
		{0xffff, 0xffff, 0xffffffff},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d.%d", tt.major, tt.minor), func(t *testing.T) {
			got := abi.Version(tt.major, tt.minor)
			if got != tt.want {
				t.Errorf("Version(%d, %d) = %#x, want %#x", tt.major, tt.minor, got, tt.want)
			}
			major, minor := abi.SplitVersion(got)
			if major != tt.major || minor != tt.minor {
				t.Errorf("SplitVersion(%#x) = %d, %d, want %d, %d", got, major, minor, tt.major, tt.minor)
			}
		})
	}
}

func TestVersionMasksMinor(t *testing.T) {
	// A minor wider than 16 bits must not spill into the major.
	got := abi.Version(1, 0x10002)
	if major, minor := abi.SplitVersion(got); major != 1 || minor != 2 {
		t.Errorf("SplitVersion(Version(1, 0x10002)) = %d, %d, want 1, 2", major, minor)
	}
}
