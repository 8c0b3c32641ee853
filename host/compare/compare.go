// Package compare runs a request recorded from the active policy against
// another policy and tells what its answer would change: another cpuset or
// memory nodes for a container, an update of another container, other devices
// or CDI edits for a claim, or a refusal on one side only. The shadow policy
// (host/shadow) and `nriwasm simulate --replay` (host/record) both decide
// differences here, so a divergence reads the same in either.
//
// Each side's answer is first reduced to an Outcome: what the agent would
// apply after its checks (host/validate). An answer the checks refuse counts
// as an error, as it would in the agent.
//
//	s := compare.NewSession(limits, restore.GetContainers())
//	resp, err := compare.Call(ctx, policy, method, request)
//	active := s.Outcome(method, request, recorded, recordedErr)
//	other := s.Outcome(method, request, resp, err)
//	if d := compare.Diff(active, other); len(d) > 0 { ... }
//	s.Track(method, request)
package compare

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
)

// Raw is a request already in the ABI's wire format, sent as it is.
type Raw []byte

// SizeVT implements abi.Message.
func (r Raw) SizeVT() int { return len(r) }

// MarshalToSizedBufferVT implements abi.Message.
func (r Raw) MarshalToSizedBufferVT(buf []byte) (int, error) {
	if len(buf) < len(r) {
		return 0, fmt.Errorf("request of %d bytes does not fit a buffer of %d", len(r), len(buf))
	}
	return copy(buf[len(buf)-len(r):], r), nil
}

// Call sends an encoded request to a policy and reads its answer as the
// agent's client does: a policy's error becomes a *abi.PolicyError, grouped
// updates are checked (abi.CheckGroups) and kept as the policy sent them;
// Outcome lists them per container.
func Call(ctx context.Context, t abi.Transport, method abi.Method, request []byte) (*abi.Response, error) {
	resp, err := t.Call(ctx, method, Raw(request))
	if err != nil {
		return nil, err
	}
	if e := resp.GetError(); e != nil {
		return resp, &abi.PolicyError{Method: method, Code: e.Code, Field: e.Field, Message: e.Message}
	}
	if us := resp.UpdatesField(); us != nil {
		if err := abi.CheckGroups(*us); err != nil {
			return nil, fmt.Errorf("%s answer: %w", method.Short(), err)
		}
	}
	return resp, nil
}

// Outcome is what the agent would apply of one answer.
type Outcome struct {
	// Error is why nothing is applied: the policy's refusal, a runtime
	// failure, or the check that refused the answer. Empty on success.
	Error string `json:"error,omitempty"`
	// CPUs and Mems are the created container's cpuset (CreateContainer).
	CPUs string `json:"cpus,omitempty"`
	Mems string `json:"mems,omitempty"`
	// Updates are the changes to running containers, sorted by container.
	Updates []Update `json:"updates,omitempty"`
	// Devices are a claim's prepared devices (Allocate), sorted.
	Devices []Device `json:"devices,omitempty"`
}

// Update is a change to one running container.
type Update struct {
	Container string `json:"container"`
	CPUs      string `json:"cpus,omitempty"`
	Mems      string `json:"mems,omitempty"`
}

// Device is one prepared device of a claim and the environment its CDI edits
// give the claim's containers (where a CPU policy says which CPUs it took).
type Device struct {
	Request string   `json:"request"`
	Device  string   `json:"device"` // pool/device
	Env     []string `json:"env,omitempty"`
}

// Session follows the containers a stream of requests leaves running, so the
// checks of updates (which must name a running container) judge both sides
// alike.
type Session struct {
	limits *validate.Limits
	live   map[string]bool
}

// NewSession starts a session over the containers running at its start.
func NewSession(limits *validate.Limits, running []*abi.Container) *Session {
	s := &Session{limits: limits, live: make(map[string]bool, len(running))}
	for _, c := range running {
		s.live[c.GetId()] = true
	}
	return s
}

