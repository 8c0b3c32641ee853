// Package wasmsize says where a WebAssembly module's bytes go: the size of
// each section and, from the module's "name" section, the code bytes of each
// Go package (or Rust crate path) whose functions the module holds. It is the
// measurement behind the guest-size table in docs/performance.md:
//
//	go run ./internal/wasmsize/cmd/wasmsize policies/builtin/topology-aware.wasm
//
// Only the function bodies (the code section) are attributed to packages; a
// Go module's data section (type descriptors, strings, tables such as
// unicode's) and its name section are reported as sections, since the
// module does not say which package each byte of them belongs to.
package wasmsize

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Section is one section of a module.
type Section struct {
	Name string // "code", "data", or a custom section's own name ("name")
	Size int    // its content in bytes, without its id and size prefix
}

// Package is the code one package contributes.
type Package struct {
	Name      string // the import path ("encoding/json"), or a group such as "type:"
	Functions int    // how many function bodies
	CodeBytes int    // their size in the code section
}

// Function is one function body.
type Function struct {
	Name      string // as the name section writes it, mangled ("encoding_json.Marshal"); "(unnamed)" without one
	CodeBytes int    // its size in the code section
}

// Report is a module's breakdown.
type Report struct {
	Size      int        // the whole module
	Sections  []Section  // in module order
	Packages  []Package  // largest first; ties by name
	Functions []Function // every body, largest first; ties by name
}

// standard names the section ids of the WebAssembly 2.0 core specification.
var standard = [...]string{"custom", "type", "import", "function", "table", "memory",
	"global", "export", "start", "element", "code", "data", "data count"}

// Analyze reads module and attributes its function bodies to packages by the
// names in its "name" section; a function without a name is counted under
// "(unnamed)".
func Analyze(module []byte) (*Report, error) {
	r := reader{b: module}
	if len(module) < 8 || string(module[:4]) != "\x00asm" {
		return nil, errors.New("wasmsize: not a WebAssembly module (magic number)")
	}
	r.pos = 8
	rep := &Report{Size: len(module)}
	var (
		imported int
		bodies   []int
		names    = map[int]string{}
	)
	for r.pos < len(r.b) {
		id := r.byte()
		size := r.uleb()
		start := r.pos
		end := start + size
		if r.err != nil || end > len(r.b) || end < start {
			return nil, fmt.Errorf("wasmsize: section at offset %d: %w", start, errTruncated)
		}
		s := Section{Size: size}
		sub := reader{b: r.b[:end], pos: start}
		switch {
		case id == 0:
			s.Name = sub.name()
			if s.Name == "name" {
				readNames(&sub, names)
			}
		case int(id) < len(standard):
			s.Name = standard[id]
		default:
			s.Name = fmt.Sprintf("unknown section %d", id)
		}
		switch id {
		case 2:
			imported = countImportedFunctions(&sub)
		case 10:
			for n := sub.uleb(); n > 0 && sub.err == nil; n-- {
				body := sub.uleb()
				bodies = append(bodies, body)
				if sub.pos += body; sub.pos > end {
					sub.err = errTruncated
				}
			}
		}
		if sub.err != nil {
			return nil, fmt.Errorf("wasmsize: %s section: %w", s.Name, sub.err)
		}
		rep.Sections = append(rep.Sections, s)
		r.pos = end
	}
	byPkg := map[string]*Package{}
	for i, size := range bodies {
		name, pkg := "(unnamed)", "(unnamed)"
		if n, ok := names[imported+i]; ok {
			name, pkg = n, PackageOf(n)
		}
		rep.Functions = append(rep.Functions, Function{Name: name, CodeBytes: size})
		p := byPkg[pkg]
		if p == nil {
			p = &Package{Name: pkg}
			byPkg[pkg] = p
		}
		p.Functions++
		p.CodeBytes += size
	}
	for _, p := range byPkg {
		rep.Packages = append(rep.Packages, *p)
	}
	sort.Slice(rep.Packages, func(i, j int) bool {
		a, b := rep.Packages[i], rep.Packages[j]
		if a.CodeBytes != b.CodeBytes {
			return a.CodeBytes > b.CodeBytes
		}
		return a.Name < b.Name
	})
	sort.Slice(rep.Functions, func(i, j int) bool {
		a, b := rep.Functions[i], rep.Functions[j]
		if a.CodeBytes != b.CodeBytes {
			return a.CodeBytes > b.CodeBytes
		}
		return a.Name < b.Name
	})
	return rep, nil
}

