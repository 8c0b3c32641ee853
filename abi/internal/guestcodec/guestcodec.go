// Package guestcodec rewrites protobuf-go-lite's generated code (the Go
// guest's ABI codec, abi/v1/*_lite.pb.go) into a form the Go linker and the
// Wasm code generator make smaller, with the same behaviour and the same
// bytes on the wire. `make generate` runs it (cmd/guestcodec) on every lite
// file; abi/RATIONALE.md ("Why is the guest's codec rewritten?") says why.
//
// Two rewrites:
//
// Oneofs by type switch. protoc-gen-go-lite sizes and encodes a oneof field
// through an interface assertion:
//
//	if vtmsg, ok := m.Result.(interface{ SizeVT() int }); ok {
//		n += vtmsg.SizeVT()
//	}
//
// That is a dynamic call of SizeVT (likewise MarshalToSizedBufferVT), and the
// linker keeps the method of that name and signature on every type that is
// ever converted to an interface — which every request message is, since the
// SDK's handler interfaces name them. A guest that never encodes a request
// then carries all their encoders. Rewrite turns each such statement into a
// type switch over the oneof's wrapper types, each case calling the method
// directly:
//
//	switch vtmsg := m.Result.(type) {
//	case *Response_Info:
//		n += vtmsg.SizeVT()
//	case *Response_Init:
//		...
//	}
//
// The same wrapper's method runs for the same value, so the bytes written are
// the same; a nil oneof matches no case, as it failed the assertion before.
//
// Decode errors by shared constructors. Every field of every decoder builds
// its wire-type error in place (fmt.Errorf("proto: wrong wireType = %d for
// field Source", wireType)), 850 calls in all, each boxing its arguments.
// Rewrite calls one constructor per error kind instead (abi/v1's
// liteerrors_wasip1.go), which formats the same text:
//
//	return errWrongWireType("Source", wireType)
//
// and drops the file's fmt import once nothing else uses it.
package guestcodec

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Rewrite returns src with every comma-ok interface assertion on a oneof
// field ("if v, ok := m.F.(interface{...}); ok { ... }") turned into a type
// switch over the types that implement the oneof's marker method in the
// same file, every fmt.Errorf of a decode error in errorConstructors turned
// into its constructor's call (and the fmt import dropped when nothing else
// uses it), and how many statements and calls it rewrote. filename is for
// errors. A second Rewrite of its output changes nothing.
func Rewrite(filename string, src []byte) ([]byte, int, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filename, src, parser.ParseComments)
	if err != nil {
		return nil, 0, fmt.Errorf("guestcodec: parse: %w", err)
	}
	oneofs := oneofFields(file)
	wrappers := markerImplementers(file)
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	var walkErr error
	ast.Inspect(file, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok {
			return walkErr == nil // the file: on to its declarations
		}
		if fn.Recv == nil || fn.Body == nil || walkErr != nil {
			return false // generated oneof code is in methods
		}
		recv := receiverType(fn)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			st, ok := n.(*ast.IfStmt)
			if !ok || walkErr != nil {
				return walkErr == nil
			}
			v, field, ok := oneofAssertion(st)
			if !ok {
				return true
			}
			iface := oneofs[recv+"."+field]
			if iface == "" {
				walkErr = fmt.Errorf("guestcodec: %s: %s.%s is asserted to an interface but is no oneof field of %s",
					fset.Position(st.Pos()), recv, field, recv)
				return false
			}
			types := wrappers[iface]
			if len(types) == 0 {
				walkErr = fmt.Errorf("guestcodec: %s: no type implements %s's marker method %s()",
					fset.Position(st.Pos()), recv+"."+field, iface)
				return false
			}
			x := st.Init.(*ast.AssignStmt).Rhs[0].(*ast.TypeAssertExpr).X
			body := string(src[fset.Position(st.Body.Lbrace).Offset+1 : fset.Position(st.Body.Rbrace).Offset])
			var b strings.Builder
			fmt.Fprintf(&b, "switch %s := %s.(type) {\n", v, src[fset.Position(x.Pos()).Offset:fset.Position(x.End()).Offset])
			for _, t := range types {
				fmt.Fprintf(&b, "case *%s:%s", t, body)
			}
			b.WriteString("}")
			edits = append(edits, edit{fset.Position(st.Pos()).Offset, fset.Position(st.End()).Offset, b.String()})
			return false
		})
		return false
	})
	if walkErr != nil {
		return nil, 0, walkErr
	}
	fmtUses := 0
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "fmt" {
				fmtUses++
			}
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if text, ok := errorCall(call, src, fset); ok {
			edits = append(edits, edit{fset.Position(call.Pos()).Offset, fset.Position(call.End()).Offset, text})
			return false // its fmt.Errorf goes with it, uncounted
		}
		return true
	})
	if fmtUses == 0 {
		for _, imp := range file.Imports {
			if imp.Path.Value == `"fmt"` {
				edits = append(edits, edit{fset.Position(imp.Pos()).Offset, fset.Position(imp.End()).Offset, ""})
			}
		}
	}
	rewritten := 0 // statements and calls; a dropped import is not one
	for _, e := range edits {
		if e.text != "" {
			rewritten++
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].from < edits[j].from })
	for i := 1; i < len(edits); i++ {
		if edits[i].from < edits[i-1].to {
			return nil, 0, fmt.Errorf("guestcodec: %s: two rewrites overlap at offset %d", filename, edits[i].from)
		}
	}
	var out bytes.Buffer
	last := 0
	for _, e := range edits {
		out.Write(src[last:e.from])
		out.WriteString(e.text)
		last = e.to
	}
	out.Write(src[last:])
	formatted, err := format.Source(out.Bytes())
	if err != nil {
		return nil, 0, fmt.Errorf("guestcodec: %s: the rewritten source does not format: %w", filename, err)
	}
	return formatted, rewritten, nil
}

