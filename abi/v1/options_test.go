package v1_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostOptionsStyle keeps the host to its one options style
// (host/RATIONALE.md, "Why functional options, and why the error?"): no
// host package, outside tests and generated code, declares an exported
// Options struct, nor an option function type that cannot refuse its value
// (func(*T) without an error result), and every type named Option is
// func(*options) error.
func TestHostOptionsStyle(t *testing.T) {
	files := 0
	err := filepath.WalkDir(filepath.Join("..", "..", "host"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		files++
		for _, problem := range optionStyleProblems(f) {
			t.Errorf("%s: %s (host/RATIONALE.md: type Option func(*options) error)", path, problem)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no host source file found")
	}
}

// optionStyleProblems names f's type declarations that break the options
// style.
func optionStyleProblems(f *ast.File) []string {
	var problems []string
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.TYPE {
			continue
		}
		for _, spec := range gen.Specs {
			ts := spec.(*ast.TypeSpec)
			name := ts.Name.Name
			switch typ := ts.Type.(type) {
			case *ast.StructType:
				if ast.IsExported(name) && strings.HasSuffix(name, "Options") {
					problems = append(problems, "exported options struct "+name)
				}
			case *ast.FuncType:
				mutator := typ.Params.NumFields() == 1 && isPointer(typ.Params.List[0].Type)
				returnsError := typ.Results.NumFields() == 1 && isIdent(typ.Results.List[0].Type, "error")
				switch {
				case name == "Option" && !(mutator && returnsError && isPointerTo(typ.Params.List[0].Type, "options")):
					problems = append(problems, "type Option is not func(*options) error")
				case mutator && typ.Results.NumFields() == 0:
					problems = append(problems, "option type "+name+" cannot refuse its value: it returns no error")
				}
			}
		}
	}
	return problems
}

func isPointer(e ast.Expr) bool { _, ok := e.(*ast.StarExpr); return ok }

func isPointerTo(e ast.Expr, name string) bool {
	star, ok := e.(*ast.StarExpr)
	return ok && isIdent(star.X, name)
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
