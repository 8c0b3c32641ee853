package v1_test

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func TestCDIDeviceNamesRoundTrip(t *testing.T) {
	const driver = "topology-aware.nri.io"
	uid := "0b6f3e1c-8a54-4f7e-9c1d-2a3b4c5d6e7f"
	for _, i := range []int{0, 1, 31} {
		name := abi.CDIDeviceName(driver, uid, i)
		got, ok := abi.ClaimOfCDIDevice(driver, name)
		if !ok || got != uid {
			t.Errorf("ClaimOfCDIDevice(%q) = %q, %v; want %q, true", name, got, ok, uid)
		}
	}
	if got := abi.CDIDeviceName(driver, "u", 2); got != "topology-aware.nri.io/claim=u-2" {
		t.Errorf("CDIDeviceName = %q", got)
	}
}

func TestClaimOfCDIDeviceRefusesOthers(t *testing.T) {
	const driver = "balloons.nri.io"
	for _, dev := range []string{
		"topology-aware.nri.io/claim=abc-0", // another driver
		"balloons.nri.io/gpu=abc-0",         // another class
		"balloons.nri.io/claim=abc",         // no index
		"balloons.nri.io/claim=abc-x",       // index not a number
		"balloons.nri.io/claim=-0",          // no uid
		"balloons.nri.io.evil/claim=abc-0",  // driver as a prefix only
	} {
		if uid, ok := abi.ClaimOfCDIDevice(driver, dev); ok {
			t.Errorf("ClaimOfCDIDevice(%q) = %q, true; want false", dev, uid)
		}
	}
}
