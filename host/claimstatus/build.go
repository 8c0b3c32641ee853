package claimstatus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	resourceapply "k8s.io/client-go/applyconfigurations/resource/v1"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
)

// deviceKey identifies an entry of status.devices for this driver.
type deviceKey struct{ pool, device, shareID string }

// uuidForm is the normalized RFC 4122 form the API requires of a share ID.
var uuidForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// build checks devices against the API's limits and turns them into apply
// configurations for driver, stamping condition times: a condition keeps the
// lastTransitionTime it had in prev (the conditions last Set for the same
// device) when its status did not change, and gets now otherwise. It returns
// the entries and the conditions to remember for the next Set.
func build(driver string, devices []Device, prev map[deviceKey][]metav1.Condition, now metav1.Time) ([]*resourceapply.AllocatedDeviceStatusApplyConfiguration, map[deviceKey][]metav1.Condition, error) {
	if errs := checkDriver(driver); len(errs) > 0 {
		return nil, nil, errs.ToAggregate()
	}
	var errs field.ErrorList
	var entries []*resourceapply.AllocatedDeviceStatusApplyConfiguration
	conds := map[deviceKey][]metav1.Condition{}
	seen := map[deviceKey]int{}
	for i, d := range devices {
		path := field.NewPath("devices").Index(i)
		key := deviceKey{d.Pool, d.Device, d.ShareID}
		if j, dup := seen[key]; dup {
			errs = append(errs, field.Invalid(path, d.Device, fmt.Sprintf("the same pool, device and share ID as devices[%d]", j)))
			continue
		}
		seen[key] = i
		errs = append(errs, checkKey(d, path)...)
		if d.Status == nil {
			continue
		}
		entry := resourceapply.AllocatedDeviceStatus().WithDriver(driver).WithPool(d.Pool).WithDevice(d.Device)
		if d.ShareID != "" {
			entry.WithShareID(d.ShareID)
		}
		sp := path.Child("status")
		// The host's own check of policy output first (the same errors the
		// resource manager reports), then what the API server adds to it.
		if err := validate.DeviceStatus(sp.String(), d.Status); err != nil {
			return nil, nil, err
		}
		c, cerrs := conditions(d.Status.GetConditions(), prev[key], now, sp.Child("conditions"))
		errs = append(errs, cerrs...)
		if len(c) > 0 {
			conds[key] = c
			for _, x := range c {
				entry.WithConditions(metav1apply.Condition().WithType(x.Type).WithStatus(x.Status).
					WithReason(x.Reason).WithMessage(x.Message).WithLastTransitionTime(x.LastTransitionTime))
			}
		}
		if raw := d.Status.GetData(); len(raw) > 0 {
			data, err := canonicalData(raw, sp.Child("data"))
			if err != nil {
				errs = append(errs, err)
			} else {
				entry.WithData(data)
			}
		}
		if nd := d.Status.GetNetworkData(); nd != nil {
			net, nerrs := networkData(nd, sp.Child("network_data"))
			errs = append(errs, nerrs...)
			entry.WithNetworkData(net)
		}
		entries = append(entries, entry)
	}
	if len(errs) > 0 {
		return nil, nil, errs.ToAggregate()
	}
	return entries, conds, nil
}

func checkDriver(driver string) field.ErrorList {
	p := field.NewPath("driver")
	if len(driver) > resourcev1.DriverNameMaxLength {
		return field.ErrorList{field.TooLong(p, driver, resourcev1.DriverNameMaxLength)}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(driver) {
		errs = append(errs, field.Invalid(p, driver, msg))
	}
	return errs
}

// checkKey checks what identifies the entry: the pool (DNS subdomains
// separated by slashes, ≤ 253), the device (a DNS label) and the share ID
// (a normalized UUID, if any).
func checkKey(d Device, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	pp := path.Child("pool")
	switch {
	case d.Pool == "":
		errs = append(errs, field.Required(pp, ""))
	case len(d.Pool) > resourcev1.PoolNameMaxLength:
		errs = append(errs, field.TooLong(pp, d.Pool, resourcev1.PoolNameMaxLength))
	default:
		for part := range strings.SplitSeq(d.Pool, "/") {
			for _, msg := range validation.IsDNS1123Subdomain(part) {
				errs = append(errs, field.Invalid(pp, d.Pool, msg))
			}
		}
	}
	for _, msg := range validation.IsDNS1123Label(d.Device) {
		errs = append(errs, field.Invalid(path.Child("device"), d.Device, msg))
	}
	if d.ShareID != "" && !uuidForm.MatchString(d.ShareID) {
		errs = append(errs, field.Invalid(path.Child("share_id"), d.ShareID, "must be a UUID in normalized form (lowercase xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)"))
	}
	return errs
}

// conditions turns the policy's conditions into metav1.Conditions with
// their transition times and checks them as the API server does: at most 8,
// types unique, statuses True/False/Unknown, a reason in CamelCase form.
func conditions(in []*abi.Condition, prev []metav1.Condition, now metav1.Time, path *field.Path) ([]metav1.Condition, field.ErrorList) {
	if len(in) > resourcev1.AllocatedDeviceStatusMaxConditions {
		return nil, field.ErrorList{field.TooMany(path, len(in), resourcev1.AllocatedDeviceStatusMaxConditions)}
	}
	out := make([]metav1.Condition, 0, len(in))
	for _, c := range in {
		x := metav1.Condition{
			Type:               c.GetType(),
			Status:             metav1.ConditionStatus(c.GetStatus()),
			Reason:             c.GetReason(),
			Message:            c.GetMessage(),
			LastTransitionTime: now,
		}
		for _, p := range prev {
			if p.Type == x.Type && p.Status == x.Status {
				x.LastTransitionTime = p.LastTransitionTime
			}
		}
		out = append(out, x)
	}
	return out, metav1validation.ValidateConditions(out, path)
}

// canonicalData checks that raw is a JSON object and returns it in the form
// the API server stores and measures (compact, keys sorted, as Go's
// encoding/json writes it), which must be at most 10 KiB. Numbers keep
// their text.
func canonicalData(raw []byte, path *field.Path) (runtime.RawExtension, *field.Error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return runtime.RawExtension{}, field.Invalid(path, "<omitted>", fmt.Sprintf("must be a JSON object: %v", err))
	}
	if obj == nil {
		return runtime.RawExtension{}, field.Invalid(path, "<omitted>", "must be a JSON object, not null")
	}
	if dec.More() {
		return runtime.RawExtension{}, field.Invalid(path, "<omitted>", "must be one JSON object, found more after it")
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return runtime.RawExtension{}, field.InternalError(path, fmt.Errorf("encoding data: %w", err))
	}
	if len(out) > resourcev1.AllocatedDeviceStatusDataMaxLength {
		return runtime.RawExtension{}, field.TooLong(path, "", resourcev1.AllocatedDeviceStatusDataMaxLength)
	}
	return runtime.RawExtension{Raw: out}, nil
}