// errorConstructors are the decode errors protoc-gen-go-lite formats in
// place, by their format, and the constructor in abi/v1
// (liteerrors_wasip1.go) that formats the same text: its name, and how many
// of the call's arguments follow the name the format's first group holds.
var errorConstructors = []struct {
	format *regexp.Regexp
	name   string
	args   int
}{
	{regexp.MustCompile(`^proto: wrong wireType = %d for field ([A-Za-z0-9_]+)$`), "errWrongWireType", 1},
	{regexp.MustCompile(`^proto: ([A-Za-z0-9_]+): wiretype end group for non-group$`), "errEndGroup", 0},
	{regexp.MustCompile(`^proto: ([A-Za-z0-9_]+): illegal tag %d \(wire type %d\)$`), "errIllegalTag", 2},
}

// errorCall is the constructor call that replaces call, when call is
// fmt.Errorf of one of errorConstructors' formats.
func errorCall(call *ast.CallExpr, src []byte, fset *token.FileSet) (string, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Errorf" || len(call.Args) == 0 {
		return "", false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "fmt" {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	format, err := strconv.Unquote(lit.Value)
	if err != nil {
		return "", false
	}
	for _, c := range errorConstructors {
		m := c.format.FindStringSubmatch(format)
		if m == nil || len(call.Args) != 1+c.args {
			continue
		}
		parts := []string{strconv.Quote(m[1])}
		for _, a := range call.Args[1:] {
			parts = append(parts, string(src[fset.Position(a.Pos()).Offset:fset.Position(a.End()).Offset]))
		}
		return c.name + "(" + strings.Join(parts, ", ") + ")", true
	}
	return "", false
}

// oneofAssertion matches "if v, ok := m.F.(interface{...}); ok { ... }"
// without an else, and returns v and F.
func oneofAssertion(st *ast.IfStmt) (v, field string, ok bool) {
	as, isAssign := st.Init.(*ast.AssignStmt)
	if !isAssign || as.Tok != token.DEFINE || len(as.Lhs) != 2 || len(as.Rhs) != 1 || st.Else != nil {
		return "", "", false
	}
	ta, isAssert := as.Rhs[0].(*ast.TypeAssertExpr)
	if !isAssert {
		return "", "", false
	}
	if _, isIface := ta.Type.(*ast.InterfaceType); !isIface {
		return "", "", false
	}
	sel, isSel := ta.X.(*ast.SelectorExpr)
	lhsV, okV := as.Lhs[0].(*ast.Ident)
	lhsOK, okOK := as.Lhs[1].(*ast.Ident)
	cond, okCond := st.Cond.(*ast.Ident)
	if !isSel || !okV || !okOK || !okCond || cond.Name != lhsOK.Name {
		return "", "", false
	}
	return lhsV.Name, sel.Sel.Name, true
}

// oneofFields maps "Message.Field" to the field's type for every struct
// field whose type is a single-method marker interface declared in the
// file (protoc-gen-go-lite's "isMessage_Field").
func oneofFields(file *ast.File) map[string]string {
	markers := map[string]bool{}
	structs := map[string]*ast.StructType{}
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, s := range gd.Specs {
			ts := s.(*ast.TypeSpec)
			switch t := ts.Type.(type) {
			case *ast.InterfaceType:
				if m := t.Methods.List; len(m) == 1 && len(m[0].Names) == 1 && m[0].Names[0].Name == ts.Name.Name {
					markers[ts.Name.Name] = true
				}
			case *ast.StructType:
				structs[ts.Name.Name] = t
			}
		}
	}
	fields := map[string]string{}
	for name, st := range structs {
		for _, f := range st.Fields.List {
			id, ok := f.Type.(*ast.Ident)
			if !ok || !markers[id.Name] {
				continue
			}
			for _, n := range f.Names {
				fields[name+"."+n.Name] = id.Name
			}
		}
	}
	return fields
}

// markerImplementers maps each marker method's name to the types whose
// pointer receivers declare it, sorted.
func markerImplementers(file *ast.File) map[string][]string {
	out := map[string][]string{}
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || !strings.HasPrefix(fn.Name.Name, "is") ||
			fn.Type.Params.NumFields() != 0 || fn.Type.Results.NumFields() != 0 {
			continue
		}
		if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok {
				out[fn.Name.Name] = append(out[fn.Name.Name], id.Name)
			}
		}
	}
	for _, ts := range out {
		sort.Strings(ts)
	}
	return out
}

// receiverType is the name of fn's receiver type, without its star.
func receiverType(fn *ast.FuncDecl) string {
	t := fn.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
