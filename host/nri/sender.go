package nri

import (
	"context"
	"sync"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// sender sends unsolicited updates from its own goroutine, so that no handler
// calls back into the runtime while the runtime waits for its reply.
type sender struct {
	p     *Plugin
	mu    sync.Mutex
	queue []*abi.ContainerUpdate
	kick  chan struct{}
}

func newSender(p *Plugin) *sender { return &sender{p: p, kick: make(chan struct{}, 1)} }

func (s *sender) push(us []*abi.ContainerUpdate) {
	if len(us) == 0 {
		return
	}
	s.mu.Lock()
	s.queue = append(s.queue, us...)
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *sender) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		}
		s.mu.Lock()
		us := s.queue
		s.queue = nil
		s.mu.Unlock()
		st := s.p.currentStub()
		if st == nil {
			s.p.log.Info("no runtime connection; dropping updates until the next Synchronize", "updates", len(us))
			continue
		}
		sent := updates(us)
		failed, err := st.UpdateContainers(sent)
		if err != nil || len(failed) > 0 {
			s.p.log.Error(err, "runtime did not apply container updates", "updates", len(sent), "failed", len(failed))
			continue
		}
		s.p.log.V(1).Info("container updates sent", "updates", len(sent))
	}
}
