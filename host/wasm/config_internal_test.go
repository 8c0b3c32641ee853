package wasm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestWithConfigFormat: for a policy that wants JSON, an Init or Reconfigure
// carries its configuration converted from YAML, in a copy of the request; a
// configuration that is not YAML is answered at field "config"; anything
// else passes as it came.
func TestWithConfigFormat(t *testing.T) {
	ctx := context.Background()
	json, unspecified := abi.ConfigFormat_CONFIG_FORMAT_JSON, abi.ConfigFormat_CONFIG_FORMAT_UNSPECIFIED
	yamlDoc := []byte("reservedResources:\n  cpu: 750m\npinCPU: true\n")
	const converted = `{"pinCPU":true,"reservedResources":{"cpu":"750m"}}`
	for _, tc := range []struct {
		name   string
		format abi.ConfigFormat
		req    abi.Message
		want   string // the config sent; "" for the request unchanged
		answer string // the error answered instead of calling the policy
	}{
		{"init", json, &abi.InitRequest{Config: yamlDoc, NodeName: "n"}, converted, ""},
		{"reconfigure", json, &abi.ReconfigureRequest{Config: yamlDoc}, converted, ""},
		{"JSON stays JSON", json, &abi.ReconfigureRequest{Config: []byte(`{"pinCPU": true}`)}, `{"pinCPU":true}`, ""},
		{"not YAML", json, &abi.InitRequest{Config: []byte("a: [1")}, "", "not YAML or JSON: "},
		{"blank", json, &abi.InitRequest{Config: []byte(" \n")}, "", ""},
		{"as written", unspecified, &abi.InitRequest{Config: yamlDoc}, "", ""},
		{"other calls", json, &abi.CreateContainerRequest{}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Policy{name: "p", format: &tc.format}
			before := proto.Clone(tc.req.(proto.Message))
			got, answer, err := p.withConfigFormat(ctx, nil, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(tc.req.(proto.Message), before) {
				t.Errorf("the caller's request changed: %v", tc.req)
			}
			if tc.answer != "" {
				e := answer.GetError()
				if got != nil || e.GetCode() != abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || e.GetField() != "config" || !strings.HasPrefix(e.GetMessage(), tc.answer) {
					t.Fatalf("answer = %v, request %v; want INVALID_ARGUMENT at config, %q…", answer, got, tc.answer)
				}
				return
			}
			if answer != nil {
				t.Fatalf("answered %v", answer)
			}
			if tc.want == "" {
				if got != tc.req {
					t.Errorf("request replaced: %v", got)
				}
				return
			}
			if c := configOf(got); string(c) != tc.want {
				t.Errorf("config sent = %s, want %s", c, tc.want)
			}
		})
	}
}

func configOf(m abi.Message) []byte {
	switch r := m.(type) {
	case *abi.InitRequest:
		return r.GetConfig()
	case *abi.ReconfigureRequest:
		return r.GetConfig()
	}
	return nil
}

// TestWithConfigKeepsEveryField: withConfig builds the request anew, so a
// field added to InitRequest or ReconfigureRequest must be carried over there
// too; this fails until it is.
func TestWithConfigKeepsEveryField(t *testing.T) {
	for _, req := range []proto.Message{&abi.InitRequest{}, &abi.ReconfigureRequest{}} {
		fill(req.ProtoReflect())
		got := withConfig(req.(abi.Message), []byte("{}")).(proto.Message)
		req.ProtoReflect().Set(req.ProtoReflect().Descriptor().Fields().ByName("config"), protoreflect.ValueOfBytes([]byte("{}")))
		if !proto.Equal(got, req) {
			t.Errorf("%T: withConfig lost a field:\n got  %v\n want %v", req, got, req)
		}
	}
}

// fill sets every field of m to something other than its zero value.
func fill(m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		switch {
		case f.IsList() || f.IsMap():
			// A list or map is shared as a whole; one nested message shows it.
			if f.IsList() && f.Kind() == protoreflect.MessageKind {
				list := m.Mutable(f).List()
				list.Append(list.NewElement())
			}
		case f.Kind() == protoreflect.MessageKind:
			m.Set(f, protoreflect.ValueOfMessage(m.NewField(f).Message()))
			m.Mutable(f) // present, empty
		case f.Kind() == protoreflect.StringKind:
			m.Set(f, protoreflect.ValueOfString("x"))
		case f.Kind() == protoreflect.BytesKind:
			m.Set(f, protoreflect.ValueOfBytes([]byte("x")))
		case f.Kind() == protoreflect.BoolKind:
			m.Set(f, protoreflect.ValueOfBool(true))
		case f.Kind() == protoreflect.EnumKind:
			m.Set(f, protoreflect.ValueOfEnum(1))
		case f.Kind() == protoreflect.Uint32Kind:
			m.Set(f, protoreflect.ValueOfUint32(7))
		case f.Kind() == protoreflect.Int32Kind:
			m.Set(f, protoreflect.ValueOfInt32(7))
		case f.Kind() == protoreflect.Uint64Kind:
			m.Set(f, protoreflect.ValueOfUint64(7))
		case f.Kind() == protoreflect.Int64Kind:
			m.Set(f, protoreflect.ValueOfInt64(7))
		}
	}
}

// TestConfigFormatThroughWasm runs the built-in topology-aware module, which
// declares CONFIG_FORMAT_JSON and carries no YAML parser: a YAML
// configuration starts it, and one with an unknown nested field is refused
// at that field, as the policy itself decides it. The unsealed path (the
// format asked of Info before the first Init) gives the same.
func TestConfigFormatThroughWasm(t *testing.T) {
	module, ok := builtin.Module("topology-aware")
	if !ok {
		t.Fatal("no built-in topology-aware module")
	}
	ctx := context.Background()
	topo := policytest.Machine(t, "Desktop1Socket")
	const good = "reservedResources:\n  cpu: 750m\n"
	const bad = "reservedResources:\n  cpu: 750m\n  cpuu: 1\n"
	cache := t.TempDir()
	for _, sealed := range []bool{true, false} {
		var initErr error
		config := []byte(good)
		opts := []Option{WithCacheDir(cache), WithRestore(func(ctx context.Context, t abi.Transport) error {
			_, initErr = abi.NewClient(t).Init(ctx, &abi.InitRequest{Config: config, Topology: topo})
			return initErr
		})}
		if !sealed {
			opts = append(opts, resealing)
		}
		p, err := Load(ctx, "topology-aware", module, opts...)
		if err != nil {
			t.Fatalf("sealed %t: Load with a YAML config: %v", sealed, err)
		}
		if got := p.Metadata().GetConfigFormat(); got != abi.ConfigFormat_CONFIG_FORMAT_JSON {
			t.Errorf("config_format = %v, want JSON", got)
		}
		_, err = abi.NewClient(p).Reconfigure(ctx, &abi.ReconfigureRequest{Config: []byte(bad)})
		var pe *abi.PolicyError
		if !errors.As(err, &pe) || pe.Field != "config.reservedResources.cpuu" || !strings.Contains(pe.Message, "unknown field") {
			t.Errorf("sealed %t: Reconfigure(unknown field) = %v, want an unknown field at config.reservedResources.cpuu", sealed, err)
		}
		_ = p.Close(ctx)
	}
}
