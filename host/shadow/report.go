package shadow

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/nriwasm/nriwasm/host/compare"
)

// Report is what a shadow has compared so far, as /debug/shadow serves it.
type Report struct {
	// Policy is the shadow policy's name.
	Policy string `json:"policy"`
	// State is StateLoading, StateRunning or StateDropped; Reason says why
	// it was dropped.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Compared counts the requests both policies answered; Divergences those
	// answered differently.
	Compared    uint64 `json:"compared"`
	Divergences uint64 `json:"divergences"`
	// Methods splits the counts by method.
	Methods map[string]*MethodStats `json:"methods"`
	// Dropped counts requests the full queue dropped; Resyncs the rebuilds
	// from the active journal (after drops or failures); Failures the shadow
	// calls that failed at runtime.
	Dropped  uint64 `json:"dropped"`
	Resyncs  uint64 `json:"resyncs"`
	Failures uint64 `json:"failures"`
	// Keep is how many divergences Last keeps; Last holds them, oldest first.
	Keep int          `json:"keep"`
	Last []Divergence `json:"last"`
}

// MethodStats are one method's counts.
type MethodStats struct {
	Compared    uint64 `json:"compared"`
	Divergences uint64 `json:"divergences"`
}

// Divergence is one request the two policies answered differently.
type Divergence struct {
	// Seq numbers the request among those the agent handled since it started.
	Seq uint64 `json:"seq"`
	// Time is when the active policy answered.
	Time time.Time `json:"time"`
	// Method is the call; Subject what it concerns (compare.Subject).
	Method  string `json:"method"`
	Subject string `json:"subject"`
	// Differences lists what differs; Active and Shadow are both answers as
	// the agent would apply them.
	Differences []compare.Difference `json:"differences"`
	Active      compare.Outcome      `json:"active"`
	Shadow      compare.Outcome      `json:"shadow"`
}

// Report returns a copy of the shadow's report.
func (s *Shadow) Report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.report
	r.Methods = make(map[string]*MethodStats, len(s.report.Methods))
	for k, v := range s.report.Methods {
		c := *v
		r.Methods[k] = &c
	}
	r.Last = slices.Clone(s.report.Last)
	if r.Last == nil {
		r.Last = []Divergence{}
	}
	return r
}

// MethodNames lists the report's methods, sorted.
func (r *Report) MethodNames() []string { return slices.Sorted(maps.Keys(r.Methods)) }

// Handler serves the report as JSON.
func (s *Shadow) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.Report())
	})
}
