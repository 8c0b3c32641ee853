package resmgr

import (
	"context"
	"fmt"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Exchange is one request the manager handled and the active policy's answer
// to it, as an Observer receives it. It is shared by every observer: read it,
// never change it.
type Exchange struct {
	// Seq numbers the exchanges from 1, in the order they were handled.
	Seq uint64
	// At is when the active policy's answer came back.
	At time.Time
	// Method is the call.
	Method abi.Method
	// Request is the request as sent to the policy, in the ABI's wire format.
	Request []byte
	// Response is the policy's answer as the manager read it (grouped updates
	// kept as the policy sent them: read them with abi.EachContainer), before
	// its checks; nil when the call failed without one.
	Response *abi.Response
	// Err is the call's error, nil on success: a *abi.PolicyError for a
	// refusal, a wasm error kind for a runtime failure.
	Err error
}

// Observer receives every exchange of the calls Observed lists, in order,
// under the manager's lock: Observe must return at once (queue the exchange,
// never wait), or it delays the runtime's answer.
type Observer interface {
	Observe(x *Exchange)
}

// Observed reports whether observers receive the exchanges of a method: the
// NRI events and the claim calls, not the calls that only read the policy
// (Info, Devices, Pools, DumpState) nor Init and Reconfigure, whose
// configuration is the active policy's own.
func Observed(method abi.Method) bool {
	switch method {
	case abi.Method_METHOD_SYNCHRONIZE, abi.Method_METHOD_RUN_POD_SANDBOX, abi.Method_METHOD_CREATE_CONTAINER,
		abi.Method_METHOD_UPDATE_CONTAINER, abi.Method_METHOD_STOP_CONTAINER, abi.Method_METHOD_REMOVE_CONTAINER,
		abi.Method_METHOD_STOP_POD_SANDBOX, abi.Method_METHOD_REMOVE_POD_SANDBOX,
		abi.Method_METHOD_ALLOCATE, abi.Method_METHOD_RELEASE:
		return true
	}
	return false
}

// AddObserver makes o receive every exchange handled from now on. Take a
// Snapshot to know where it starts.
func (m *Manager) AddObserver(o Observer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.observers = append(m.observers, o)
}

// Snapshot returns a copy of the journal and the Seq of the last exchange it
// reflects: an instance initialized with it and then sent the exchanges after
// Seq sees what the active policy saw.
func (m *Manager) Snapshot() (*abi.RestoreState, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.journal.RestoreState(), m.seq
}

// lastCall is the last request the active policy was sent and its answer.
type lastCall struct {
	method abi.Method
	req    abi.Message
	resp   *abi.Response
}

// tap is the active policy's transport as the manager's client uses it: it
// keeps the last call for publish.
type tap struct {
	m *Manager
	t abi.Transport
}

func (t tap) Call(ctx context.Context, method abi.Method, req abi.Message) (*abi.Response, error) {
	resp, err := t.t.Call(ctx, method, req)
	if len(t.m.observers) > 0 {
		t.m.last = lastCall{method, req, resp}
	}
	return resp, err
}

// newClient returns the client the manager calls p through. It keeps grouped
// updates: the checks, the journal and host/nri read them per container, and
// only NRI's update list is expanded.
func (m *Manager) newClient(p Policy) *abi.Client { return abi.NewClient(tap{m, p}, abi.KeepGroups()) }

// publish hands the call that just ended to the observers: the request
// encoded (the caller may change its messages later), the answer copied.
// Called by call, with the lock held.
func (m *Manager) publish(err error) {
	last := m.last
	m.last = lastCall{}
	if len(m.observers) == 0 || last.req == nil || !Observed(last.method) {
		return
	}
	req := make([]byte, last.req.SizeVT())
	if _, merr := last.req.MarshalToSizedBufferVT(req); merr != nil {
		m.log.Error(fmt.Errorf("encode %s request for observers: %w", last.method.Short(), merr), "exchange not observed")
		return
	}
	m.seq++
	x := &Exchange{Seq: m.seq, At: time.Now(), Method: last.method, Request: req, Response: last.resp.CloneVT(), Err: err}
	for _, o := range m.observers {
		o.Observe(x)
	}
}
