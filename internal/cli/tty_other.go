//go:build !linux

package cli

import "io"

func isTerminal(io.Writer) bool { return false }
