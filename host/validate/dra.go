package validate

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// DRA limits of resource.k8s.io/v1 (k8s.io/api/resource/v1/types.go) and of
// KEP-4817's claim status that answers are checked against, so the API server
// never refuses what the host sends.
const (
	MaxAttributesAndCapacities = 32 // per device
	MaxAttributeValue          = 64 // characters of a string or version value
	MaxIDLength                = 32 // characters of an attribute or capacity name's C identifier
	MaxDomainLength            = 63 // characters of a qualified name's domain
	MaxCounterSetsPerSlice     = 8  // shared counter sets in one ResourceSlice
	MaxCountersPerSet          = 32 // counters in a counter set or a consumption
	MaxConsumptionsPerDevice   = 2  // consumes_counters entries per device
	MaxTaintsPerDevice         = 16 // taints per device
	MaxConditions              = 8  // conditions of one device's status
	MaxStatusData              = 10 << 10
	MaxIPs                     = 16  // network_data.ips
	MaxInterfaceName           = 256 // characters of network_data.interface_name
	MaxHardwareAddress         = 128 // characters of network_data.hardware_address
)

// semver is semver.org 2.0.0, as the API server checks version attributes.
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

// Devices checks what Devices answers against the API server's validation of a
// ResourceSlice: device and counter set names are unique DNS labels; at most
// 32 attributes and capacities per device, named "[domain/]identifier"; each
// attribute has one value, strings and versions at most 64 characters and
// versions semver; capacities and counters are quantities; request policies
// only on devices that allow multiple allocations; counter consumptions (at
// most 2 per device, 32 counters each) name counters of a declared set; taints
// have label keys and values and a known effect. The error names the device
// and the rule.
func Devices(r *abi.DevicesResponse) error {
	sets := map[string]map[string]bool{}
	for i, cs := range r.GetSharedCounters() {
		field := fmt.Sprintf("shared_counters[%d]", i)
		if err := dnsLabel(field+".name", cs.GetName()); err != nil {
			return err
		}
		if sets[cs.GetName()] != nil {
			return invalid(field+".name", "counter set %q appears twice", cs.GetName())
		}
		if err := counters(field+".counters", cs.GetCounters(), nil); err != nil {
			return err
		}
		sets[cs.GetName()] = map[string]bool{}
		for name := range cs.GetCounters() {
			sets[cs.GetName()][name] = true
		}
	}
	seen := map[string]bool{}
	for i, d := range r.GetDevices() {
		field := fmt.Sprintf("devices[%d]", i)
		if err := dnsLabel(field+".name", d.GetName()); err != nil {
			return err
		}
		if seen[d.GetName()] {
			return invalid(field+".name", "device %q appears twice", d.GetName())
		}
		seen[d.GetName()] = true
		if err := device(fmt.Sprintf("%s (%s)", field, d.GetName()), d, sets); err != nil {
			return err
		}
	}
	return nil
}

func device(field string, d *abi.Device, sets map[string]map[string]bool) error {
	if n := len(d.GetAttributes()) + len(d.GetCapacities()); n > MaxAttributesAndCapacities {
		return invalid(field, "%d attributes and capacities, at most %d", n, MaxAttributesAndCapacities)
	}
	for _, k := range slices.Sorted(maps.Keys(d.GetAttributes())) {
		f := field + ".attributes." + k
		if err := qualifiedName(f, k); err != nil {
			return err
		}
		if err := attribute(f, d.GetAttributes()[k]); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(d.GetCapacities())) {
		f := field + ".capacities." + k
		if err := qualifiedName(f, k); err != nil {
			return err
		}
		if err := capacity(f, d.GetCapacities()[k], d.GetAllowMultipleAllocations()); err != nil {
			return err
		}
	}
	if n := len(d.GetConsumesCounters()); n > MaxConsumptionsPerDevice {
		return invalid(field+".consumes_counters", "%d counter consumptions, at most %d", n, MaxConsumptionsPerDevice)
	}
	used := map[string]bool{}
	for j, c := range d.GetConsumesCounters() {
		f := fmt.Sprintf("%s.consumes_counters[%d]", field, j)
		set, ok := sets[c.GetCounterSet()]
		if !ok {
			return invalid(f+".counter_set", "%q is not a shared counter set", c.GetCounterSet())
		}
		if used[c.GetCounterSet()] {
			return invalid(f+".counter_set", "%q appears twice", c.GetCounterSet())
		}
		used[c.GetCounterSet()] = true
		if err := counters(f+".counters", c.GetCounters(), set); err != nil {
			return err
		}
	}
	if n := len(d.GetTaints()); n > MaxTaintsPerDevice {
		return invalid(field+".taints", "%d taints, at most %d", n, MaxTaintsPerDevice)
	}
	for j, t := range d.GetTaints() {
		f := fmt.Sprintf("%s.taints[%d]", field, j)
		if msgs := k8svalidation.IsQualifiedName(t.GetKey()); len(msgs) > 0 {
			return invalid(f+".key", "%q is not a label key: %s", t.GetKey(), strings.Join(msgs, "; "))
		}
		if msgs := k8svalidation.IsValidLabelValue(t.GetValue()); len(msgs) > 0 {
			return invalid(f+".value", "%q is not a label value: %s", t.GetValue(), strings.Join(msgs, "; "))
		}
		if t.GetEffect() == abi.DeviceTaintEffect_DEVICE_TAINT_EFFECT_UNSPECIFIED || abi.DeviceTaintEffect_name[int32(t.GetEffect())] == "" {
			return invalid(f+".effect", "unspecified or unknown effect %d", t.GetEffect())
		}
	}
	return nil
}

