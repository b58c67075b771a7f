package test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
)

// The README's `ioprobe run` examples on a block device work as written
// on an empty device (a loop device stands in for /dev/nvme1n1), only
// shortened. A writing profile needs --allow-destructive: the example
// once left it out and was refused.
func TestReadmeDeviceExamplesRunAsWritten(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	var examples [][]string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "ioprobe run --target /dev/") {
			cmd, _, _ := strings.Cut(line, ">") // the redirection is the shell's
			examples = append(examples, strings.Fields(cmd)[1:])
		}
	}
	require.NotEmpty(t, examples, "no device example in the README")
	dev := testloop.Device(t, 64<<20)
	dir := t.TempDir()
	for _, args := range examples {
		for i, a := range args {
			if strings.HasPrefix(a, "/dev/") {
				args[i] = dev
			}
		}
		args = append(args, "--duration", "300ms", "--ramp", "0s")
		o := ioprobe(t, dir, args...)
		require.Equal(t, 0, o.code, "ioprobe %s: %s", strings.Join(args, " "), o.stderr)
		decodeResult(t, o.stdout)
	}
}
