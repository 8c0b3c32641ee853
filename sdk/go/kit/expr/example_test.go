package expr_test

import (
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/expr"
)

// Validate when the configuration loads; Matches and Expand when a
// container comes.
func Example() {
	rule := expr.Expression{Key: "pod/labels/tier", Operator: expr.In, Values: []string{"fast", "faster"}}
	if err := rule.Validate(); err != nil {
		panic(err)
	}
	pod := &abi.PodSandbox{Namespace: "prod", Labels: map[string]string{"tier": "fast", "app": "db"}}
	c := &abi.Container{Name: "postgres"}
	fmt.Println(rule.Matches(pod, c))

	group, _ := expr.Expand("${pod/labels/app}-$namespace", func(k string) (string, bool) { return expr.Value(k, pod, c) })
	fmt.Println(group)
	// Output:
	// true
	// db-prod
}
