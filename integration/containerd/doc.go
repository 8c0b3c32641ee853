//go:build integration

// Package containerd runs a private, real containerd for integration tests: the
// CRI plugin with runc, NRI listening on a test-owned socket, and a one-layer
// busybox image that serves as both the pause and the workload image.
//
// Every file is behind the build tag integration, so `go test ./...` neither
// builds nor runs these tests; `go test -tags integration ./integration/...`
// does. The binaries come from .ci/integration-deps: containerd, ctr and
// containerd-shim-runc-v2 in $NRIWASM_INTEGRATION_BIN (default
// $HOME/.cache/nriwasm-integration/bin), runc and /bin/busybox (static) from
// Debian. A missing binary fails the test; it is never skipped.
//
// Start registers a cleanup that removes every pod, stops containerd, kills
// leftover shims and container processes, unmounts, and deletes the root and
// the test's cgroups, also when the test fails. On failure it logs the tail
// of containerd's log.
//
// Tests must run as root on a host with cgroup v1 (cpuset hierarchy) or
// cgroup v2 and overlayfs. Pods use the host network: no CNI is configured.
package containerd
