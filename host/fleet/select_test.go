package fleet

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
)

func object(name string, sel *metav1.LabelSelector) *v1alpha1.PolicyConfig {
	return &v1alpha1.PolicyConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.PolicyConfigSpec{Policy: "topology-aware", NodeSelector: sel}}
}

func group(name, value string) *v1alpha1.PolicyConfig {
	return object(name, &metav1.LabelSelector{MatchLabels: map[string]string{v1alpha1.GroupLabel: value}})
}

func TestSelect(t *testing.T) {
	def := object(v1alpha1.DefaultName, nil)
	gpu, batch := group("gpu", "gpu"), group("batch", "batch")
	big := object("big", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "size", Operator: metav1.LabelSelectorOpIn, Values: []string{"big"}}}})
	broken := object("broken", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "size", Operator: "Near"}}})
	noSelector := object("stray", nil)
	all := []*v1alpha1.PolicyConfig{batch, big, def, gpu, broken, noSelector}
	for _, c := range []struct {
		name     string
		labels   labels.Set
		objs     []*v1alpha1.PolicyConfig
		chosen   string
		conflict string
	}{
		{"a group by its label", labels.Set{v1alpha1.GroupLabel: "gpu"}, all, "gpu", ""},
		{"another group", labels.Set{v1alpha1.GroupLabel: "batch"}, all, "batch", ""},
		{"no group: the default", labels.Set{"other": "x"}, all, "default", ""},
		{"no group, no default: nothing", labels.Set{}, []*v1alpha1.PolicyConfig{gpu}, "", ""},
		{"an expression selector", labels.Set{"size": "big", "zone": "a"}, all, "big", ""},
		{"two groups: a conflict, sorted", labels.Set{v1alpha1.GroupLabel: "gpu", "size": "big"}, all, "", "big gpu"},
		{"a broken selector selects nothing", labels.Set{"size": "small"}, all, "default", ""},
		{"nothing at all", labels.Set{}, nil, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sel := Select(c.labels, c.objs)
			got := ""
			if sel.Chosen != nil {
				got = sel.Chosen.Name
			}
			var conflict []string
			for _, o := range sel.Conflict {
				conflict = append(conflict, o.Name)
			}
			if got != c.chosen || strings.Join(conflict, " ") != c.conflict {
				t.Errorf("Select(%v) = %q, conflict %v; want %q, conflict %q", c.labels, got, conflict, c.chosen, c.conflict)
			}
		})
	}
}

func TestConflictMessageNamesBoth(t *testing.T) {
	msg := ConflictMessage("node-1", []*v1alpha1.PolicyConfig{group("a", "a"), group("b", "b")})
	for _, want := range []string{"node node-1", "PolicyConfigs a and b", "running configuration stays"} {
		if !strings.Contains(msg, want) {
			t.Errorf("ConflictMessage = %q, want it to contain %q", msg, want)
		}
	}
}
