//go:build integration

package kubeapi

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespace creates a namespace for the test (nriwasm-test-<n>). It is not
// deleted: without a controller manager a deleted namespace never finishes
// terminating; the server's cleanup removes it with everything else.
func (s *Server) Namespace(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "nriwasm-test-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	return ns.Name
}

// CreateNode creates a Node object named name (no kubelet behind it),
// deleted when the test ends.
func (s *Server) CreateNode(t testing.TB, name string) *corev1.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := s.client.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() {
		err := s.client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting node %s: %v", name, err)
		}
	})
	return n
}

// CreateAllocatedClaim creates ResourceClaim namespace/name with one
// request per distinct request name in results (device class
// "nriwasm-test": nothing checks that it exists) and, as the scheduler
// would, sets status.allocation to results on node: a node selector with
// exactly one term matching the node's metadata.name, which is how the API
// server tells which node a claim is allocated on. It returns the claim as
// stored.
func (s *Server) CreateAllocatedClaim(t testing.TB, namespace, name, node string, results ...resourcev1.DeviceRequestAllocationResult) *resourcev1.ResourceClaim {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var requests []resourcev1.DeviceRequest
	for _, r := range results {
		if !slices.ContainsFunc(requests, func(q resourcev1.DeviceRequest) bool { return q.Name == r.Request }) {
			requests = append(requests, resourcev1.DeviceRequest{
				Name:    r.Request,
				Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "nriwasm-test"},
			})
		}
	}
	claims := s.client.ResourceV1().ResourceClaims(namespace)
	claim, err := claims.Create(ctx, &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: requests}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating claim %s/%s: %v", namespace, name, err)
	}
	claim.Status.Allocation = &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: results},
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}
	claim, err = claims.UpdateStatus(ctx, claim, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("allocating claim %s/%s on %s: %v", namespace, name, node, err)
	}
	return claim
}

// Result is a shorthand for one allocation result.
func Result(request, driver, pool, device string) resourcev1.DeviceRequestAllocationResult {
	return resourcev1.DeviceRequestAllocationResult{Request: request, Driver: driver, Pool: pool, Device: device}
}

// UniqueName returns prefix-<n>, unique within this server.
func (s *Server) UniqueName(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s-%d", prefix, s.seq)
}
