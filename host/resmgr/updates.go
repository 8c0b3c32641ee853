package resmgr

import (
	"errors"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// acceptUpdates checks an answer's updates (each must name a live container)
// and, if all pass, applies them to the journal. A refused answer is logged
// with its field and counted; nothing of it is applied and nil is returned.
func (m *Manager) acceptUpdates(method abi.Method, us []*abi.ContainerUpdate) ([]*abi.ContainerUpdate, bool) {
	if err := m.limits.Updates("updates", us, m.journal.HasContainer); err != nil {
		m.refused(method, err)
		return nil, false
	}
	m.journalUpdates(us)
	return us, true
}

// journalUpdates journals updates the checks passed.
func (m *Manager) journalUpdates(us []*abi.ContainerUpdate) {
	for _, u := range us {
		m.journal.ApplyUpdate(u)
	}
	if len(us) > 0 {
		m.changed()
	}
}

// refused logs and counts an answer the shape checks refused.
func (m *Manager) refused(method abi.Method, err error) {
	field := ""
	if isInvalid(err) {
		field = asInvalid(err).Field
	} else if ae, ok := errors.AsType[*abi.AnswerError](err); ok {
		field = ae.Field
	}
	m.metrics.Refused(method.Short(), field)
	m.log.Error(err, "policy answer refused: nothing of it applied", "method", method.Short(), "field", field)
}
