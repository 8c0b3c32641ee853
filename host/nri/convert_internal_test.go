package nri

import (
	"testing"

	"github.com/containerd/nri/pkg/api"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func TestResources(t *testing.T) {
	tests := []struct {
		name               string
		shares             uint64
		quota              int64
		period             uint64
		wantReq, wantLimit int64
	}{
		{"1 CPU", 1024, 100000, 100000, 1000, 1000},
		{"100m request, no limit", 102, 0, 0, 100, 0},
		{"250m", 256, 25000, 100000, 250, 250},
		{"BestEffort's 2 shares", 2, 0, 0, 2, 0},
		{"1.5 CPU limit, odd period", 1536, 75000, 50000, 1500, 1500},
		{"no shares", 0, -1, 100000, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cpu := &api.LinuxCPU{Shares: api.UInt64(tt.shares), Quota: api.Int64(tt.quota), Period: api.UInt64(tt.period), Cpus: "0-3"}
			r := resources(&api.LinuxResources{Cpu: cpu, Memory: &api.LinuxMemory{Limit: api.Int64(1 << 30)},
				HugepageLimits: []*api.HugepageLimit{{PageSize: "2MB", Limit: 4 << 20}}})
			if r.CpuRequestMilli != tt.wantReq || r.CpuLimitMilli != tt.wantLimit {
				t.Fatalf("request %d limit %d, want %d %d", r.CpuRequestMilli, r.CpuLimitMilli, tt.wantReq, tt.wantLimit)
			}
			if r.CpusetCpus != "0-3" || r.MemoryLimitBytes != 1<<30 || r.HugepageLimits["2MB"] != 4<<20 {
				t.Fatalf("resources %v", r)
			}
		})
	}
}

func TestQOSClass(t *testing.T) {
	burstable := &abi.Resources{CpuRequestMilli: 100, CpuLimitMilli: 1000}
	guaranteed := &abi.Resources{CpuRequestMilli: 1000, CpuLimitMilli: 1000, MemoryLimitBytes: 1 << 30}
	tests := []struct {
		parent string
		res    *abi.Resources
		want   abi.QOSClass
	}{
		{"/kubepods/besteffort/pod1", nil, abi.QOSClass_QOS_CLASS_BEST_EFFORT},
		{"kubepods-besteffort-pod1.slice", nil, abi.QOSClass_QOS_CLASS_BEST_EFFORT},
		{"/kubepods/burstable/pod1", nil, abi.QOSClass_QOS_CLASS_BURSTABLE},
		{"kubepods-burstable-pod1.slice", nil, abi.QOSClass_QOS_CLASS_BURSTABLE},
		{"/kubepods/pod1", nil, abi.QOSClass_QOS_CLASS_GUARANTEED},
		{"kubepods-pod1.slice", nil, abi.QOSClass_QOS_CLASS_GUARANTEED},
		{"", nil, abi.QOSClass_QOS_CLASS_UNSPECIFIED},
		{"", &abi.Resources{CpuRequestMilli: 2}, abi.QOSClass_QOS_CLASS_BEST_EFFORT},
		{"", burstable, abi.QOSClass_QOS_CLASS_BURSTABLE},
		{"", guaranteed, abi.QOSClass_QOS_CLASS_GUARANTEED},
		{"/custom", guaranteed, abi.QOSClass_QOS_CLASS_GUARANTEED},
	}
	for _, tt := range tests {
		if got := qosClass(tt.parent, tt.res); got != tt.want {
			t.Errorf("qosClass(%q, %v) = %v, want %v", tt.parent, tt.res, got, tt.want)
		}
	}
}

func TestAdjustment(t *testing.T) {
	a := &abi.ContainerAdjustment{
		CpusetCpus: "0-1", CpusetMems: "0", RdtClass: "gold", BlockioClass: "slow",
		Env:          []*abi.KeyValue{{Key: "A", Value: "1"}},
		Annotations:  map[string]string{"b": "2", "a": "1"},
		MemoryPolicy: &abi.MemoryPolicy{Mode: abi.MemoryPolicyMode_MEMORY_POLICY_MODE_BIND, Nodes: "0", Flags: []abi.MemoryPolicyFlag{abi.MemoryPolicyFlag_MEMORY_POLICY_FLAG_STATIC_NODES}},
	}
	for _, mp := range []bool{true, false} {
		got := adjustment(a, mp)
		cpu := got.GetLinux().GetResources().GetCpu()
		if cpu.GetCpus() != "0-1" || cpu.GetMems() != "0" || got.GetLinux().GetResources().GetRdtClass().GetValue() != "gold" ||
			got.GetLinux().GetResources().GetBlockioClass().GetValue() != "slow" || len(got.GetEnv()) != 1 || got.GetAnnotations()["b"] != "2" {
			t.Fatalf("adjustment %v", got)
		}
		pol := got.GetLinux().GetMemoryPolicy()
		if mp != (pol != nil) {
			t.Fatalf("memory policy %v with support %v", pol, mp)
		}
		if mp && (pol.GetMode() != api.MpolMode_MPOL_BIND || pol.GetFlags()[0] != api.MpolFlag_MPOL_F_STATIC_NODES) {
			t.Fatalf("memory policy %v", pol)
		}
	}
}

func TestSupportsMemoryPolicy(t *testing.T) {
	for v, want := range map[string]bool{"v0.12.5": true, "v0.10.0": true, "v0.9.1-0.20250219030224-e597e7849f24": false, "v0.8.0": false, "0.0.0-unknown": false, "unknown": false} {
		if got := supportsMemoryPolicy(v); got != want {
			t.Errorf("supportsMemoryPolicy(%q) = %v, want %v", v, got, want)
		}
	}
}
