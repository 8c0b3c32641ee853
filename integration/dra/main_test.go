//go:build integration

// Package dra_test runs the agent's DRA driver against a real kube-apiserver
// (integration/kubeapi): ResourceSlices published as the driver's service
// account, the API server's own validation compared with host/validate, the
// scheduler's allocator allocating claims from what we publish, and those
// claims prepared through the kubelet stand-in with their status written back.
package dra_test

import (
	"os"
	"testing"

	"github.com/nriwasm/nriwasm/integration/kubeapi"
)

func TestMain(m *testing.M) { os.Exit(kubeapi.Main(m)) }
