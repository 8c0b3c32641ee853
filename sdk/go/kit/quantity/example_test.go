package quantity_test

import (
	"encoding/json"
	"fmt"

	"github.com/nriwasm/nriwasm/sdk/go/kit/quantity"
)

// A configuration field takes either form; Kind tells which was given.
func ExampleCPUAmount() {
	var cfg struct {
		Reserved  quantity.CPUAmount `json:"reserved"`
		Available quantity.CPUAmount `json:"available"`
		Other     quantity.CPUAmount `json:"other"`
	}
	if err := json.Unmarshal([]byte(`{"reserved": "1500m", "available": "exclude-cpuset:0-1"}`), &cfg); err != nil {
		panic(err)
	}
	fmt.Println(cfg.Reserved.Kind == quantity.Quantity, cfg.Reserved.Milli)
	fmt.Println(cfg.Available.Kind == quantity.ExcludeCPUSet, cfg.Available.Set)
	fmt.Println(cfg.Other.Kind == quantity.Absent)
	// Output:
	// true 1500
	// true 0-1
	// true
}

func ExampleParseMilliCPU() {
	for _, s := range []string{"2", "0.25", "750m", "0.0001"} {
		milli, err := quantity.ParseMilliCPU(s)
		fmt.Println(milli, err)
	}
	// Output:
	// 2000 <nil>
	// 250 <nil>
	// 750 <nil>
	// 0 quantity "0.0001": finer than 1m (want e.g. "2", "0.5", "750m", "cpuset:0-1")
}
