package nri_test

import (
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
)

// parse parses a cpuset, failing the test on a bad one.
func parse(t testing.TB, list string) cpuset.Set {
	t.Helper()
	s, err := cpuset.Parse(list)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// requireConsistent checks that the runtime runs every container the journal
// knows with the CPUs the journal assigned it.
func requireConsistent(t testing.TB, rt *fakeRuntime, a *agent) {
	t.Helper()
	for _, c := range a.m.Journal().GetContainers() {
		want := c.GetAssignment().GetCpusetCpus()
		if got := rt.cpus(c.GetId()); want != "" && got != want {
			t.Errorf("container %s: runtime runs it on %q, the journal assigned %q", c.GetId(), got, want)
		}
	}
}

func require[T comparable](t testing.TB, got, want T, what string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}
