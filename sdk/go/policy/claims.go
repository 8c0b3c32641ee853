package policy

import (
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// ClaimEnvName is an environment variable naming a claim: prefix and the
// claim's uid, every character of the uid an environment name cannot hold
// (a Kubernetes uid's '-') as '_'.
func ClaimEnvName(prefix, claimUID string) string {
	b := []byte(prefix + claimUID)
	for i := len(prefix); i < len(b); i++ {
		if c := b[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// ContainerClaims finds the prepared claims a container holds, as uids in
// the order they first appear. The CDI devices the host names for driver's
// claims (abi.ClaimOfCDIDevice) decide; a CDI device naming a claim that is
// not prepared is a FAILED_PRECONDITION error naming it. Only a container
// without any CDI device (a runtime that does not report them) is matched by
// its environment instead: envClaim returns the uid a variable names, if any.
// Env can be forged, so CDI devices, when present, are the only evidence.
func ContainerClaims(driver string, c *abi.Container, prepared func(uid string) bool, envClaim func(key, value string) (string, bool)) ([]string, error) {
	var uids []string
	add := func(uid string) {
		for _, u := range uids {
			if u == uid {
				return
			}
		}
		uids = append(uids, uid)
	}
	for i, dev := range c.GetCdiDevices() {
		uid, ok := abi.ClaimOfCDIDevice(driver, dev)
		if !ok {
			continue
		}
		if !prepared(uid) {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, fmt.Sprintf("container.cdi_devices[%d]", i),
				"%s names claim %q, which is not prepared", dev, uid)
		}
		add(uid)
	}
	if len(c.GetCdiDevices()) > 0 || envClaim == nil {
		return uids, nil
	}
	for _, kv := range c.GetEnv() {
		if uid, ok := envClaim(kv.GetKey(), kv.GetValue()); ok && prepared(uid) {
			add(uid)
		}
	}
	return uids, nil
}
