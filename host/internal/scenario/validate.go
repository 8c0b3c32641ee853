package scenario

import (
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
)

// The shape checks are the agent's own (host/validate), so a simulation refuses
// exactly the answers the agent would.

// shapeError is an answer the host refuses whole: a field out of bounds.
type shapeError = validate.Error

// limits are the bounds the agent checks every answer against before applying it.
type limits struct{ l *validate.Limits }

func newLimits(t *abi.Topology) (*limits, error) {
	l, err := validate.New(t)
	if err != nil {
		return nil, err
	}
	return &limits{l: l}, nil
}

func (l *limits) adjustment(a *abi.ContainerAdjustment) error { return l.l.Adjustment(a) }

// updates checks ContainerUpdates; live tells which container ids exist.
func (l *limits) updates(prefix string, us []*abi.ContainerUpdate, live func(string) bool) error {
	return l.l.Updates(prefix, us, live)
}

// devicesShape checks what Devices answers against the API's limits.
func devicesShape(r *abi.DevicesResponse) error { return validate.Devices(r) }

// preparedShape checks Allocate's answer against the claim and the API's limits.
func preparedShape(r *abi.AllocateResponse, claim *abi.Claim) error {
	return validate.Prepared(r, claim)
}
