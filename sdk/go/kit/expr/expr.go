// Package expr evaluates nri-plugins' container expressions: the
// matchExpressions entries {key, operator, values} of balloon types and
// preserve rules, and the ${KEY} references of groupBy, read as
// nri-plugins' pkg/apis/resmgr/v1alpha1/expression.go reads them.
//
// Keys name a container's or its pod's fields: name, namespace, qosclass,
// id, labels/KEY, pod/name, pod/namespace, pod/qosclass, pod/id, pod/uid,
// pod/labels/KEY.
package expr

import (
	"fmt"
	"path"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// The operators, as nri-plugins spells them.
const (
	Equals      = "Equals"      // the key's value is Values[0] ("*": any value)
	NotEqual    = "NotEqual"    // the key is absent or its value is not Values[0]
	In          = "In"          // the value is one of Values ("*": any value)
	NotIn       = "NotIn"       // not In
	Exists      = "Exists"      // the key is present
	NotExist    = "NotExist"    // the key is absent
	AlwaysTrue  = "AlwaysTrue"  // every container
	Matches     = "Matches"     // the value matches the glob Values[0]
	MatchesNot  = "MatchesNot"  // not Matches
	MatchesAny  = "MatchesAny"  // the value matches one of the globs Values
	MatchesNone = "MatchesNone" // not MatchesAny
)

// arity is how many values each operator takes (-1: any number, none
// included, as nri-plugins' Validate: an empty In matches nothing, an empty
// NotIn everything).
var arity = map[string]int{
	Equals: 1, NotEqual: 1, In: -1, NotIn: -1, Exists: 0, NotExist: 0,
	AlwaysTrue: 0, Matches: 1, MatchesNot: 1, MatchesAny: -1, MatchesNone: -1,
}

// Expression is a matchExpressions entry.
type Expression struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

// FieldError is a refused expression: Field is "key", "operator" or
// "values".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// Validate checks the operator, the key (but for AlwaysTrue), the number
// of values and the glob patterns; a refusal is a *FieldError.
func (e *Expression) Validate() error {
	n, ok := arity[e.Operator]
	switch {
	case !ok:
		known := make([]string, 0, len(arity))
		for op := range arity {
			known = append(known, op)
		}
		slices.Sort(known)
		return &FieldError{"operator", fmt.Errorf("%q: want one of %s", e.Operator, strings.Join(known, ", "))}
	case e.Operator != AlwaysTrue && !ValidKey(e.Key):
		return &FieldError{"key", fmt.Errorf("%q: want name, namespace, qosclass, id, labels/KEY, pod/name, pod/namespace, pod/qosclass, pod/id, pod/uid or pod/labels/KEY", e.Key)}
	case n >= 0 && len(e.Values) != n:
		return &FieldError{"values", fmt.Errorf("%s takes %d values, got %d", e.Operator, n, len(e.Values))}
	}
	if strings.HasPrefix(e.Operator, Matches) {
		for _, v := range e.Values {
			if _, err := path.Match(v, ""); err != nil {
				return &FieldError{"values", fmt.Errorf("bad pattern %q: %w", v, err)}
			}
		}
	}
	return nil
}

// ValidKey tells whether k is a key Value resolves.
func ValidKey(k string) bool {
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

// QOSName is the class as nri-plugins writes it ("Guaranteed",
// "Burstable", "BestEffort"; "" unspecified).
func QOSName(q abi.QOSClass) string {
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

// Namespace is the container's namespace, else its pod's.
func Namespace(pod *abi.PodSandbox, c *abi.Container) string {
	if ns := c.GetNamespace(); ns != "" {
		return ns
	}
	return pod.GetNamespace()
}

// Value looks key up on a container and its pod; false when the key is
// absent (a missing label, no pod, no container) or unknown.
func Value(key string, pod *abi.PodSandbox, c *abi.Container) (string, bool) {
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
		return Namespace(pod, c), true
	case "qosclass", "pod/qosclass":
		q := c.GetQosClass()
		if q == abi.QOSClass_QOS_CLASS_UNSPECIFIED {
			q = pod.GetQosClass()
		}
		return QOSName(q), true
	case "pod/name":
		return pod.GetName(), pod != nil
	case "pod/id":
		return pod.GetId(), pod != nil
	case "pod/uid":
		return pod.GetUid(), pod != nil
	}
	return "", false
}

// Matches evaluates a valid expression on a container; an unknown
// operator matches nothing.
func (e *Expression) Matches(pod *abi.PodSandbox, c *abi.Container) bool {
	v, ok := Value(e.Key, pod, c)
	equal := func(want string) bool { return ok && (v == want || want == "*") }
	glob := func(p string) bool { m, _ := path.Match(p, v); return ok && m }
	switch e.Operator {
	case AlwaysTrue:
		return true
	case Exists:
		return ok
	case NotExist:
		return !ok
	case Equals:
		return equal(e.Values[0])
	case NotEqual:
		return !ok || v != e.Values[0]
	case In:
		return slices.ContainsFunc(e.Values, equal)
	case NotIn:
		return !slices.ContainsFunc(e.Values, equal)
	case Matches:
		return glob(e.Values[0])
	case MatchesNot:
		return !glob(e.Values[0])
	case MatchesAny:
		return slices.ContainsFunc(e.Values, glob)
	case MatchesNone:
		return !slices.ContainsFunc(e.Values, glob)
	}
	return false
}

// Expand substitutes key references in a groupBy expression with
// lookup(KEY) (an absent key expands to the empty string), as nri-plugins'
// Expand reads them: ${KEY}, or a plain $KEY that runs to the next '$' or
// the end; "$$" is a '$'. An unterminated ${ or a key ValidKey refuses is
// an error.
func Expand(expr string, lookup func(key string) (string, bool)) (string, error) {
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
		if !ValidKey(key) {
			return "", fmt.Errorf("%q: unknown key %q", orig, key)
		}
		v, _ := lookup(key)
		b.WriteString(v)
	}
	return b.String(), nil
}