func attribute(field string, a *abi.DeviceAttribute) error {
	switch v := a.GetValue().(type) {
	case nil:
		return invalid(field, "has no value: set exactly one of int, bool, string, version")
	case *abi.DeviceAttribute_StringValue:
		if len(v.StringValue) > MaxAttributeValue {
			return invalid(field, "string of %d characters, at most %d", len(v.StringValue), MaxAttributeValue)
		}
	case *abi.DeviceAttribute_VersionValue:
		if len(v.VersionValue) > MaxAttributeValue {
			return invalid(field, "version of %d characters, at most %d", len(v.VersionValue), MaxAttributeValue)
		}
		if !semver.MatchString(v.VersionValue) {
			return invalid(field, "version %q is not semver 2.0.0 (e.g. 1.2.3)", v.VersionValue)
		}
	}
	return nil
}

func capacity(field string, c *abi.DeviceCapacity, multiple bool) error {
	value, err := parseQuantity(field+".value", c.GetValue())
	if err != nil {
		return err
	}
	p := c.GetRequestPolicy()
	if p == nil {
		return nil
	}
	field += ".request_policy"
	if !multiple {
		return invalid(field, "only a device with allow_multiple_allocations may have one")
	}
	if len(p.GetValidValues()) > 0 && p.GetValidRange() != nil {
		return invalid(field, "valid_values and valid_range both set: at most one")
	}
	var def resource.Quantity
	if p.GetDefault() != "" {
		if def, err = parseQuantity(field+".default", p.GetDefault()); err != nil {
			return err
		}
	} else if len(p.GetValidValues()) > 0 || p.GetValidRange() != nil {
		return invalid(field+".default", "required with valid_values or valid_range")
	}
	if vs := p.GetValidValues(); len(vs) > 0 {
		return validValues(field+".valid_values", vs, value, def)
	}
	if r := p.GetValidRange(); r != nil {
		return validRange(field+".valid_range", r, value, def)
	}
	return nil
}

// validValues: ascending, none above the capacity, the default among them.
func validValues(field string, vs []string, value, def resource.Quantity) error {
	var prev resource.Quantity
	found := false
	for j, v := range vs {
		f := fmt.Sprintf("%s[%d]", field, j)
		q, err := parseQuantity(f, v)
		if err != nil {
			return err
		}
		if j > 0 && q.Cmp(prev) <= 0 {
			return invalid(f, "%s: values must ascend", v)
		}
		if q.Cmp(value) > 0 {
			return invalid(f, "%s is larger than the capacity %s", v, value.String())
		}
		found = found || q.Cmp(def) == 0
		prev = q
	}
	if !found {
		return invalid(field, "the default %s is not one of them", def.String())
	}
	return nil
}

// validRange: min ≤ default ≤ max ≤ capacity, and min + step ≤ capacity.
func validRange(field string, r *abi.CapacityRequestPolicyRange, value, def resource.Quantity) error {
	if r.GetMin() == "" {
		return invalid(field+".min", "required")
	}
	lo, err := parseQuantity(field+".min", r.GetMin())
	if err != nil {
		return err
	}
	if lo.Cmp(value) > 0 {
		return invalid(field+".min", "%s is larger than the capacity %s", lo.String(), value.String())
	}
	if def.Cmp(lo) < 0 {
		return invalid(field, "the default %s is below min %s", def.String(), lo.String())
	}
	if r.GetMax() != "" {
		hi, err := parseQuantity(field+".max", r.GetMax())
		if err != nil {
			return err
		}
		if lo.Cmp(hi) > 0 || hi.Cmp(value) > 0 || def.Cmp(hi) > 0 {
			return invalid(field+".max", "%s: want min %s ≤ default %s ≤ max ≤ the capacity %s", hi.String(), lo.String(), def.String(), value.String())
		}
	}
	if r.GetStep() != "" {
		step, err := parseQuantity(field+".step", r.GetStep())
		if err != nil {
			return err
		}
		one := lo.DeepCopy()
		one.Add(step)
		if step.Sign() <= 0 || one.Cmp(value) > 0 {
			return invalid(field+".step", "%s: want a positive step with min + step (%s) ≤ the capacity %s", step.String(), one.String(), value.String())
		}
	}
	return nil
}

