package test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// outcome is what one invocation of the binary did.
type outcome struct {
	code           int
	stdout, stderr string
}

// ioprobe runs the binary with args in dir and waits for it.
func ioprobe(t *testing.T, dir string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// runCmd runs cmd to its end and returns what it did; only a command
// that could not run at all fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) outcome {
	t.Helper()
	o, err := tryCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// tryCmd is runCmd for a goroutine other than the test's, where a test
// must not be failed: a command that could not run is an error.
func tryCmd(cmd *exec.Cmd) (outcome, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return outcome{}, fmt.Errorf("running %s: %v", strings.Join(cmd.Args, " "), err)
	}
	return outcome{code: code, stdout: out.String(), stderr: errb.String()}, nil
}