// Track updates the running containers after a request was handled.
func (s *Session) Track(method abi.Method, request []byte) {
	switch method {
	case abi.Method_METHOD_CREATE_CONTAINER:
		var r abi.CreateContainerRequest
		if r.UnmarshalVT(request) == nil {
			s.live[r.GetContainer().GetId()] = true
		}
	case abi.Method_METHOD_STOP_CONTAINER:
		var r abi.StopContainerRequest
		if r.UnmarshalVT(request) == nil {
			delete(s.live, r.GetContainer().GetId())
		}
	case abi.Method_METHOD_REMOVE_CONTAINER:
		var r abi.RemoveContainerRequest
		if r.UnmarshalVT(request) == nil {
			delete(s.live, r.GetContainer().GetId())
		}
	case abi.Method_METHOD_SYNCHRONIZE:
		var r abi.SynchronizeRequest
		if r.UnmarshalVT(request) == nil {
			clear(s.live)
			for _, c := range r.GetContainers() {
				s.live[c.GetId()] = true
			}
		}
	}
}

// Outcome reduces an answer to a request (err being the call's error) to what
// the agent would apply, the checks included.
func (s *Session) Outcome(method abi.Method, request []byte, resp *abi.Response, err error) Outcome {
	if err != nil {
		return Outcome{Error: errorText(err)}
	}
	live := func(id string) bool { return s.live[id] }
	var o Outcome
	var updates []*abi.ContainerUpdate
	switch method {
	case abi.Method_METHOD_CREATE_CONTAINER:
		cr := resp.GetCreateContainer()
		var req abi.CreateContainerRequest
		_ = req.UnmarshalVT(request)
		self := req.GetContainer().GetId()
		// The created container is not running yet, but its own answer may
		// update it, as the agent allows.
		live = func(id string) bool { return id == self || s.live[id] }
		if err := s.limits.Adjustment(cr.GetAdjustment()); err != nil {
			return Outcome{Error: "refused: " + err.Error()}
		}
		o.CPUs, o.Mems = canonical(cr.GetAdjustment().GetCpusetCpus()), canonical(cr.GetAdjustment().GetCpusetMems())
		updates = cr.GetUpdates()
	case abi.Method_METHOD_ALLOCATE:
		ar := resp.GetAllocate()
		var req abi.AllocateRequest
		_ = req.UnmarshalVT(request)
		if err := validate.Prepared(ar, req.GetClaim()); err != nil {
			return Outcome{Error: "refused: " + err.Error()}
		}
		for _, d := range ar.GetDevices() {
			o.Devices = append(o.Devices, Device{
				Request: d.GetRequest(), Device: d.GetPool() + "/" + d.GetDevice(),
				Env: slices.Sorted(slices.Values(d.GetContainerEdits().GetEnv())),
			})
		}
		slices.SortFunc(o.Devices, func(a, b Device) int {
			return strings.Compare(a.Request+" "+a.Device, b.Request+" "+b.Device)
		})
		updates = ar.GetUpdates()
	default:
		if us := resp.UpdatesField(); us != nil {
			updates = *us
		}
	}
	if err := s.limits.Updates("updates", updates, live); err != nil {
		return Outcome{Error: "refused: " + err.Error()}
	}
	var last *abi.ContainerUpdate
	var cpus, mems string
	for id, u := range abi.EachContainer(updates) {
		if u != last { // a group's members share its values
			last, cpus, mems = u, canonical(u.GetCpusetCpus()), canonical(u.GetCpusetMems())
		}
		o.Updates = append(o.Updates, Update{Container: id, CPUs: cpus, Mems: mems})
	}
	slices.SortStableFunc(o.Updates, func(a, b Update) int { return strings.Compare(a.Container, b.Container) })
	return o
}

// errorText is err as an outcome shows it: a policy's refusal by its code
// and message, anything else by its text.
func errorText(err error) string {
	if pe, ok := errors.AsType[*abi.PolicyError](err); ok {
		return pe.Error()
	}
	return err.Error()
}

// canonical writes a CPU or node list in its shortest form, so "0,1,2" and
// "0-2" compare equal; a list that does not parse is kept as written.
func canonical(list string) string {
	if list == "" {
		return ""
	}
	s, err := cpuset.Parse(list)
	if err != nil {
		return list
	}
	return s.String()
}
