package resmgr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// stopTimeout bounds how long Stop waits for the policy to close.
const stopTimeout = 5 * time.Second

// Component is a part of the agent that runs until its context ends: the NRI
// plugin, the metrics server, the configuration watcher. It returns nil when
// its context ended, or the error that stopped it (which shuts the agent down).
type Component func(ctx context.Context) error

// lifecycle is the manager's one shutdown path.
type lifecycle struct {
	mu         sync.Mutex
	components []namedComponent
	started    bool
	stopped    bool
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	done       chan struct{}
	doneOnce   sync.Once
	reason     error
}

type namedComponent struct {
	name string
	run  Component
}

// Go registers a component to run from Start until Stop. Call it before Start.
func (m *Manager) Go(name string, c Component) {
	m.life.mu.Lock()
	defer m.life.mu.Unlock()
	m.life.components = append(m.life.components, namedComponent{name, c})
}

// Start runs the checkpoint saver and the registered components.
func (m *Manager) Start(ctx context.Context) error {
	l := &m.life
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		return errors.New("resource manager: already started")
	}
	l.started = true
	l.done = make(chan struct{})
	ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	l.wg.Go(func() { m.runSaver(ctx) })
	for _, c := range l.components {
		l.wg.Go(func() {
			err := c.run(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				m.Shutdown(fmt.Errorf("%s: %w", c.name, err))
			case ctx.Err() == nil:
				m.log.Info("component stopped", "component", c.name)
			}
		})
	}
	return nil
}

// Shutdown asks the agent to stop, for a signal (reason nil) or a component
// that cannot go on. The first reason is kept; Done is closed.
func (m *Manager) Shutdown(reason error) {
	l := &m.life
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done == nil {
		l.done = make(chan struct{})
	}
	l.doneOnce.Do(func() {
		l.reason = reason
		if reason != nil {
			m.log.Error(reason, "shutting down")
		} else {
			m.log.Info("shutting down")
		}
		close(l.done)
	})
}

// Done is closed when Shutdown was called.
func (m *Manager) Done() <-chan struct{} {
	l := &m.life
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done == nil {
		l.done = make(chan struct{})
	}
	return l.done
}

// Stop stops the components, saves the checkpoint a last time and closes the
// policy. It returns the reason Shutdown was given, if any. Later calls do
// nothing.
func (m *Manager) Stop() error {
	l := &m.life
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return nil
	}
	l.stopped = true
	cancel := l.cancel
	l.mu.Unlock()
	m.Shutdown(nil)
	if cancel != nil {
		cancel()
	}
	l.wg.Wait()
	m.save()
	if err := m.saver.ck.CloseLog(); err != nil {
		m.log.Error(err, "decision log not closed")
	}
	ctx, cancelClose := context.WithTimeout(context.Background(), stopTimeout)
	defer cancelClose()
	m.mu.Lock()
	err := m.policy.Close(ctx)
	m.mu.Unlock()
	if err != nil {
		m.log.Error(err, "closing the policy")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reason
}

// Run starts the manager and its components, waits for ctx to end (a signal)
// or Shutdown (a component's request), then stops everything. It returns the
// shutdown's reason, nil for a signal.
func (m *Manager) Run(ctx context.Context) error {
	if err := m.Start(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-m.Done():
	}
	return m.Stop()
}
