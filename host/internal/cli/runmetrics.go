package cli

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/metrics"
)

// metricsBindGrace is how long an agent that holds the state directory keeps
// retrying a metrics address in use before it gives up: the agent it took
// over from closes the address right after it (a surge upgrade on the host
// network), anything else holding it is a misconfiguration.
const metricsBindGrace = 30 * time.Second

// listenMetrics binds addr. While the address is in use it retries, with a
// backoff from 50 ms to 1 s: indefinitely while the agent stands by (in a
// surge upgrade with hostNetwork the old agent holds the port until it exits,
// and the kubelet's probes of the new pod reach the old agent meanwhile), and
// for metricsBindGrace once it holds the state directory. Any other error,
// or ctx ending, returns at once.
func listenMetrics(ctx context.Context, addr string, standby *atomic.Bool, log logr.Logger) (net.Listener, error) {
	delay := 50 * time.Millisecond
	var since time.Time // when the address was first found in use while not standing by
	logged := false
	for {
		l, err := metrics.Listen(addr)
		if err == nil {
			if logged {
				log.Info("metrics address bound", "address", l.Addr().String())
			}
			return l, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, err
		}
		if !standby.Load() {
			if since.IsZero() {
				since = time.Now()
			} else if time.Since(since) > metricsBindGrace {
				return nil, err
			}
		}
		if !logged {
			log.Info("metrics address in use; retrying until it is free (an agent being replaced on the host network holds it until it exits)", "address", addr)
			logged = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}
