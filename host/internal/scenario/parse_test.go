package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func TestParseBuildsRequests(t *testing.T) {
	sc, err := Parse([]byte(`
steps:
  - pod:
      name: g
      containers:
        - {name: a, resources: {limits: {cpu: 1, memory: 1Gi}}, env: [{name: X, value: "1"}]}
  - pod:
      name: b
      namespace: ns
      containers:
        - {name: a, resources: {requests: {cpu: 250m}}}
        - {name: z}
  - pod: {name: e, containers: [{name: a}]}
  - pod: {name: forced, qosClass: Guaranteed}
  - update: {container: b/a, resources: {requests: {cpu: 2}}}
  - claim:
      name: c
      results: [{request: r, device: d, consumedCapacity: {mem: 1Gi}}]
      config: [{parameters: {"z": 1, "a": {"b": true}}}]
  - reconfigure: {b: 1, a: [x]}
  - reconfigure: plain text
  - devices:
  - release: default/c
  - remove: b/z
`))
	if err != nil {
		t.Fatal(err)
	}
	g := sc.Steps[0].Pod
	if g.Sandbox.QosClass != abi.QOSClass_QOS_CLASS_GUARANTEED || g.Sandbox.Namespace != "default" || g.Sandbox.Id != "g" {
		t.Errorf("pod g: %v", g.Sandbox)
	}
	if r := g.Containers[0].Resources; r.CpuRequestMilli != 1000 || r.CpuLimitMilli != 1000 || r.MemoryRequestBytes != 1<<30 || r.MemoryLimitBytes != 1<<30 {
		t.Errorf("requests default to limits: %v", r)
	}
	if c := g.Containers[0]; c.Id != "g-a" || c.PodSandboxId != "g" || c.QosClass != abi.QOSClass_QOS_CLASS_GUARANTEED || c.Env[0].Key != "X" {
		t.Errorf("container g/a: %v", c)
	}
	if q := sc.Steps[1].Pod.Sandbox.QosClass; q != abi.QOSClass_QOS_CLASS_BURSTABLE {
		t.Errorf("pod b: %v, want Burstable", q)
	}
	if q := sc.Steps[2].Pod.Sandbox.QosClass; q != abi.QOSClass_QOS_CLASS_BEST_EFFORT {
		t.Errorf("pod e: %v, want BestEffort", q)
	}
	if q := sc.Steps[3].Pod.Sandbox.QosClass; q != abi.QOSClass_QOS_CLASS_GUARANTEED {
		t.Errorf("pod forced: %v, want the given Guaranteed", q)
	}
	again, _ := Parse([]byte("steps: [{pod: {name: g}}]"))
	if uid := again.Steps[0].Pod.Sandbox.Uid; uid != g.Sandbox.Uid || len(uid) != 36 {
		t.Errorf("derived uids %q and %q: want equal UUIDs", uid, g.Sandbox.Uid)
	}
	if s := sc.Steps[4]; s.Target != (Target{"b", "a"}) || s.Resources.CpuRequestMilli != 2000 {
		t.Errorf("update: %+v", s)
	}
	claim := sc.Steps[5].Claim
	if claim.Namespace != "default" || claim.Results[0].Pool != NodeName || claim.Results[0].ConsumedCapacity["mem"] != "1Gi" ||
		string(claim.Config[0].Parameters) != `{"a":{"b":true},"z":1}` || claim.Config[0].Source != abi.DeviceConfigSource_DEVICE_CONFIG_SOURCE_CLAIM {
		t.Errorf("claim: %v", claim)
	}
	if got := string(sc.Steps[6].Config); got != "a:\n- x\nb: 1\n" {
		t.Errorf("reconfigure with YAML: %q", got)
	}
	if got := string(sc.Steps[7].Config); got != "plain text" {
		t.Errorf("reconfigure with a string: %q", got)
	}
	if s := sc.Steps[9]; s.ClaimKey != "default/c" {
		t.Errorf("release: %+v", s)
	}
}

