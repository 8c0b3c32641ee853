package scenario

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// JSON renders the report as indented JSON.
func (r *Report) JSON() ([]byte, error) {
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render report: %w", err)
	}
	return append(out, '\n'), nil
}

// protoValue is m in protobuf's JSON mapping as plain JSON values (maps print
// sorted), or nil for a nil message. protojson's own text is not stable across
// builds, so it is re-read rather than printed.
func protoValue(m proto.Message) any {
	if m == nil || !m.ProtoReflect().IsValid() {
		return nil
	}
	data, err := protojson.Marshal(m)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return map[string]any{"error": err.Error()}
	}
	return v
}

// statusValue is a DeviceStatus with its data, a JSON object, shown as JSON
// rather than base64.
func statusValue(s *abi.DeviceStatus) any {
	v := protoValue(s)
	if obj, ok := v.(map[string]any); ok && len(s.GetData()) > 0 {
		dec := json.NewDecoder(bytes.NewReader(s.GetData()))
		dec.UseNumber()
		var data any
		if dec.Decode(&data) == nil {
			obj["data"] = data
		} else {
			obj["data"] = base64.StdEncoding.EncodeToString(s.GetData())
		}
	}
	return v
}

// containerReport is a container's current assignment; env is sorted.
func containerReport(p *abi.PodSandbox, c *abi.Container) ContainerReport {
	a := c.GetAssignment()
	cr := ContainerReport{
		ID: c.Id, Pod: podName(p), Name: c.Name,
		CPUs: c.Resources.GetCpusetCpus(), Mems: c.Resources.GetCpusetMems(),
		Annotations: a.GetAnnotations(), RDTClass: a.GetRdtClass(), BlockIOClass: a.GetBlockioClass(),
	}
	for _, kv := range c.Env {
		cr.Env = append(cr.Env, kv.Key+"="+kv.Value)
	}
	slices.Sort(cr.Env)
	if mp := a.GetMemoryPolicy(); mp != nil {
		parts := []string{strings.TrimPrefix(mp.Mode.String(), "MEMORY_POLICY_MODE_"), mp.Nodes}
		for _, f := range mp.Flags {
			parts = append(parts, strings.TrimPrefix(f.String(), "MEMORY_POLICY_FLAG_"))
		}
		cr.MemoryPolicy = strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), " ")
	}
	return cr
}
