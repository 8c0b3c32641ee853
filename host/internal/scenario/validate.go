package scenario

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
)

// shapeError is an answer the host refuses whole: a field out of bounds.
type shapeError struct {
	Field   string
	Message string
}

func (e *shapeError) Error() string { return e.Field + ": " + e.Message }

func invalid(field, format string, args ...any) error {
	return &shapeError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// limits are the bounds the agent checks every answer against before applying it.
type limits struct {
	cpus, nodes []uint32 // sorted
}

func newLimits(t *abi.Topology) *limits {
	l := &limits{}
	for _, c := range t.GetCpus() {
		l.cpus = append(l.cpus, c.Id)
	}
	for _, n := range t.GetNumaNodes() {
		l.nodes = append(l.nodes, n.Id)
	}
	slices.Sort(l.cpus)
	slices.Sort(l.nodes)
	return l
}

// subset checks a Linux list ("0-3,8") against allowed; "" means unchanged.
func subset(field, list string, allowed []uint32, what string) error {
	if list == "" {
		return nil
	}
	ids, err := topology.ParseList(list)
	if err != nil {
		return invalid(field, "%q is not a Linux list: %v", list, err)
	}
	for _, id := range ids {
		if _, found := slices.BinarySearch(allowed, id); !found {
			return invalid(field, "%q: %d is not among the node's %s %q", list, id, what, topology.FormatList(allowed))
		}
	}
	return nil
}

func (l *limits) cpuset(field, list string) error { return subset(field, list, l.cpus, "online CPUs") }
func (l *limits) mems(field, list string) error   { return subset(field, list, l.nodes, "NUMA nodes") }

func (l *limits) adjustment(a *abi.ContainerAdjustment) error {
	if err := l.cpuset("adjustment.cpuset_cpus", a.GetCpusetCpus()); err != nil {
		return err
	}
	if err := l.mems("adjustment.cpuset_mems", a.GetCpusetMems()); err != nil {
		return err
	}
	if err := l.mems("adjustment.memory_policy.nodes", a.GetMemoryPolicy().GetNodes()); err != nil {
		return err
	}
	for i, kv := range a.GetEnv() {
		if !validEnvName(kv.Key) {
			return invalid(fmt.Sprintf("adjustment.env[%d].key", i), "%q is not a valid variable name", kv.Key)
		}
	}
	return nil
}

// updates checks ContainerUpdates; live tells which container ids exist.
func (l *limits) updates(prefix string, us []*abi.ContainerUpdate, live func(string) bool) error {
	for i, u := range us {
		field := fmt.Sprintf("%s[%d]", prefix, i)
		if !live(u.ContainerId) {
			return invalid(field+".container_id", "no live container %q", u.ContainerId)
		}
		if err := l.cpuset(field+".cpuset_cpus", u.CpusetCpus); err != nil {
			return err
		}
		if err := l.mems(field+".cpuset_mems", u.CpusetMems); err != nil {
			return err
		}
	}
	return nil
}

func validEnvName(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r == '=' || r < ' ' || r == 0x7f })
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// devicesShape checks what Devices answers against the API's limits.
func devicesShape(r *abi.DevicesResponse) error {
	seen := map[string]bool{}
	for i, d := range r.GetDevices() {
		field := fmt.Sprintf("devices[%d]", i)
		if !dnsLabel.MatchString(d.Name) {
			return invalid(field+".name", "%q is not a DNS label", d.Name)
		}
		if seen[d.Name] {
			return invalid(field+".name", "%q appears twice", d.Name)
		}
		seen[d.Name] = true
		for _, k := range sortedKeys(d.Attributes) {
			if v := d.Attributes[k]; len(v.GetStringValue()) > 64 || len(v.GetVersionValue()) > 64 {
				return invalid(field+".attributes."+k, "longer than 64 characters")
			}
		}
	}
	return nil
}

// preparedShape checks Allocate's answer against the claim and the API's limits.
func preparedShape(r *abi.AllocateResponse, claim *abi.Claim) error {
	for i, d := range r.GetDevices() {
		field := fmt.Sprintf("devices[%d]", i)
		if !slices.ContainsFunc(claim.Results, func(a *abi.DeviceAllocation) bool {
			return a.Request == d.Request && a.Pool == d.Pool && a.Device == d.Device && a.ShareId == d.ShareId
		}) {
			return invalid(field, "answers no allocation result of the claim (request %q, pool %q, device %q)", d.Request, d.Pool, d.Device)
		}
		for j, e := range d.GetContainerEdits().GetEnv() {
			if name, _, ok := strings.Cut(e, "="); !ok || !validEnvName(name) {
				return invalid(fmt.Sprintf("%s.container_edits.env[%d]", field, j), "%q is not NAME=value", e)
			}
		}
		s := d.GetStatus()
		if len(s.GetConditions()) > 8 {
			return invalid(field+".status.conditions", "%d conditions, at most 8", len(s.GetConditions()))
		}
		if data := s.GetData(); len(data) > 0 {
			var obj map[string]any
			if len(data) > 10<<10 || json.Unmarshal(data, &obj) != nil {
				return invalid(field+".status.data", "not a JSON object of at most 10 KiB")
			}
		}
		if n := s.GetNetworkData(); len(n.GetIps()) > 16 || len(n.GetInterfaceName()) > 256 || len(n.GetHardwareAddress()) > 128 {
			return invalid(field+".status.network_data", "beyond the API's limits (16 ips, 256-character interface, 128-character address)")
		}
	}
	return nil
}
