// Command ioprobe measures storage with direct I/O. See README.md.
package main

import (
	"os"

	"github.com/ioprobe/ioprobe/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
