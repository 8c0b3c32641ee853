package v1

import (
	"strconv"
	"strings"
)

// CDIClass is the CDI class of the devices the host writes for prepared claims:
// their kind is "<driver>/claim".
const CDIClass = "claim"

// CDIDeviceName is the fully qualified CDI device the host writes for entry
// index of a claim's AllocateResponse.devices: "<driver>/claim=<uid>-<index>".
func CDIDeviceName(driver, claimUID string, index int) string {
	return driver + "/" + CDIClass + "=" + CDIDeviceID(claimUID, index)
}

// CDIDeviceID is the unqualified name of that device: "<uid>-<index>".
func CDIDeviceID(claimUID string, index int) string {
	return claimUID + "-" + strconv.Itoa(index)
}

// ClaimOfCDIDevice returns the claim uid of a CDI device the host wrote for this
// driver's claims (see CDIDeviceName), and false for any other device: another
// driver's, another class, or a name without an index.
func ClaimOfCDIDevice(driver, device string) (claimUID string, ok bool) {
	name, ok := strings.CutPrefix(device, driver+"/"+CDIClass+"=")
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", false
	}
	if _, err := strconv.ParseUint(name[i+1:], 10, 31); err != nil {
		return "", false
	}
	return name[:i], true
}