// networkData checks the device's network identity and canonicalizes its
// IPs: at most 16, unique, each an interface address in CIDR form written
// canonically (10.0.0.1/24, fd00::1/64; an IPv4-mapped IPv6 address becomes
// IPv4); interface name ≤ 256 and hardware address ≤ 128 bytes.
func networkData(n *abi.NetworkDeviceData, path *field.Path) (*resourceapply.NetworkDeviceDataApplyConfiguration, field.ErrorList) {
	var errs field.ErrorList
	out := resourceapply.NetworkDeviceData()
	if name := n.GetInterfaceName(); len(name) > resourcev1.NetworkDeviceDataInterfaceNameMaxLength {
		errs = append(errs, field.TooLong(path.Child("interface_name"), "", resourcev1.NetworkDeviceDataInterfaceNameMaxLength))
	} else if name != "" {
		out.WithInterfaceName(name)
	}
	if hw := n.GetHardwareAddress(); len(hw) > resourcev1.NetworkDeviceDataHardwareAddressMaxLength {
		errs = append(errs, field.TooLong(path.Child("hardware_address"), "", resourcev1.NetworkDeviceDataHardwareAddressMaxLength))
	} else if hw != "" {
		out.WithHardwareAddress(hw)
	}
	ips := n.GetIps()
	ipPath := path.Child("ips")
	if len(ips) > resourcev1.NetworkDeviceDataMaxIPs {
		return nil, append(errs, field.TooMany(ipPath, len(ips), resourcev1.NetworkDeviceDataMaxIPs))
	}
	seen := map[string]int{}
	for i, ip := range ips {
		c, err := CanonicalCIDR(ip)
		if err != nil {
			errs = append(errs, field.Invalid(ipPath.Index(i), ip, err.Error()))
			continue
		}
		if j, dup := seen[c]; dup {
			errs = append(errs, field.Duplicate(ipPath.Index(i), fmt.Sprintf("%s, also ips[%d]", c, j)))
			continue
		}
		seen[c] = i
		out.WithIPs(c)
	}
	return out, errs
}

// CanonicalCIDR returns an interface address in CIDR form ("10.0.0.1/24",
// "fd00::1/64": the address with its prefix length, host bits kept) in the
// canonical form the API server requires: lowercase, IPv6 zeros compressed,
// an IPv4-mapped IPv6 address as IPv4 with its prefix length less 96. An
// address without a prefix length, with a zone, or with leading zeros in an
// IPv4 octet is refused.
func CanonicalCIDR(s string) (string, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return "", fmt.Errorf("must be an address in CIDR form (e.g. 10.9.8.7/24 or 2001:db8::1/64): %w", err)
	}
	addr, bits := p.Addr(), p.Bits()
	if addr.Is4In6() {
		if bits < 96 {
			return "", fmt.Errorf("an IPv4-mapped address needs a prefix length of at least 96, not %d", bits)
		}
		addr, bits = addr.Unmap(), bits-96
	}
	c := netip.PrefixFrom(addr, bits).String()
	// The API server's own check, so that what passes here passes there.
	if errs := validation.IsValidInterfaceAddress(field.NewPath("ip"), c); len(errs) > 0 {
		return "", fmt.Errorf("canonical form %s refused: %w", c, errs.ToAggregate())
	}
	return c, nil
}
