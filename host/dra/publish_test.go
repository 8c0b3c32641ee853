package dra_test

import (
	"errors"
	"fmt"
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
	startWith(t, func(o *dra.Options) {
		o.Logger = funcr.New(log.add, funcr.Options{Verbosity: 1})
		o.KubeClient.(*fake.Clientset).PrependReactor("*", "resourceslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if l, ok := a.(k8stesting.ListAction); ok && strings.Contains(l.GetListRestrictions().Fields.String(), "spec.nodeName="+node) {
				confirms.Add(1)
			}
			if down.Load() {
				return true, nil, errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")
			}
			return false, nil, nil
		})
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