func TestParseMountsAndDevices(t *testing.T) {
	sc, err := Parse([]byte(`
steps:
  - pod:
      name: p
      containers:
        - name: c
          mounts: [{source: /var/lib/data, destination: /data, options: [rw], hints: [{numas: "2"}]}]
          devices: [{path: /dev/nvme1n1, type: b, major: 259, minor: 1, readOnly: true, hints: [{provider: /sys/devices/pci0000:40, cpus: 4-7, numas: "1"}]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	c := sc.Steps[0].Pod.Containers[0]
	if len(c.Mounts) != 1 || c.Mounts[0].Source != "/var/lib/data" || c.Mounts[0].Options[0] != "rw" ||
		c.Mounts[0].Hints[0].Numas != "2" || c.Mounts[0].Hints[0].Provider != "steps[0].pod.containers[0].mounts[0].hints[0]" {
		t.Errorf("mounts: %v", c.Mounts)
	}
	if len(c.Devices) != 1 || c.Devices[0].Major != 259 || !c.Devices[0].ReadOnly || c.Devices[0].Hints[0].Cpus != "4-7" || c.Devices[0].Hints[0].Provider != "/sys/devices/pci0000:40" {
		t.Errorf("devices: %v", c.Devices)
	}
}

func TestParseErrorsNameStepAndField(t *testing.T) {
	for _, tc := range []struct{ scenario, want string }{
		{"steps: [{pod: {name: a, qos: x}}]", `steps[0].pod.qos: unknown field (steps[0].pod has annotations, containers`},
		{"steps: [{pod: {name: a, containers: [{name: c, resources: {limits: {gpu: 1}}}]}}]", `steps[0].pod.containers[0].resources.limits.gpu: unknown field`},
		{"steps: [{pod: {name: a, containers: [{name: c, env: [{name: X, value: 1}]}]}}]", `steps[0].pod.containers[0].env[0].value: got the number 1, want a string`},
		{"steps: [{pod: {name: a, containers: [{name: c, resources: {requests: {memory: 1Gb}}}]}}]", `steps[0].pod.containers[0].resources.requests.memory: bad quantity "1Gb"`},
		{"steps: [{pod: {name: a, containers: [{name: c, resources: {requests: {cpu: 2}, limits: {cpu: 1}}}]}}]", `steps[0].pod.containers[0].resources.requests.cpu: must not exceed limits.cpu`},
		{"steps: [{pod: {name: a, qosClass: Gold}}]", `steps[0].pod.qosClass: "Gold"`},
		{"steps: [{pod: {name: a}}, {pod: {name: a}}]", `steps[1].pod.name: pod "a" already exists`},
		{"steps: [{pod: {name: a, containers: [{name: c}, {name: c}]}}]", `steps[0].pod.containers[1].name: container "c" appears twice`},
		{"steps: [{pod: {containers: []}}]", `steps[0].pod.name: required`},
		{"steps: [{remove: ghost}]", `steps[0].remove: no pod "ghost"`},
		{"steps: [{pod: {name: a}}, {update: {container: a}}]", `steps[1].update.container: want "pod/container"`},
		{"steps: [{release: c}]", `steps[0].release: no allocated claim "default/c"`},
		{"steps: [{claim: {name: c, results: [{request: r}]}}]", `steps[0].claim.results[0]: request and device are required`},
		{"steps: [{claim: {name: c, config: [{parameters: [1]}]}}]", `steps[0].claim.config[0].parameters: want a JSON object`},
		{"steps: [{claim: {name: c, config: [{source: pod}]}}]", `steps[0].claim.config[0].source: "pod"`},
		{"steps: [{explode: {}}]", `steps[0].explode: unknown step kind "explode"`},
		{"steps: [{devices: {all: true}}]", `steps[0].devices: takes no arguments`},
		{"steps: [ghost]", `steps[0]: want an object`},
		{"steps: []", `steps: no steps`},
		{"step: []", `step: unknown field (the top level has description, steps)`},
		{"", `empty file`},
		{"steps: [{pod: {name: a, containers: [{name: c, devices: [{path: /dev/x, type: q}]}]}}]", `steps[0].pod.containers[0].devices[0].type: "q": want b, c or p`},
		{"steps: [{pod: {name: a, containers: [{name: c, mounts: [{destination: /d, hints: [{numas: one}]}]}]}}]", `steps[0].pod.containers[0].mounts[0].hints[0].numas: `},
		{"steps: [{pod: {name: a, containers: [{name: c, mounts: [{destination: /d, hints: [{}]}]}]}}]", `steps[0].pod.containers[0].mounts[0].hints[0]: names no cpus, numas or sockets`},
	} {
		_, err := Parse([]byte(tc.scenario))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "scenario: ") {
			t.Errorf("Parse(%q) = %v; want an error containing %q", tc.scenario, err, tc.want)
		}
	}
}

func TestExampleParses(t *testing.T) {
	if _, err := Parse(Example); err != nil {
		t.Fatal(err)
	}
}

// TestDocsShowTheExample keeps docs/simulate.md's copy of the example current.
func TestDocsShowTheExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "simulate.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, example, _ := strings.Cut(string(Example), "\ndescription:")
	if !strings.Contains(string(doc), "```yaml\ndescription:"+example+"```\n") {
		t.Error("docs/simulate.md does not show example.yaml as it is (from its description on)")
	}
}