// counters checks a counter map: at most 32 DNS-label names with quantities,
// each one of declared when declared is not nil.
func counters(field string, cs map[string]string, declared map[string]bool) error {
	if len(cs) == 0 {
		return invalid(field, "empty: at least one counter")
	}
	if len(cs) > MaxCountersPerSet {
		return invalid(field, "%d counters, at most %d", len(cs), MaxCountersPerSet)
	}
	for _, k := range slices.Sorted(maps.Keys(cs)) {
		if err := dnsLabel(field+"."+k, k); err != nil {
			return err
		}
		if declared != nil && !declared[k] {
			return invalid(field+"."+k, "the counter set declares no counter %q", k)
		}
		if err := quantity(field+"."+k, cs[k]); err != nil {
			return err
		}
	}
	return nil
}

// qualifiedName checks an attribute or capacity name: a C identifier of at
// most 32 characters, optionally after a DNS-subdomain domain and '/'.
func qualifiedName(field, name string) error {
	id := name
	if domain, rest, ok := strings.Cut(name, "/"); ok {
		if len(domain) > MaxDomainLength || len(k8svalidation.IsDNS1123Subdomain(domain)) > 0 {
			return invalid(field, "domain %q is not a DNS subdomain of at most %d characters", domain, MaxDomainLength)
		}
		id = rest
	}
	if len(id) > MaxIDLength || len(k8svalidation.IsCIdentifier(id)) > 0 {
		return invalid(field, "%q is not a C identifier of at most %d characters", id, MaxIDLength)
	}
	return nil
}

func dnsLabel(field, s string) error {
	if msgs := k8svalidation.IsDNS1123Label(s); len(msgs) > 0 {
		return invalid(field, "%q is not a DNS label: %s", s, strings.Join(msgs, "; "))
	}
	return nil
}

func quantity(field, s string) error {
	_, err := parseQuantity(field, s)
	return err
}

func parseQuantity(field, s string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, invalid(field, "%q is not a quantity (e.g. \"4\", \"16Gi\", \"500m\")", s)
	}
	return q, nil
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
		if err := DeviceStatus(field+".status", d.GetStatus()); err != nil {
			return err
		}
	}
	return nil
}

// DeviceStatus checks one device's claim status against KEP-4817's limits: at
// most 8 conditions with a type and a True/False/Unknown status, data a JSON
// object of at most 10 KiB, at most 16 IPs in CIDR form, an interface name of
// at most 256 and a hardware address of at most 128 characters.
func DeviceStatus(field string, s *abi.DeviceStatus) error {
	if n := len(s.GetConditions()); n > MaxConditions {
		return invalid(field+".conditions", "%d conditions, at most %d", n, MaxConditions)
	}
	for i, c := range s.GetConditions() {
		f := fmt.Sprintf("%s.conditions[%d]", field, i)
		if msgs := k8svalidation.IsQualifiedName(c.GetType()); len(msgs) > 0 {
			return invalid(f+".type", "%q is not a condition type: %s", c.GetType(), strings.Join(msgs, "; "))
		}
		if st := c.GetStatus(); st != "True" && st != "False" && st != "Unknown" {
			return invalid(f+".status", "%q, want True, False or Unknown", st)
		}
	}
	if data := s.GetData(); len(data) > 0 {
		var obj map[string]any
		if len(data) > MaxStatusData || json.Unmarshal(data, &obj) != nil {
			return invalid(field+".data", "not a JSON object of at most 10 KiB (%d bytes)", len(data))
		}
	}
	n := s.GetNetworkData()
	if len(n.GetIps()) > MaxIPs {
		return invalid(field+".network_data.ips", "%d IPs, at most %d", len(n.GetIps()), MaxIPs)
	}
	for i, ip := range n.GetIps() {
		if _, err := netip.ParsePrefix(ip); err != nil {
			return invalid(fmt.Sprintf("%s.network_data.ips[%d]", field, i), "%q is not an IP in CIDR form (e.g. 10.0.0.5/24)", ip)
		}
	}
	if len(n.GetInterfaceName()) > MaxInterfaceName {
		return invalid(field+".network_data.interface_name", "%d characters, at most %d", len(n.GetInterfaceName()), MaxInterfaceName)
	}
	if len(n.GetHardwareAddress()) > MaxHardwareAddress {
		return invalid(field+".network_data.hardware_address", "%d characters, at most %d", len(n.GetHardwareAddress()), MaxHardwareAddress)
	}
	return nil
}
