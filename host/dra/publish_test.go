package dra_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nriwasm/nriwasm/host/dra"
)

// lines is a concurrency-safe log sink.
type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(&l.b, prefix, args)
}

func (l *lines) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(l.b.String(), s)
}

// TestDevicesPublishedOnlyOnceWritten: while the API server refuses every
// ResourceSlice request (unreachable), the driver never logs "devices
// published"; once it answers, the slice controller writes the slices and
// the driver logs it.
func TestDevicesPublishedOnlyOnceWritten(t *testing.T) {
	var down atomic.Bool
	var confirms atomic.Int32 // lists of this node's slices (the slice controller's own lists have no field selector)
	down.Store(true)
	log := &lines{}
	startWith(t, func(client *fake.Clientset) []dra.Option {
		client.PrependReactor("*", "resourceslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if l, ok := a.(k8stesting.ListAction); ok && strings.Contains(l.GetListRestrictions().Fields.String(), "spec.nodeName="+node) {
				confirms.Add(1)
			}
			if down.Load() {
				return true, nil, errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")
			}
			return false, nil, nil
		})
		return []dra.Option{dra.WithLogger(funcr.New(log.add, funcr.Options{Verbosity: 1}))}
	})
	deadline := time.Now().Add(30 * time.Second)
	for confirms.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: the driver read the node's slices back %d times, want at least 2", confirms.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if log.has("devices published") {
		t.Fatalf("the driver logged \"devices published\" while the API server refused every slice:\n%s", log.b.String())
	}
	down.Store(false)
	for !log.has("devices published") {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("no \"devices published\" within 60 s of the API server answering:\n%s", log.b.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPrepareRefusesAnotherNodesPool: a claim allocated a device of node-b's
// pool is refused on node-a, naming the pool, before the policy takes CPUs
// or a CDI spec is written.
func TestPrepareRefusesAnotherNodesPool(t *testing.T) {
	claim := allocatedClaim("5d0c2b7e-1f3a-4c8e-9b6d-7e8f9a0b1c2d", "cpudevnuma001", "2")
	claim.Status.Allocation.Devices.Results[0].Pool = "node-b"
	e := start(t, claim)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	_, err := e.plugin.Prepare(ctx, ref(claim))
	if err == nil || !strings.Contains(err.Error(), `pool "node-b"`) || !strings.Contains(err.Error(), `"node-a"`) {
		t.Fatalf("Prepare of a claim on node-b's pool: %v, want a refusal naming pool \"node-b\" and this node's \"node-a\"", err)
	}
	if got := e.m.PreparedClaims(); len(got) != 0 {
		t.Errorf("journaled claims = %q, want none", got)
	}
	if _, err := os.Stat(e.cdi.Path(string(claim.UID))); !os.IsNotExist(err) {
		t.Errorf("a CDI spec was written for the refused claim: %v", err)
	}
}
