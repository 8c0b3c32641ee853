package record

import (
	"context"
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/compare"
	"github.com/nriwasm/nriwasm/host/validate"
)

// Start returns a policy instance initialized from a file's header (its
// topology, node and restore state) with the configuration under test, and
// a function that closes it.
type Start func(ctx context.Context, h *Header) (abi.Transport, func(), error)

// Result is what a replay found.
type Result struct {
	// Replayed counts the requests sent.
	Replayed int `json:"replayed"`
	// Starts counts the instances initialized from a header's snapshot
	// (one, plus one after each gap).
	Starts int `json:"starts"`
	// Differences are the requests answered differently, in order.
	Differences []Divergence `json:"differences"`
}

// Divergence is one request the replayed policy answers differently from
// the recorded answer.
type Divergence struct {
	Seq         uint64               `json:"seq"`
	Method      string               `json:"method"`
	Subject     string               `json:"subject"`
	Differences []compare.Difference `json:"differences"`
	Recorded    compare.Outcome      `json:"recorded"`
	Replayed    compare.Outcome      `json:"replayed"`
}

// Replay sends a record's requests, in order, to instances start returns,
// and compares each answer with the recorded one. A file that does not
// continue the previous one (its header's Seq is not the last exchange
// replayed: a gap, or the first file) starts a new instance from its
// snapshot; so does a gap inside a file, at the next file.
func Replay(ctx context.Context, files []*File, start Start) (*Result, error) {
	res := &Result{}
	var t abi.Transport
	stop := func() {}
	defer func() { stop() }()
	var session *compare.Session
	var last uint64
	for _, f := range files {
		if t == nil || f.Header.Seq != last {
			stop()
			var err error
			if t, stop, err = start(ctx, f.Header); err != nil {
				return res, fmt.Errorf("start the policy from %s (after request %d): %w", f.Path, f.Header.Seq, err)
			}
			res.Starts++
			limits, err := validate.New(f.Header.Topology)
			if err != nil {
				return res, fmt.Errorf("%s: %w", f.Path, err)
			}
			session = compare.NewSession(limits, f.Header.Restore.GetContainers())
			last = f.Header.Seq
		}
		for _, x := range f.Exchanges {
			if x.Seq != last+1 { // requests missing: the next file starts over
				t = nil
				break
			}
			resp, err := compare.Call(ctx, t, x.Method, x.Request)
			recorded := session.Outcome(x.Method, x.Request, x.Response, x.Err())
			replayed := session.Outcome(x.Method, x.Request, resp, err)
			session.Track(x.Method, x.Request)
			if ds := compare.Diff(recorded, replayed); len(ds) > 0 {
				res.Differences = append(res.Differences, Divergence{
					Seq: x.Seq, Method: x.Method.Short(), Subject: compare.Subject(x.Method, x.Request),
					Differences: ds, Recorded: recorded, Replayed: replayed,
				})
			}
			res.Replayed++
			last = x.Seq
		}
	}
	return res, nil
}
