//go:build integration

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Scenario is a `nriwasm simulate` scenario (docs/simulate.md), the subset
// these tests play: pods with containers, and removals.
type Scenario struct {
	Steps []ScenarioStep `json:"steps"`
}

// ScenarioStep is one step: exactly one of Pod and Remove.
type ScenarioStep struct {
	Pod    *ScenarioPod `json:"pod,omitempty"`
	Remove string       `json:"remove,omitempty"` // "pod" or "pod/container"
}

// ScenarioPod creates a pod and its containers.
type ScenarioPod struct {
	Name       string              `json:"name"`
	Namespace  string              `json:"namespace,omitempty"`
	QOSClass   string              `json:"qosClass,omitempty"`
	Containers []ScenarioContainer `json:"containers"`
}

// ScenarioContainer is a container of a ScenarioPod.
type ScenarioContainer struct {
	Name        string             `json:"name"`
	Resources   *ScenarioResources `json:"resources,omitempty"`
	Annotations map[string]string  `json:"annotations,omitempty"`
}

// ScenarioResources are Kubernetes requests and limits ("cpu": "500m").
type ScenarioResources struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

// Simulation is what `nriwasm simulate` printed: the policy's decisions on
// this node for a scenario, with no agent and no runtime involved.
type Simulation struct {
	Steps []SimulatedStep `json:"steps"`
}

// SimulatedStep is one step's outcome.
type SimulatedStep struct {
	Step   int    `json:"step"`
	Kind   string `json:"kind"`
	Target string `json:"target"` // namespace/pod or namespace/pod/container
	// Containers are those created or updated by the step, after it.
	Containers []struct {
		Pod  string `json:"pod"` // namespace/pod
		Name string `json:"name"`
		CPUs string `json:"cpus"`
		Mems string `json:"mems"`
	} `json:"containers"`
	Errors []struct {
		Call    string `json:"call"` // "CreateContainer namespace/pod/container"
		Kind    string `json:"kind"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"errors"`
}

// Decision is the policy's answer for one container.
type Decision struct {
	CPUs string
	// Refused is the policy's error when it refused CreateContainer ("" if
	// it placed the container): the agent then starts the container
	// unpinned (fail-open) or fails it (fail-closed).
	Refused string
}

// Simulate runs `nriwasm simulate` with the built-in or .wasm policy on the
// sysfs tree, compiled code cached in cacheDir.
func Simulate(ctx context.Context, binary, policy, sysfs, cacheDir string, sc Scenario) (*Simulation, error) {
	return SimulateWith(ctx, binary, policy, nil, sysfs, cacheDir, sc)
}

// SimulateWith is Simulate with the policy's configuration (JSON or YAML,
// as the agent passes it; nil for none).
func SimulateWith(ctx context.Context, binary, policy string, config []byte, sysfs, cacheDir string, sc Scenario) (*Simulation, error) {
	data, err := json.Marshal(sc)
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	dir, err := os.MkdirTemp("", "nriwasm-scenario-")
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "scenario.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	args := []string{"simulate", "--policy", policy, "--sysfs", sysfs, "--cache-dir", cacheDir, "--scenario", path, "--output", "json"}
	if config != nil {
		cfg := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(cfg, config, 0o600); err != nil {
			return nil, fmt.Errorf("simulate: %w", err)
		}
		args = append(args, "--config", cfg)
	}
	cmd := exec.CommandContext(ctx, binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("nriwasm simulate: %w\nscenario: %s\n%s", err, data, stderr.Bytes())
	}
	var sim Simulation
	if err := json.Unmarshal(stdout.Bytes(), &sim); err != nil {
		return nil, fmt.Errorf("nriwasm simulate: decoding its output: %w\n%s", err, stdout.Bytes())
	}
	if len(sim.Steps) != len(sc.Steps) {
		return nil, fmt.Errorf("nriwasm simulate: %d steps out for %d in:\n%s", len(sim.Steps), len(sc.Steps), stdout.Bytes())
	}
	return &sim, nil
}

// After replays steps 0..n (n < 0: every step) and returns the decision for
// every container the scenario created and did not remove by then, by
// "namespace/pod/container". Refused containers are included (with
// Refused set): a fail-open agent starts them unpinned.
func (s *Simulation) After(n int) map[string]Decision {
	if n < 0 || n >= len(s.Steps) {
		n = len(s.Steps) - 1
	}
	out := map[string]Decision{}
	for _, st := range s.Steps[:n+1] {
		if st.Kind == "remove" {
			for k := range out {
				if k == st.Target || strings.HasPrefix(k, st.Target+"/") {
					delete(out, k)
				}
			}
			continue
		}
		for _, c := range st.Containers {
			out[c.Pod+"/"+c.Name] = Decision{CPUs: c.CPUs}
		}
		for _, e := range st.Errors {
			if key, ok := strings.CutPrefix(e.Call, "CreateContainer "); ok {
				out[key] = Decision{Refused: fmt.Sprintf("%s %s: %s", e.Kind, e.Code, e.Message)}
			}
		}
	}
	return out
}
