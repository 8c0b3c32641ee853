//go:build integration && e2e

// Package e2e runs a real one-node Kubernetes cluster on this machine — etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kubelet
// v1.37.2 with containerd 2.4, runc and NRI — installs the Helm chart into
// it, and checks the agent end to end through the real peers: the
// DaemonSet's pod, the containers' cgroups, the real scheduler's
// allocations, the kubelet's DRA calls and the claims' status.
//
// Start builds the cluster (Cluster); BuildAgentImage writes the agent's
// image without a container engine. Every file carries the build tags
// integration and e2e: `make e2e` runs the package (docs/e2e.md).
package e2e
