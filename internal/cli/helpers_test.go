package cli

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/ioprobe/ioprobe/pkg/result"
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

// inputNotes are a result's notes about its input, without what other
// processes did beside it (those come and go with the machine's load).
func inputNotes(r *result.Result) []string {
	var out []string
	others := r.OthersNotes()
	for _, n := range r.Notes {
		if !slices.Contains(others, n) {
			out = append(out, n)
		}
	}
	return out
}
