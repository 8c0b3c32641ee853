package fleet

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
)

// Selection is what applies to a node: the object whose policy runs there
// (nil: none, the local file's stays), and the objects whose status the
// node's agent reports in.
type Selection struct {
	// Chosen is the group object that selects the node, else the default
	// object; nil if neither exists or on a conflict.
	Chosen *v1alpha1.PolicyConfig
	// Conflict lists, sorted by name, the group objects that all select the
	// node when there are two or more; none of them applies.
	Conflict []*v1alpha1.PolicyConfig
}

// Select picks the object for a node with the given labels: the one group
// object whose node selector matches, else the object named default. Two or
// more matching group objects are a conflict, never resolved by picking one.
// An object whose selector does not parse (the schema keeps them out) selects
// no node.
func Select(node labels.Set, objs []*v1alpha1.PolicyConfig) Selection {
	var matched []*v1alpha1.PolicyConfig
	var def *v1alpha1.PolicyConfig
	for _, o := range objs {
		if o.Name == v1alpha1.DefaultName {
			def = o
			continue
		}
		if o.Spec.NodeSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(o.Spec.NodeSelector)
		if err != nil || sel.Empty() || !sel.Matches(node) {
			continue
		}
		matched = append(matched, o)
	}
	slices.SortFunc(matched, func(a, b *v1alpha1.PolicyConfig) int { return strings.Compare(a.Name, b.Name) })
	switch len(matched) {
	case 0:
		return Selection{Chosen: def}
	case 1:
		return Selection{Chosen: matched[0]}
	}
	return Selection{Conflict: matched}
}

// ConflictMessage is the status message of a conflict on node.
func ConflictMessage(node string, objs []*v1alpha1.PolicyConfig) string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.Name
	}
	return fmt.Sprintf("node %s is selected by PolicyConfigs %s: none applies until only one selects it (change a spec.nodeSelector or the node's labels); the running configuration stays",
		node, strings.Join(names, " and "))
}
