// Command wasmsize prints where each WebAssembly module's bytes go: its
// sections, then its code per package, largest first (see package wasmsize).
//
//	go run ./internal/wasmsize/cmd/wasmsize [-top N] [-group PREFIX,...] [-funcs PREFIX] module.wasm...
//
// -top (default 25) limits the package rows; -group sums the packages under
// each comma-separated import-path prefix into one row (for example
// "github.com/nriwasm/nriwasm/abi" for the ABI codec); -funcs prints, after
// the packages, every function of the packages under one import-path prefix
// with its code bytes, largest first (-top does not limit them).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/nriwasm/nriwasm/internal/wasmsize"
)

func main() {
	top := flag.Int("top", 25, "package rows to print per module")
	group := flag.String("group", "", "comma-separated import-path prefixes to sum into one row each")
	funcs := flag.String("funcs", "", "import-path prefix whose functions to list one by one")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: wasmsize [-top N] [-group PREFIX,...] [-funcs PREFIX] module.wasm...")
		os.Exit(2)
	}
	var prefixes []string
	if *group != "" {
		prefixes = strings.Split(*group, ",")
	}
	for _, path := range flag.Args() {
		if err := print(path, *top, prefixes, *funcs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func print(path string, top int, prefixes []string, funcs string) error {
	module, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read module: %w", err)
	}
	rep, err := wasmsize.Analyze(module)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "%s\t%d\tbytes\t\n", path, rep.Size)
	for _, s := range rep.Sections {
		fmt.Fprintf(w, "  section %s\t%d\t\t\n", s.Name, s.Size)
	}
	for i, p := range rep.Group(prefixes...) {
		if i == top {
			break
		}
		fmt.Fprintf(w, "  code %s\t%d\t%d funcs\t\n", p.Name, p.CodeBytes, p.Functions)
	}
	if funcs != "" {
		for _, f := range rep.FunctionsIn(funcs) {
			fmt.Fprintf(w, "  func %s\t%d\t\t\n", f.Name, f.CodeBytes)
		}
	}
	fmt.Fprintln(w)
	return w.Flush()
}
