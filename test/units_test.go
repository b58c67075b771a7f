package test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecimalBlockSizeRefusalSaysWhatToType: --bs 4KB is 4000 bytes
// (KB is a power of 1000 on ioprobe's command line), which direct I/O
// refuses: one line that says what to type for 4096, exit 2, nothing
// created.
func TestDecimalBlockSizeRefusalSaysWhatToType(t *testing.T) {
	dir := t.TempDir()
	o := ioprobe(t, dir, "run", "--target", "probe.dat", "--bs", "4KB", "--duration", "1s")
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, "ioprobe: --bs 4000B: must be a multiple of 512 bytes (direct I/O needs whole sectors; --buffered runs any size); "+
		"KB is 1000 bytes here: for 4096 bytes write 4k or 4KiB\n", o.stderr)
	require.NoFileExists(t, filepath.Join(dir, "probe.dat"))
}

// TestGrowingOwnFileIsSaid: a larger --size on a file ioprobe made grows
// it on disk. The run says so on stderr before it measures and in the
// result's notes, with both sizes.
func TestGrowingOwnFileIsSaid(t *testing.T) {
	dir := t.TempDir()
	run := func(size string) outcome {
		// 64 I/Os, not a window: one that completes none says so in a
		// note, and the notes are asserted below.
		o := ioprobe(t, dir, append([]string{"run", "--target", "probe.dat", "--size", size, "--output", "json"}, countedIOs(64)...)...)
		require.Equal(t, 0, o.code, o.stderr)
		return o
	}
	first := run("8MiB")
	require.NotContains(t, first.stderr, "grown")
	o := run("32MiB")
	r := decodeResult(t, o.stdout)
	const note = "probe.dat: ioprobe's own file was 8MiB; it was grown to 32MiB (the new part filled before measuring) to hold the access region asked for, and stays that size"
	require.Contains(t, o.stderr, "ioprobe: note: "+note+"\n")
	require.Len(t, r.Targets, 1)
	require.True(t, r.Targets[0].Extended)
	require.EqualValues(t, 8<<20, r.Targets[0].ExtendedFromBytes)
	require.True(t, slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasSuffix(n, note) }), r.Notes)
	st, err := os.Stat(filepath.Join(dir, "probe.dat"))
	require.NoError(t, err)
	require.EqualValues(t, 32<<20, st.Size(), "the file stays grown")

	// The same size again grows nothing and says nothing.
	again := run("32MiB")
	require.NotContains(t, again.stderr, "grown")
	ra := decodeResult(t, again.stdout)
	require.Equal(t, ra.OthersNotes(), ra.Notes, "no note but what others did (this machine may be busy)")
}
