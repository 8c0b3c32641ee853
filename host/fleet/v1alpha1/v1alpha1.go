// Package v1alpha1 holds the types of the nriwasm.io/v1alpha1 API: the
// PolicyConfig custom resource, one object per node group, that tells the
// agents which policy to run with which configuration, and in whose status
// each agent reports, for its own node, what it applied.
//
// The CustomResourceDefinition is charts/nriwasm/crds/policyconfigs.yaml;
// docs/fleet.md explains the API with examples. The agent reads these objects
// with the dynamic client and decodes them with FromUnstructured
// (host/fleet/RATIONALE.md, "Why the dynamic client for PolicyConfig?").
package v1alpha1

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API's group, version, kind and resource.
const (
	Group    = "nriwasm.io"
	Version  = "v1alpha1"
	Kind     = "PolicyConfig"
	Resource = "policyconfigs"
)

// DefaultName is the name of the default object: it applies to every node
// that no group object selects, and it has no node selector.
const DefaultName = "default"

// GroupLabel is the node label the chart's examples and docs/fleet.md group
// nodes by (nri-plugins calls theirs config.nri/group); a group object
// selects it with nodeSelector.matchLabels. Any other selector works too.
const GroupLabel = "nriwasm.io/group"

// GroupVersionResource is the resource the dynamic client reads.
var GroupVersionResource = schema.GroupVersionResource{Group: Group, Version: Version, Resource: Resource}

// PolicyConfig is a policy and its configuration for a group of nodes.
type PolicyConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PolicyConfigSpec   `json:"spec"`
	Status            PolicyConfigStatus `json:"status,omitempty"`
}

// PolicyConfigSpec says what runs on the nodes an object selects.
type PolicyConfigSpec struct {
	// Policy is a built-in policy's name (topology-aware, balloons,
	// conformance) or an OCI reference pinned by digest:
	// oci://REGISTRY/REPOSITORY@sha256:DIGEST (the schema refuses a tag).
	// Required.
	Policy string `json:"policy"`
	// Config is the policy's own configuration, an object the API server
	// keeps as is and the policy validates on each node. Default: none.
	Config json.RawMessage `json:"config,omitempty"`
	// NodeSelector picks the nodes of a group object, by their labels (for
	// example matchLabels nriwasm.io/group: gpu). Required on every object
	// but the one named "default", which must not have it. A node that two
	// group objects select runs neither: both report the conflict.
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
}

// PolicyConfigStatus is written by the agents, each its own entry.
type PolicyConfigStatus struct {
	// Nodes has one entry per node the object selects, keyed by node name,
	// each written by that node's agent with server-side apply under its
	// own field manager (FieldManager).
	Nodes []NodeStatus `json:"nodes,omitempty"`
}

// NodeStatus is one node's report.
type NodeStatus struct {
	// Node is the node's name, the key of the list.
	Node string `json:"node"`
	// ObservedGeneration is the object's generation the agent last acted on.
	ObservedGeneration int64 `json:"observedGeneration"`
	// AppliedGeneration is the generation whose policy and configuration
	// run on the node; absent while none has applied.
	AppliedGeneration int64 `json:"appliedGeneration,omitempty"`
	// Policy is the name of the policy running on the node.
	Policy string `json:"policy,omitempty"`
	// PolicyDigest is the sha256 digest of the running policy module.
	PolicyDigest string `json:"policyDigest,omitempty"`
	// Conditions holds the condition Applied: True when the observed
	// generation runs, else False with the reason (Reason*) and the error,
	// which names the field.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionApplied is the type of a node entry's one condition.
const ConditionApplied = "Applied"

// The reasons of the Applied condition.
const (
	// ReasonApplied: the observed generation runs on the node.
	ReasonApplied = "Applied"
	// ReasonInvalid: the policy or the agent refused the configuration; the
	// last good one keeps running.
	ReasonInvalid = "Invalid"
	// ReasonRestartRequired: the change (a different policy, for example)
	// takes effect only when the agent restarts.
	ReasonRestartRequired = "RestartRequired"
	// ReasonConflict: two group objects select the node; neither applies.
	ReasonConflict = "Conflict"
)

// FieldManager is the server-side apply field manager of node's agent. Each
// node has its own, so one agent's apply never removes another's entry.
func FieldManager(node string) string { return "nriwasm-agent/" + node }

// FromUnstructured decodes an object read with the dynamic client.
func FromUnstructured(u *unstructured.Unstructured) (*PolicyConfig, error) {
	data, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode PolicyConfig %s: %w", u.GetName(), err)
	}
	var pc PolicyConfig
	if err := json.Unmarshal(data, &pc); err != nil {
		return nil, fmt.Errorf("decode PolicyConfig %s: %w", u.GetName(), err)
	}
	return &pc, nil
}

// StatusApply is the server-side apply configuration of status for one
// node's entry of the object named name: entry, or with entry nil, none
// (which removes the entry that node's field manager owns).
func StatusApply(name string, entry *NodeStatus) (*unstructured.Unstructured, error) {
	nodes := []any{}
	if entry != nil {
		data, err := json.Marshal(entry)
		if err != nil {
			return nil, fmt.Errorf("encode status of node %s: %w", entry.Node, err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("encode status of node %s: %w", entry.Node, err)
		}
		nodes = append(nodes, m)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Group + "/" + Version,
		"kind":       Kind,
		"metadata":   map[string]any{"name": name},
		"status":     map[string]any{"nodes": nodes},
	}}, nil
}
