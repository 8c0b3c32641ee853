package validate

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// DRA limits of resource.k8s.io/v1 and KEP-4817 that answers are checked against.
const (
	maxAttributeValue = 64
	maxConditions     = 8
	maxStatusData     = 10 << 10
	maxIPs            = 16
	maxInterfaceName  = 256
	maxHardwareAddr   = 128
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Devices checks what Devices answers against the API's limits: device names
// are unique DNS labels, string and version attributes at most 64 characters.
func Devices(r *abi.DevicesResponse) error {
	seen := map[string]bool{}
	for i, d := range r.GetDevices() {
		field := fmt.Sprintf("devices[%d]", i)
		if !dnsLabel.MatchString(d.GetName()) {
			return invalid(field+".name", "%q is not a DNS label", d.GetName())
		}
		if seen[d.GetName()] {
			return invalid(field+".name", "%q appears twice", d.GetName())
		}
		seen[d.GetName()] = true
		for _, k := range slices.Sorted(maps.Keys(d.GetAttributes())) {
			v := d.GetAttributes()[k]
			if len(v.GetStringValue()) > maxAttributeValue || len(v.GetVersionValue()) > maxAttributeValue {
				return invalid(field+".attributes."+k, "longer than 64 characters")
			}
		}
	}
	return nil
}

// Prepared checks Allocate's answer against the claim and the API's limits:
// every device answers one of the claim's allocation results, CDI env entries
// are NAME=value, and device status stays within KEP-4817's limits.
func Prepared(r *abi.AllocateResponse, claim *abi.Claim) error {
	for i, d := range r.GetDevices() {
		field := fmt.Sprintf("devices[%d]", i)
		if !slices.ContainsFunc(claim.GetResults(), func(a *abi.DeviceAllocation) bool {
			return a.GetRequest() == d.GetRequest() && a.GetPool() == d.GetPool() && a.GetDevice() == d.GetDevice() && a.GetShareId() == d.GetShareId()
		}) {
			return invalid(field, "answers no allocation result of the claim (request %q, pool %q, device %q)", d.GetRequest(), d.GetPool(), d.GetDevice())
		}
		for j, e := range d.GetContainerEdits().GetEnv() {
			if name, _, ok := strings.Cut(e, "="); !ok || !EnvName(name) {
				return invalid(fmt.Sprintf("%s.container_edits.env[%d]", field, j), "%q is not NAME=value", e)
			}
		}
		if err := status(field+".status", d.GetStatus()); err != nil {
			return err
		}
	}
	return nil
}

func status(field string, s *abi.DeviceStatus) error {
	if len(s.GetConditions()) > maxConditions {
		return invalid(field+".conditions", "%d conditions, at most 8", len(s.GetConditions()))
	}
	if data := s.GetData(); len(data) > 0 {
		var obj map[string]any
		if len(data) > maxStatusData || json.Unmarshal(data, &obj) != nil {
			return invalid(field+".data", "not a JSON object of at most 10 KiB")
		}
	}
	if n := s.GetNetworkData(); len(n.GetIps()) > maxIPs || len(n.GetInterfaceName()) > maxInterfaceName || len(n.GetHardwareAddress()) > maxHardwareAddr {
		return invalid(field+".network_data", "beyond the API's limits (16 ips, 256-character interface, 128-character address)")
	}
	return nil
}
