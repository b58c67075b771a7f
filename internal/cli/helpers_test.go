package cli

import (
	"bytes"
	"context"
	"testing"
)

func dryRunCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	g := &globalOptions{stdout: &stdout, stderr: &stderr, engines: newEngines()}
	code := execute(context.Background(), g, args)
	return code, stdout.String(), stderr.String()
}

// runCLI runs the command line as main does and returns the exit status
// and what it wrote.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globalOptions{stdout: &out, stderr: &errb, engines: newEngines()}
	code = execute(context.Background(), g, args)
	return code, out.String(), errb.String()
}
