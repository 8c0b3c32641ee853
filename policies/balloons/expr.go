package balloons

import (
	"fmt"
	"path"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// Expression is a matchExpressions entry, with nri-plugins' keys and
// operators.
type Expression struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

// operators maps each operator to how many values it takes (-1: at least
// one).
var operators = map[string]int{
	"Equals": 1, "NotEqual": 1, "In": -1, "NotIn": -1, "Exists": 0, "NotExist": 0,
	"AlwaysTrue": 0, "Matches": 1, "MatchesNot": 1, "MatchesAny": -1, "MatchesNone": -1,
}

func (e *Expression) check() (string, error) {
	n, ok := operators[e.Operator]
	switch {
	case !ok:
		known := make([]string, 0, len(operators))
		for op := range operators {
			known = append(known, op)
		}
		slices.Sort(known)
		return "operator", fmt.Errorf("%q: want one of %s", e.Operator, strings.Join(known, ", "))
	case e.Operator != "AlwaysTrue" && !validKey(e.Key):
		return "key", fmt.Errorf("%q: want name, namespace, qosclass, id, labels/KEY, pod/name, pod/namespace, pod/qosclass, pod/id, pod/uid or pod/labels/KEY", e.Key)
	case n >= 0 && len(e.Values) != n:
		return "values", fmt.Errorf("%s takes %d values, got %d", e.Operator, n, len(e.Values))
	case n == -1 && len(e.Values) == 0:
		return "values", fmt.Errorf("%s takes at least one value", e.Operator)
	}
	if strings.HasPrefix(e.Operator, "Matches") {
		for _, v := range e.Values {
			if _, err := path.Match(v, ""); err != nil {
				return "values", fmt.Errorf("bad pattern %q", v)
			}
		}
	}
	return "", nil
}

func checkExpressions(list []Expression, parts ...any) error {
	for i := range list {
		if f, err := list[i].check(); err != nil {
			return policyconfig.Errorf(field(append(parts, i, f)...), "%v", err)
		}
	}
	return nil
}

func validKey(k string) bool {
	switch k {
	case "name", "namespace", "qosclass", "id", "pod/name", "pod/namespace", "pod/qosclass", "pod/id", "pod/uid":
		return true
	}
	l, ok := strings.CutPrefix(k, "labels/")
	if !ok {
		l, ok = strings.CutPrefix(k, "pod/labels/")
	}
	return ok && l != ""
}

// qosName is the class as nri-plugins writes it.
func qosName(q abi.QOSClass) string {
	switch q {
	case abi.QOSClass_QOS_CLASS_GUARANTEED:
		return "Guaranteed"
	case abi.QOSClass_QOS_CLASS_BURSTABLE:
		return "Burstable"
	case abi.QOSClass_QOS_CLASS_BEST_EFFORT:
		return "BestEffort"
	}
	return ""
}

// keyValue looks an expression key up on a container and its pod.
func keyValue(key string, pod *abi.PodSandbox, c *abi.Container) (string, bool) {
	if c == nil {
		return "", false
	}
	if l, ok := strings.CutPrefix(key, "pod/labels/"); ok {
		v, ok := pod.GetLabels()[l]
		return v, ok
	}
	if l, ok := strings.CutPrefix(key, "labels/"); ok {
		v, ok := c.GetLabels()[l]
		return v, ok
	}
	switch key {
	case "name":
		return c.GetName(), true
	case "id":
		return c.GetId(), true
	case "namespace", "pod/namespace":
		return namespaceOf(pod, c), true
	case "qosclass", "pod/qosclass":
		q := c.GetQosClass()
		if q == abi.QOSClass_QOS_CLASS_UNSPECIFIED {
			q = pod.GetQosClass()
		}
		return qosName(q), true
	case "pod/name":
		return pod.GetName(), pod != nil
	case "pod/id":
		return pod.GetId(), pod != nil
	case "pod/uid":
		return pod.GetUid(), pod != nil
	}
	return "", false
}

func namespaceOf(pod *abi.PodSandbox, c *abi.Container) string {
	if ns := c.GetNamespace(); ns != "" {
		return ns
	}
	return pod.GetNamespace()
}

// matches evaluates the expression on a container.
func (e *Expression) matches(pod *abi.PodSandbox, c *abi.Container) bool {
	v, ok := keyValue(e.Key, pod, c)
	glob := func(p string) bool { m, _ := path.Match(p, v); return ok && m }
	switch e.Operator {
	case "AlwaysTrue":
		return true
	case "Exists":
		return ok
	case "NotExist":
		return !ok
	case "Equals":
		return ok && v == e.Values[0]
	case "NotEqual":
		return !ok || v != e.Values[0]
	case "In":
		return ok && slices.Contains(e.Values, v)
	case "NotIn":
		return !ok || !slices.Contains(e.Values, v)
	case "Matches":
		return glob(e.Values[0])
	case "MatchesNot":
		return !glob(e.Values[0])
	case "MatchesAny":
		return slices.ContainsFunc(e.Values, glob)
	case "MatchesNone":
		return !slices.ContainsFunc(e.Values, glob)
	}
	return false
}

// expand substitutes key references in a groupBy expression with
// lookup(KEY) (an absent key expands to the empty string), as nri-plugins'
// Expand (pkg/apis/resmgr/v1alpha1/expression.go) reads them: ${KEY}, or a
// plain $KEY that runs to the next '$' or the end; "$$" is a '$'.
func expand(expr string, lookup func(string) (string, bool)) (string, error) {
	orig := expr
	var b strings.Builder
	for len(expr) > 0 {
		i := strings.IndexByte(expr, '$')
		if i < 0 {
			b.WriteString(expr)
			break
		}
		b.WriteString(expr[:i])
		rest := expr[i+1:]
		var key string
		switch {
		case strings.HasPrefix(rest, "$"):
			b.WriteByte('$')
			expr = rest[1:]
			continue
		case strings.HasPrefix(rest, "{"):
			j := strings.IndexByte(rest, '}')
			if j < 0 {
				return "", fmt.Errorf("%q: unterminated ${", orig)
			}
			key, expr = rest[1:j], rest[j+1:]
		default:
			j := strings.IndexByte(rest, '$')
			if j < 0 {
				j = len(rest)
			}
			key, expr = rest[:j], rest[j:]
		}
		if !validKey(key) {
			return "", fmt.Errorf("%q: unknown key %q", orig, key)
		}
		v, _ := lookup(key)
		b.WriteString(v)
	}
	return b.String(), nil
}
