package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// YAML renders the report as YAML with the fields in the order JSON has them.
func (r *Report) YAML() ([]byte, error) {
	return YAML(r)
}

// YAML renders v's JSON encoding as YAML, keeping the order of its fields
// and its numbers as written.
func YAML(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("render report: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	node, err := yamlNode(dec)
	if err != nil {
		return nil, fmt.Errorf("render report: %w", err)
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return nil, fmt.Errorf("render report: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("render report: %w", err)
	}
	return out.Bytes(), nil
}

// yamlNode reads the next JSON value into a YAML node, keeping key order.
func yamlNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if t == '{' {
			n.Kind, n.Tag = yaml.MappingNode, "!!map"
		}
		for dec.More() {
			if n.Kind == yaml.MappingNode {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key.(string)})
			}
			child, err := yamlNode(dec)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, child)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n, nil
	case json.Number:
		tag := "!!int"
		if _, err := t.Int64(); err != nil {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
}

// YAMLWithMaps renders the report as YAML (as YAML does) with each step's CPU
// map after the step as comments, so that the output stays YAML; colour
// paints the maps' labels with ANSI escapes, for a terminal.
func (r *Report) YAMLWithMaps(colour bool) ([]byte, error) {
	out, err := r.YAML()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	next := 0 // the map to insert before the next step or before final
	insert := func() error {
		if next == 0 || next > len(r.Maps) {
			return nil
		}
		var text bytes.Buffer
		if err := r.Maps[next-1].Text(&text, colour); err != nil {
			return err
		}
		for _, line := range strings.SplitAfter(strings.TrimSuffix(text.String(), "\n"), "\n") {
			b.WriteString("    # " + line)
		}
		b.WriteString("\n")
		return nil
	}
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if strings.HasPrefix(line, "  - step: ") || strings.HasPrefix(line, "final:") {
			if err := insert(); err != nil {
				return nil, fmt.Errorf("render report: %w", err)
			}
			next++
		}
		b.WriteString(line)
	}
	return b.Bytes(), nil
}
