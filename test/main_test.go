package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binary is the ioprobe built once for all tests.
var binary string

func TestMain(m *testing.M) {
	// Called as `ioprobe` from the docs examples' shell: the wrapper.
	if real := os.Getenv(docsWrapperEnv); real != "" && filepath.Base(os.Args[0]) == "ioprobe" {
		docsWrapper(real, os.Args[1:])
	}
	dir, err := os.MkdirTemp("", "ioprobe-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "ioprobe")
	build := exec.Command("go", "build", "-o", binary, "../cmd/ioprobe")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building ioprobe:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
