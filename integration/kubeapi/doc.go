//go:build integration

// Package kubeapi runs a private, real kube-apiserver with etcd for
// integration tests: the same binaries and authorization a cluster has
// (RBAC and Node authorizers, client certificates for the admin,
// service-account tokens bound to pods, resource.k8s.io/v1 with KEP-4817's
// claim status and its per-driver authorization), with no controllers,
// scheduler or kubelet.
//
// Every file is behind the build tag integration. The binaries come from
// .ci/kube-deps: kube-apiserver v1.37.2 and etcd in $NRIWASM_INTEGRATION_BIN
// (default $HOME/.cache/nriwasm-integration/bin). A missing binary fails the
// test; it is never skipped.
//
// Start runs one server for a test; Main and Shared run one for a whole
// test package (a start takes seconds). Each server lives in its own
// temporary directory with its own CA, serving and admin certificates and
// service-account key pair, on free ports; the cleanup kills both processes
// and removes the directory.
//
// A DRA driver's view of the cluster: InstallDriver sets a driver up as the
// Helm chart does — a service account holding only the ClusterRole of
// rbac/driver-clusterrole.yaml and limited by the ValidatingAdmissionPolicy
// of rbac/resourceslice-policy.yaml to its own node's ResourceSlices — and
// DriverClient authenticates as that service account in a pod on a given
// node, so the API server's associated-node checks apply to it.
package kubeapi
