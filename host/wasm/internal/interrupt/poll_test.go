package interrupt

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// errStopped is what the test poll function panics with once stopped.
var errStopped = errors.New("stopped by the host")

// poller is a test host's PollModule.PollName: it counts polls, resets the
// countdown, and fails the call once stop is set.
type poller struct {
	stop  atomic.Bool
	polls atomic.Int64
}

// providePoll instantiates the poll import in r.
func providePoll(tb testing.TB, r wazero.Runtime) *poller {
	tb.Helper()
	p := &poller{}
	fn := api.GoModuleFunc(func(_ context.Context, mod api.Module, _ []uint64) {
		p.polls.Add(1)
		if p.stop.Load() {
			panic(errStopped)
		}
		mod.ExportedGlobal(GlobalName).(api.MutableGlobal).Set(Countdown)
	})
	_, err := r.NewHostModuleBuilder(PollModule).NewFunctionBuilder().
		WithGoModuleFunction(fn, nil, nil).Export(PollName).Instantiate(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
