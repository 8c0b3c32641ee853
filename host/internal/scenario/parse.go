package scenario

import (
	"github.com/nriwasm/nriwasm/host/internal/strictjson"

	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"maps"
	"sigs.k8s.io/yaml"
	"slices"
)

// MaxFileBytes caps a scenario file: 1 MiB holds thousands of pods.
const MaxFileBytes = 1 << 20

// Parse reads a scenario file (YAML or JSON), checks every step against the
// format and against the pods and claims live at that point, and builds the ABI
// messages each step sends. An error names the step and the field at fault,
// e.g. `steps[2].pod.containers[0].resources.requests.cpu: bad quantity "abc"`.
func Parse(data []byte) (*Scenario, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("scenario: %d bytes, over the limit of %d bytes (a simulation takes some 55 KiB of memory a pod: split the scenario)", len(data), MaxFileBytes)
	}
	raw, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	var spec fileSpec
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, fmt.Errorf("scenario: empty file")
	}
	if err := strictjson.Decode(raw, &spec, ""); err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if len(spec.Steps) == 0 {
		return nil, fmt.Errorf("scenario: steps: no steps")
	}
	sc := &Scenario{Description: spec.Description}
	names := newLiveNames()
	for i, rawStep := range spec.Steps {
		step, err := parseStep(i, rawStep, names)
		if err != nil {
			return nil, fmt.Errorf("scenario: %w", err)
		}
		sc.Steps = append(sc.Steps, step)
	}
	return sc, nil
}

// parseStep decodes steps[i]: an object with exactly one key, the step's kind.
func parseStep(i int, raw json.RawMessage, names *liveNames) (Step, error) {
	path := fmt.Sprintf("steps[%d]", i)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Step{}, fmt.Errorf("%s: want an object with one of %s", path, kindList())
	}
	if len(obj) != 1 {
		return Step{}, fmt.Errorf("%s: want exactly one of %s, got %s", path, kindList(), strings.Join(slices.Sorted(maps.Keys(obj)), ", "))
	}
	key := slices.Sorted(maps.Keys(obj))[0]
	value, path := obj[key], path+"."+key
	step := Step{Index: i, Kind: Kind(key)}
	var err error
	switch step.Kind {
	case KindPod:
		step.Pod, err = parsePod(value, path, names)
	case KindContainer:
		step.Target, step.Container, step.Claims, err = parseNewContainer(value, path, names)
	case KindRemove:
		step.Target, err = parseTarget(value, path, names)
		if err == nil {
			names.remove(step.Target)
		}
	case KindUpdate:
		step.Target, step.Resources, err = parseUpdate(value, path, names)
	case KindClaim:
		step.Claim, err = parseClaim(value, path, names)
	case KindRelease:
		step.ClaimKey, err = parseRelease(value, path, names)
	case KindReconfigure:
		step.Config, err = parseConfig(value, path)
	case KindDevices:
		err = parseNoArguments(value, path, key)
	case KindRestart:
		step.Exited, err = parseRestart(value, path, names)
	default:
		err = fmt.Errorf("%s: unknown step kind %q (known: %s)", path, key, kindList())
	}
	return step, err
}

func kindList() string {
	var s []string
	for _, k := range kinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// parseConfig takes a string as the configuration itself and anything else as
// YAML to write out.
func parseConfig(value json.RawMessage, path string) ([]byte, error) {
	var s string
	if err := json.Unmarshal(value, &s); err == nil {
		return []byte(s), nil
	}
	if bytes.Equal(value, []byte("null")) {
		return nil, nil
	}
	out, err := yaml.JSONToYAML(value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func parseNoArguments(value json.RawMessage, path, key string) error {
	switch strings.TrimSpace(string(value)) {
	case "null", "{}", "true":
		return nil
	}
	return fmt.Errorf("%s: takes no arguments (write `%s: {}`)", path, key)
}

func parseName(value json.RawMessage, path, what string) (string, error) {
	var s string
	if err := json.Unmarshal(value, &s); err != nil || s == "" {
		return "", fmt.Errorf("%s: want %s", path, what)
	}
	return s, nil
}
