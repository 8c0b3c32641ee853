package wasmsize

import (
	"strings"
	"testing"
)

// module assembles a WebAssembly module from sections (id, content).
func module(sections ...[]byte) []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range sections {
		out = append(out, s[0])
		out = appendULEB(out, len(s)-1)
		out = append(out, s[1:]...)
	}
	return out
}

func appendULEB(b []byte, v int) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendName(b []byte, s string) []byte {
	return append(appendULEB(b, len(s)), s...)
}

// testModule imports one function and one memory, and holds three bodies
// of 3, 5 and 200 bytes named after two packages and one left unnamed.
func testModule() []byte {
	imp := []byte{2}
	imp = appendULEB(imp, 2)
	imp = appendName(appendName(imp, "wasi"), "fd_write")
	imp = append(imp, 0, 0) // function of type 0
	imp = appendName(appendName(imp, "env"), "mem")
	imp = append(imp, 2, 1, 1, 2) // memory, limits min 1 max 2
	code := []byte{10}
	code = appendULEB(code, 3)
	for _, n := range []int{3, 5, 200} {
		code = appendULEB(code, n)
		code = append(code, make([]byte, n)...)
	}
	names := appendULEB(nil, 3)
	for idx, name := range map[int]string{1: "encoding_json.Marshal", 2: "encoding_json.__decodeState_.object", 3: "github.com_x_y_z.F"} {
		names = appendName(appendULEB(names, idx), name)
	}
	custom := appendName([]byte{0}, "name")
	custom = append(custom, 1)
	custom = appendULEB(custom, len(names))
	custom = append(custom, names...)
	return module(imp, code, custom)
}

func TestAnalyzeAttributesBodiesByName(t *testing.T) {
	// Function 0 is the import, so the three bodies are functions 1, 2, 3.
	m := testModule()
	rep, err := Analyze(m)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Size != len(m) {
		t.Errorf("Size = %d, want %d", rep.Size, len(m))
	}
	var secs []string
	for _, s := range rep.Sections {
		secs = append(secs, s.Name)
	}
	if got := strings.Join(secs, ","); got != "import,code,name" {
		t.Errorf("sections %s, want import,code,name", got)
	}
	want := []Package{
		{Name: "github.com_x_y_z", Functions: 1, CodeBytes: 200},
		{Name: "encoding_json", Functions: 2, CodeBytes: 8},
	}
	if len(rep.Packages) != len(want) {
		t.Fatalf("packages %+v, want %+v", rep.Packages, want)
	}
	for i := range want {
		if rep.Packages[i] != want[i] {
			t.Errorf("package %d = %+v, want %+v", i, rep.Packages[i], want[i])
		}
	}
	wantFuncs := []Function{
		{Name: "github.com_x_y_z.F", CodeBytes: 200},
		{Name: "encoding_json.__decodeState_.object", CodeBytes: 5},
		{Name: "encoding_json.Marshal", CodeBytes: 3},
	}
	if len(rep.Functions) != len(wantFuncs) {
		t.Fatalf("functions %+v, want %+v", rep.Functions, wantFuncs)
	}
	for i := range wantFuncs {
		if rep.Functions[i] != wantFuncs[i] {
			t.Errorf("function %d = %+v, want %+v", i, rep.Functions[i], wantFuncs[i])
		}
	}
	if got := rep.FunctionsIn("encoding/json"); len(got) != 2 || got[0].CodeBytes != 5 || got[1].CodeBytes != 3 {
		t.Errorf("FunctionsIn(encoding/json) = %+v, want its two bodies, largest first", got)
	}
	if got := rep.FunctionsIn("github.com/x"); len(got) != 1 || got[0].Name != "github.com_x_y_z.F" {
		t.Errorf("FunctionsIn(github.com/x) = %+v, want the one body under it", got)
	}
	if got := rep.Group("github.com/x"); len(got) != 2 || got[0].Name != "github.com_x" || got[0].CodeBytes != 200 {
		t.Errorf("Group(github.com/x) = %+v, want github.com_x first with 200 bytes", got)
	}
}

func TestAnalyzeUnnamedBodies(t *testing.T) {
	code := []byte{10}
	code = appendULEB(code, 2)
	code = append(code, 1, 0x0b, 1, 0x0b)
	rep, err := Analyze(module(code))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Packages) != 1 || rep.Packages[0] != (Package{Name: "(unnamed)", Functions: 2, CodeBytes: 2}) {
		t.Errorf("packages %+v, want two unnamed bodies of 1 byte", rep.Packages)
	}
}

func TestAnalyzeRefusesDamage(t *testing.T) {
	m := testModule()
	for name, b := range map[string][]byte{
		"not wasm":          []byte("\x7fELF\x02\x01\x01\x00"),
		"section too long":  append(m[:len(m):len(m)], 10, 0x7f),
		"truncated body":    module([]byte{10, 1, 9, 0}),
		"import kind":       module(appendName(appendName([]byte{2, 1}, "m"), "f"), []byte{10, 0}),
		"LEB128 overlong":   append(m[:8:8], 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
		"truncated section": m[:len(m)-1],
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Analyze(b); err == nil {
				t.Errorf("Analyze accepted a damaged module")
			}
		})
	}
}

func TestPackageOf(t *testing.T) {
	for name, want := range map[string]string{
		"runtime.mallocgc":                                         "runtime",
		"runtime.park_m":                                           "runtime",
		"runtime.__timeHistogram_.write":                           "runtime",
		"encoding_json.__decodeState_.object":                      "encoding_json",
		"github.com_nriwasm_nriwasm_abi_v1.__Pod_.SizeVT":          "github.com_nriwasm_nriwasm_abi_v1",
		"go.yaml.in_yaml_v2.__parser_.parse":                       "go.yaml.in_yaml_v2",
		"sigs.k8s.io_yaml.Unmarshal":                               "sigs.k8s.io_yaml",
		"internal_sync.__HashTrieMap_go.shape.interface_____.Load": "internal_sync",
		"type_.eq._2_string":                                       "type_",
		"noDot":                                                    "noDot",
	} {
		if got := PackageOf(name); got != want {
			t.Errorf("PackageOf(%q) = %q, want %q", name, got, want)
		}
	}
}
