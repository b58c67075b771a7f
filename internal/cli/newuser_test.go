package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runCLI runs the command line as main does and returns the exit status
// and what it wrote.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globalOptions{stdout: &out, stderr: &errb, engines: newEngines()}
	code = execute(context.Background(), g, args)
	return code, out.String(), errb.String()
}

// A mistyped subcommand is bad input: exit 2 and one line on stderr that
// suggests the command meant (it used to exit 1, the I/O-error code).
func TestUnknownCommandIsBadInput(t *testing.T) {
	code, stdout, stderr := runCLI(t, "runn", "--target", "x")
	require.Equal(t, ExitBadInput, code)
	require.Empty(t, stdout)
	require.Equal(t, `ioprobe: unknown command "runn"; did you mean run? (see 'ioprobe --help')`+"\n", stderr)

	code, _, stderr = runCLI(t, "frobnicate")
	require.Equal(t, ExitBadInput, code)
	require.Equal(t, `ioprobe: unknown command "frobnicate" (see 'ioprobe --help')`+"\n", stderr)
}

// --bs takes weights for every size or for none; a mix of both is bad
// input that names the size without one, and nothing is created.
func TestBlockSizesAllWeightsOrNone(t *testing.T) {
	tgt := t.TempDir() + "/t.dat"
	code, _, stderr := runCLI(t, "run", "--target", tgt, "--bs", "4k:70,64k", "--duration", "1s")
	require.Equal(t, ExitBadInput, code)
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Contains(t, stderr, `--bs "64k": has no weight while "4k:70" has one`)
	require.NoFileExists(t, tgt)
}
