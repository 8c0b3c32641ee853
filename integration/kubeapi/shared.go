//go:build integration

package kubeapi

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

var shared struct {
	once sync.Once
	s    *Server
	err  error
}

// Main runs a package's tests with one server for all of them: the first
// Shared call starts it, Main stops it after the tests. Use it as
//
//	func TestMain(m *testing.M) { os.Exit(kubeapi.Main(m)) }
//
// A package whose selected tests never call Shared starts nothing. Tests
// sharing the server keep apart by names: a namespace each (Namespace),
// unique node names.
func Main(m *testing.M) int {
	code := m.Run()
	if shared.s != nil {
		if code != 0 {
			fmt.Fprintf(os.Stderr, "kube-apiserver log (%s), last 32 KiB:\n%s\n", shared.s.APIServerLog, Tail(shared.s.APIServerLog, 32<<10))
		}
		if err := shared.s.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "kube-apiserver teardown: %v\n", err)
			code = 1
		}
	}
	return code
}

// Shared returns the package's server, starting it on first use; the
// package's TestMain must call Main (which stops it).
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() {
		shared.s, shared.err = New()
		if shared.err == nil {
			t.Logf("FIGURE kube-apiserver + etcd ready after %v", shared.s.ReadyAfter)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.s
}
