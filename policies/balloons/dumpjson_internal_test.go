package balloons

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestDumpJSONAsEncodingJSON compares the hand-written JSON of the dump and
// of a device's status with encoding/json's on values with every omitempty
// field empty and set, nil and empty lists, and strings that need escaping.
func TestDumpJSONAsEncodingJSON(t *testing.T) {
	odd := "a\"b\\c<d>&e\u2028\x01\xff"
	dumps := []Dump{
		{},
		{Available: "0-3", Free: "1-3", Balloons: []DumpBalloon{}, Containers: []DumpContainer{}},
		{Available: odd, Reserved: "0", Free: odd,
			Balloons: []DumpBalloon{
				{Name: "default[0]", Type: "default", CPUs: "1-3"},
				{Name: odd, Type: odd, Instance: 2, CPUs: odd, SharedIdle: "4", Parts: []string{"a[0]:1", odd}, RequestMilli: -1500,
					MinCPUs: 1, MaxCPUs: -1, Containers: []string{}, Claim: odd, Device: "dev-0"},
				{Name: "x", Parts: []string{}, Containers: []string{"c1", "c2"}},
			},
			Containers: []DumpContainer{
				{ID: "c1"},
				{ID: odd, Namespace: odd, Balloon: odd, CPUs: "0", Mems: "0", Milli: 250, HideHT: true, MemoryTypes: "DRAM,PMEM"},
			}},
	}
	for _, d := range dumps {
		want, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.appendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("appendJSON\n%s\nencoding/json\n%s", got, want)
		}
	}
	for _, s := range []statusData{{}, {Balloon: odd, CPUSet: "0-1", NUMANodes: "0"}} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.appendJSON([]byte("prefix")); !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("appendJSON %s, encoding/json %s", got, want)
		}
	}
}