// FunctionsIn is the functions of the packages prefix names (an import
// path and everything under it, as in Group), largest first.
func (r *Report) FunctionsIn(prefix string) []Function {
	m := mangle(prefix)
	var out []Function
	for _, f := range r.Functions {
		if pkg := PackageOf(f.Name); pkg == m || strings.HasPrefix(pkg, m+"_") {
			out = append(out, f)
		}
	}
	return out
}

// PackageOf is the package of a function's name in a Go module's "name"
// section, where the linker writes every character that is not a letter,
// digit or dot as '_' ("encoding/json.(*decodeState).object" is
// "encoding_json.__decodeState_.object"): the name up to its first dot, or
// up to the first dot after the host of an import path that starts with one
// ("github.com_x_y.F" is "github.com_x_y"). Compiler-made functions
// ("type:.eq.[2]string", written "type_.eq...") are grouped by that prefix
// ("type_"). Names are left mangled: Group's prefixes are mangled the same way.
func PackageOf(name string) string {
	from := 0
	if us := strings.IndexByte(name, '_'); us > 0 && isHost(name[:us]) {
		from = us
	}
	if dot := strings.IndexByte(name[from:], '.'); dot >= 0 {
		return name[:from+dot]
	}
	return name
}

// isHost reports whether s looks like the host that starts an import path
// ("github.com", "go.yaml.in", "sigs.k8s.io"): dotted, ending in one of the
// top-level domains Go modules are commonly served from. A function name
// cannot be mistaken for one unless its package is named like such a domain.
func isHost(s string) bool {
	dot := strings.LastIndexByte(s, '.')
	if dot <= 0 {
		return false
	}
	switch s[dot+1:] {
	case "com", "org", "io", "in", "net", "dev":
		return true
	}
	return false
}

// mangle writes an import path as a Go module's name section does.
func mangle(path string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, path)
}

// Group sums packages by the first of prefixes (import paths, mangled as
// in PackageOf) each starts with (a path and everything under it:
// "github.com/x/y" takes "github.com/x/y/z"), largest first; a package no
// prefix takes stays its own row.
func (r *Report) Group(prefixes ...string) []Package {
	sums := map[string]*Package{}
	var order []string
	for _, p := range r.Packages {
		key := p.Name
		for _, pre := range prefixes {
			if m := mangle(pre); p.Name == m || strings.HasPrefix(p.Name, m+"_") {
				key = m
				break
			}
		}
		s := sums[key]
		if s == nil {
			s = &Package{Name: key}
			sums[key] = s
			order = append(order, key)
		}
		s.Functions += p.Functions
		s.CodeBytes += p.CodeBytes
	}
	out := make([]Package, 0, len(order))
	for _, k := range order {
		out = append(out, *sums[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CodeBytes > out[j].CodeBytes })
	return out
}

// errTruncated is a length that runs past the module's end.
var errTruncated = errors.New("truncated")

// reader decodes a module's LEB128 integers and names, remembering the first
// error.
type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) byte() byte {
	if r.pos >= len(r.b) {
		r.err = errTruncated
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

// uleb reads an unsigned LEB128 of at most 32 bits.
func (r *reader) uleb() int {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return int(v)
		}
	}
	if r.err == nil {
		r.err = errors.New("LEB128 longer than 5 bytes")
	}
	return 0
}

func (r *reader) name() string {
	n := r.uleb()
	if r.err != nil || r.pos+n > len(r.b) {
		r.err = errTruncated
		return ""
	}
	s := string(r.b[r.pos : r.pos+n])
	r.pos += n
	return s
}

// readNames reads the function-name subsection (id 1) of a "name" section.
func readNames(r *reader, names map[int]string) {
	for r.pos < len(r.b) && r.err == nil {
		id := r.byte()
		size := r.uleb()
		end := r.pos + size
		if id == 1 {
			for n := r.uleb(); n > 0 && r.err == nil; n-- {
				idx := r.uleb()
				names[idx] = r.name()
			}
		}
		r.pos = end
	}
}

// countImportedFunctions reads an import section and counts its functions,
// which come before the module's own in the function index space.
func countImportedFunctions(r *reader) int {
	funcs := 0
	for n := r.uleb(); n > 0 && r.err == nil; n-- {
		r.name()
		r.name()
		switch kind := r.byte(); kind {
		case 0: // function: type index
			r.uleb()
			funcs++
		case 1: // table: reference type, limits
			r.byte()
			limits(r)
		case 2: // memory: limits
			limits(r)
		case 3: // global: value type, mutability
			r.byte()
			r.byte()
		default:
			r.err = fmt.Errorf("import kind %d", kind)
		}
	}
	return funcs
}

func limits(r *reader) {
	if r.byte()&1 == 1 {
		r.uleb()
	}
	r.uleb()
}
