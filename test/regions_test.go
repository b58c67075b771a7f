package test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Each target has its own access region (issue 10, item 6): without
// --size, a run over targets of different sizes used to give the first
// target's region to every one, so writes grew the smaller file and reads
// past its end failed.

// ownFile has ioprobe create and fill a file of size bytes.
func ownFile(t *testing.T, dir, name, size string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	o := ioprobe(t, dir, "run", "--target", p, "--size", size, "--duration", "100ms", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	return p
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	require.NoError(t, err)
	return st.Size()
}

// requireOwnRegions checks that every target of r used exactly its own size
// (all sizes here are multiples of every transfer size) and that no I/O
// failed.
func requireOwnRegions(t *testing.T, r *result.Result, sizes map[string]int64) {
	t.Helper()
	require.Equal(t, result.StatusOK, r.Status, r.Message)
	require.Zero(t, r.Summary.Errors, "%v", r.Summary.ErrorsByClass)
	require.Len(t, r.Targets, len(sizes))
	for _, tg := range r.Targets {
		require.Equal(t, sizes[tg.Path], tg.SizeBytes, tg.Path)
		require.Equal(t, sizes[tg.Path], tg.RegionBytes, "%s: its region is not its own size", tg.Path)
	}
}

func TestRunEachFileTargetItsOwnRegion(t *testing.T) {
	dir := t.TempDir()
	big := ownFile(t, dir, "big.dat", "32MiB")
	small := ownFile(t, dir, "small.dat", "8MiB")
	sizes := map[string]int64{big: 32 << 20, small: 8 << 20}

	// Sequential writes and reads walk to the end of each region and wrap:
	// past the end of small.dat if its region were big.dat's.
	// 640 I/Os of 64 KiB: each region walked to its end (a count, not a
	// window, which beside load may not get that far or do any I/O).
	o := ioprobe(t, dir, append([]string{"run", "--target", big, "--target", small, "--bs", "64k", "--read-pct", "50", "--random-pct", "0",
		"--qd", "4", "--output", "json"}, countedIOs(640)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	requireOwnRegions(t, r, sizes)
	require.Positive(t, r.Summary.WriteOps)
	require.Zero(t, r.Workload.RegionBytes, "the targets' regions differ, so the workload has no single one")
	for p, n := range sizes {
		require.Equal(t, n, fileSize(t, p), "%s changed size", p)
	}

	// An explicit --size applies to every target: larger than a target
	// ioprobe did not create, it is bad input naming that target, and
	// nothing is touched.
	foreign := filepath.Join(dir, "foreign.dat")
	require.NoError(t, os.WriteFile(foreign, []byte(strings.Repeat("user data ", 838861)[:8<<20]), 0o644))
	before := sha256Of(t, foreign, 0)
	o = ioprobe(t, dir, "run", "--target", big, "--target", foreign, "--size", "16MiB", "--duration", "300ms", "--ramp", "0s")
	require.Equal(t, 2, o.code, o.stderr)
	require.Empty(t, o.stdout)
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	require.Len(t, lines, 1, o.stderr)
	require.Contains(t, lines[0], "target "+foreign+": region 16MiB is larger than the target's size 8MiB")
	require.Equal(t, before, sha256Of(t, foreign, 0))
	require.EqualValues(t, 8<<20, fileSize(t, foreign))
}

func TestSuiteEachFileTargetItsOwnRegion(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	big := ownFile(t, dir, "big.dat", "24MiB")
	small := ownFile(t, dir, "small.dat", "8MiB")
	sizes := map[string]int64{big: 24 << 20, small: 8 << 20}
	// business: six points, among them 64 KiB sequential writes (log) and
	// 512 KiB sequential reads (video on demand).
	o := ioprobe(t, dir, "suite", "business", "--target", big, "--target", small, "--qd", "2", "--duration", "200ms", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	s := decodeSuite(t, []byte(o.stdout))
	require.NotEmpty(t, s.Results)
	for _, r := range s.Results {
		mine := map[string]int64{}
		for _, tg := range r.Targets {
			mine[tg.Path] = sizes[tg.Path]
		}
		requireOwnRegions(t, r, mine)
	}
	for p, n := range sizes {
		require.Equal(t, n, fileSize(t, p), "%s changed size", p)
	}
}

// loopWithTail attaches a loop device that shows the first size bytes of
// a backing file twice as long, whose second half holds data; it returns
// the device and the backing file.
func loopWithTail(t *testing.T, size int64) (string, string) {
	t.Helper()
	testdeps.Need(t, testdeps.LoopDevices)
	backing := filepath.Join(t.TempDir(), "backing")
	require.NoError(t, os.WriteFile(backing, nil, 0o600))
	require.NoError(t, os.Truncate(backing, size))
	f, err := os.OpenFile(backing, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte(strings.Repeat("beyond the end of the device ", int(size)/29+1)[:size]))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	dev := attach(t, backing, "--sizelimit", strconv.FormatInt(size, 10))
	return dev, backing
}

func TestRunEachDeviceItsOwnRegion(t *testing.T) {
	big, bigBacking := loopWithTail(t, 32<<20)
	small, smallBacking := loopWithTail(t, 8<<20)
	tails := map[string]string{bigBacking: sha256Of(t, bigBacking, 32<<20), smallBacking: sha256Of(t, smallBacking, 8<<20)}
	sizes := map[string]int64{big: 32 << 20, small: 8 << 20}
	dir := t.TempDir()

	for _, random := range []string{"100", "0"} {
		o := ioprobe(t, dir, append([]string{"run", "--target", big, "--target", small, "--bs", "64k", "--read-pct", "50", "--random-pct", random,
			"--qd", "4", "--allow-destructive", "--output", "json"}, countedIOs(640)...)...)
		require.Equal(t, 0, o.code, o.stderr)
		r := decodeResult(t, o.stdout)
		requireOwnRegions(t, r, sizes)
		require.NotNil(t, r.Summary.Device)
		require.Positive(t, r.Summary.Device.WriteOps, "the kernel saw no writes")
	}
	o := ioprobe(t, dir, "suite", "business", "--target", big, "--target", small, "--qd", "2", "--duration", "200ms", "--ramp", "0s",
		"--allow-destructive", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	for _, r := range decodeSuite(t, []byte(o.stdout)).Results {
		mine := map[string]int64{}
		for _, tg := range r.Targets {
			mine[tg.Path] = sizes[tg.Path]
		}
		requireOwnRegions(t, r, mine)
	}
	for p, sum := range tails {
		require.Equal(t, sum, sha256Of(t, p, fileSize(t, p)/2), "the data past the end of the device changed")
	}

	// --size larger than the smaller device: exit 2 naming it, and
	// neither device is touched.
	whole := map[string]string{bigBacking: sha256Of(t, bigBacking, 0), smallBacking: sha256Of(t, smallBacking, 0)}
	o = ioprobe(t, dir, "run", "--target", big, "--target", small, "--size", "16MiB", "--read-pct", "0",
		"--duration", "300ms", "--ramp", "0s", "--allow-destructive")
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, "ioprobe: target "+small+": region 16MiB is larger than the target's size 8MiB", strings.TrimSpace(o.stderr))
	for p, sum := range whole {
		require.Equal(t, sum, sha256Of(t, p, 0), "a refused run changed %s", p)
	}
}
