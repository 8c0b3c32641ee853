// Command nriwasm is the nriwasm node agent and its tools. See
// `nriwasm --help`; the commands live in host/internal/cli.
package main

import (
	"os"

	"github.com/nriwasm/nriwasm/host/internal/cli"
)

func main() { os.Exit(cli.Execute(os.Args[1:], os.Stdout, os.Stderr)) }
