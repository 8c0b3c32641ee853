package config_test

import (
	"fmt"

	"github.com/nriwasm/nriwasm/host/config"
)

// The agent compares each configuration Watch delivers with the running one.
func ExampleDiff() {
	parse := func(yaml string) *config.Config {
		c, err := config.Parse([]byte(yaml))
		if err == nil {
			err = c.Complete("/etc/nriwasm")
		}
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			panic(err)
		}
		return c
	}
	running := parse("policy: {name: topology-aware}")

	edited := parse("policy: {name: topology-aware, config: {reservedCPUs: 0-1}}")
	change := config.Diff(running, edited)
	fmt.Printf("%t %v %s\n", change.PolicyConfig, change.Err(), edited.Policy.Data)

	edited = parse("policy: {name: topology-aware}\ndra: {enabled: true}")
	fmt.Println(config.Diff(running, edited).Err())
	// Output:
	// true <nil> {"reservedCPUs":"0-1"}
	// restart required to change dra.enabled
}
