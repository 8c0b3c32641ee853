package fleet

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
)

// Served reports whether the API server serves PolicyConfig
// (nriwasm.io/v1alpha1): false, with no error, when the CRD is not
// installed; an error when the server cannot be asked.
func Served(d discovery.DiscoveryInterface) (bool, error) {
	res, err := d.ServerResourcesForGroupVersion(v1alpha1.Group + "/" + v1alpha1.Version)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("fleet: discover %s/%s: %w", v1alpha1.Group, v1alpha1.Version, err)
	}
	for _, r := range res.APIResources {
		if r.Name == v1alpha1.Resource {
			return true, nil
		}
	}
	return false, nil
}

// Initial reads the node and the PolicyConfig objects once and selects, so
// the agent starts with the policy its node is meant to run (Run then
// follows the changes).
func Initial(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, node string) (Selection, error) {
	n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return Selection{}, fmt.Errorf("fleet: read node %s: %w", node, err)
	}
	list, err := dyn.Resource(v1alpha1.GroupVersionResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return Selection{}, fmt.Errorf("fleet: list PolicyConfigs: %w", err)
	}
	var objs []*v1alpha1.PolicyConfig
	for i := range list.Items {
		pc, err := v1alpha1.FromUnstructured(&list.Items[i])
		if err != nil {
			return Selection{}, err
		}
		objs = append(objs, pc)
	}
	return Select(labels.Set(n.Labels), objs), nil
}
