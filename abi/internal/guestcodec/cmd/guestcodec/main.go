// Command guestcodec rewrites protobuf-go-lite's generated files in place
// (package guestcodec): `make generate` runs it on abi/v1/*_lite.pb.go.
//
//	go run ./abi/internal/guestcodec/cmd/guestcodec FILE...
package main

import (
	"fmt"
	"os"

	"github.com/nriwasm/nriwasm/abi/internal/guestcodec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: guestcodec FILE...")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		if err := rewrite(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func rewrite(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read generated file: %w", err)
	}
	out, _, err := guestcodec.Rewrite(path, src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("write generated file: %w", err)
	}
	return nil
}
