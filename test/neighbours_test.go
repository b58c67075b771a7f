package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/cpuacct"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// hogs starts n busy loops (sh spinning on its builtin ":") and returns
// their pids; each is stopped, by its pid, when the test ends.
func hogs(t *testing.T, n int) []int {
	t.Helper()
	var pids []int
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		require.NoError(t, cmd.Start())
		pid := cmd.Process.Pid
		pids = append(pids, pid)
		t.Cleanup(func() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	return pids
}

// cpuTicks is the CPU time pids have used (utime + stime, USER_HZ ticks).
func cpuTicks(t *testing.T, pids []int) uint64 {
	t.Helper()
	var n uint64
	for _, pid := range pids {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		require.NoError(t, err)
		f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+1:])
		for _, i := range []int{11, 12} { // fields 14 and 15
			v, err := strconv.ParseUint(f[i], 10, 64)
			require.NoError(t, err)
			n += v
		}
	}
	return n
}

// noteIffAbove: a note about others' CPU is in the result's notes exactly
// when their share is above a tenth, whatever else the machine does.
func noteIffAbove(t *testing.T, r *result.Result) {
	t.Helper()
	o := r.Summary.HostOthers
	require.NotNil(t, o, "host_others is measured")
	cpuNote, deviceNote := false, false
	for _, n := range r.Notes {
		cpuNote = cpuNote || strings.HasPrefix(n, "others used ")
		deviceNote = deviceNote || strings.HasPrefix(n, "others did ")
	}
	require.Equal(t, o.CPUFraction > result.OthersThreshold, cpuNote, "cpu_fraction %.3f, notes %q", o.CPUFraction, r.Notes)
	require.Equal(t, r.Summary.OthersDeviceShare() > result.OthersThreshold, deviceNote, "device share %.3f, notes %q", r.Summary.OthersDeviceShare(), r.Notes)
}

// TestOthersCPUIsSaid: beside busy loops of the test's, a run's
// host_others.cpu_fraction holds at least their share of the host (they
// spin through the whole run), and every output says so with the
// figures: the JSON's notes, the text report and the HTML page.
func TestOthersCPUIsSaid(t *testing.T) {
	dir := t.TempDir()
	ncpu := runtime.NumCPU()
	pids := hogs(t, ncpu)
	t0, before := time.Now(), cpuTicks(t, pids)
	o := ioprobe(t, dir, "run", "--target", "probe.dat", "--size", "16MiB", "--duration", "2s", "--ramp", "0s", "--output", "json", "--out", "busy.json")
	hogSeconds := float64(cpuTicks(t, pids)-before) / float64(cpuacct.UserHZ())
	wall := time.Since(t0).Seconds()
	require.Equal(t, 0, o.code, o.stderr)
	data, err := os.ReadFile(filepath.Join(dir, "busy.json"))
	require.NoError(t, err)
	r := decodeResult(t, string(data))

	// The loops' share of the host over the whole command; the window
	// is most of it, and they spun steadily.
	share := hogSeconds / (wall * float64(ncpu))
	got := r.Summary.HostOthers.CPUFraction
	t.Logf("busy loops: %.3f of the host over %.2f s; host_others.cpu_fraction %.3f", share, wall, got)
	require.GreaterOrEqual(t, got, share*0.6, "others' CPU holds the loops'")
	require.LessOrEqual(t, got, 1.0)
	noteIffAbove(t, r)
	// Runnable loops on every CPU take their fair share of it (or, on a
	// loaded machine, the load does): well over a tenth either way.
	require.Greater(t, got, result.OthersThreshold)
	want := "others used " + strconv.FormatFloat(got*float64(ncpu), 'f', 2, 64) + " of " + strconv.Itoa(ncpu)
	require.True(t, slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, want) }), "%q", r.Notes)

	txt := ioprobe(t, dir, "report", "busy.json")
	require.Equal(t, 0, txt.code, txt.stderr)
	require.Contains(t, txt.stdout, "Note      "+want)
	require.Contains(t, txt.stdout, "the CPU figures are the host's, not ioprobe's alone")
	require.Regexp(t, `(?m)^  others' CPU +[0-9.]+ % +other processes: [0-9.]+ of the host's \d+ CPUs, in the host figures above \(not ioprobe's\)$`, txt.stdout)

	html := ioprobe(t, dir, "report", "busy.json", "--output", "html")
	require.Equal(t, 0, html.code, html.stderr)
	require.Contains(t, html.stdout, want)
}

// TestOthersDeviceIOIsSaid: beside a second ioprobe reading the same
// loop device, a run's host_others counts that reader's I/O on the
// device, its notes say so, and the kernel cross-check of the mean
// request size blames someone else's I/O, not the block layer.
func TestOthersDeviceIOIsSaid(t *testing.T) {
	dir := t.TempDir()
	dev := testloop.Device(t, 256<<20)
	other := startBackground(t, "run", "--target", dev, "--bs", "64k", "--random-pct", "0", "--qd", "4",
		"--duration", "8s", "--ramp", "0s", "--output", "json")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Greater(c, procIO(c, other.cmd.Process.Pid, "read_bytes"), uint64(32<<20), "the other reader is reading")
	}, time.Minute, 50*time.Millisecond)
	o := ioprobe(t, dir, "run", "--target", dev, "--bs", "4k", "--qd", "4", "--duration", "2s", "--ramp", "0s", "--output", "json", "--out", "a.json")
	require.Equal(t, 0, o.code, o.stderr)
	done, _ := other.done()
	require.False(t, done, "the other reader ran through the whole window")
	require.Equal(t, 0, other.exitCode(t), other.stderr())
	b := decodeResult(t, string(other.out.Bytes()))
	data, err := os.ReadFile(filepath.Join(dir, "a.json"))
	require.NoError(t, err)
	a := decodeResult(t, string(data))

	ho := a.Summary.HostOthers
	require.NotNil(t, ho)
	require.NotNil(t, ho.DeviceBytes)
	// The other reader read steadily the whole time: at least a good
	// part of its mean rate over the window is in a's count of others,
	// and never more than it read in all.
	expect := b.Summary.ThroughputBytesPerSecond * a.Summary.ElapsedSeconds
	t.Logf("others' bytes %d, the other reader's rate × the window %.0f, its total %d", *ho.DeviceBytes, expect, b.Summary.Bytes)
	require.GreaterOrEqual(t, float64(*ho.DeviceBytes), 0.3*expect)
	require.LessOrEqual(t, *ho.DeviceBytes, b.Summary.Bytes+a.Summary.Bytes/100)
	require.Positive(t, *ho.DeviceOps)
	noteIffAbove(t, a)
	require.Greater(t, a.Summary.OthersDeviceShare(), result.OthersThreshold)

	txt := ioprobe(t, dir, "report", "a.json")
	require.Equal(t, 0, txt.code, txt.stderr)
	require.Contains(t, txt.stdout, "Note      others did ")
	require.Contains(t, txt.stdout, "the kernel's counts are not ioprobe's alone")
	require.Contains(t, txt.stdout, "someone else's I/O (other processes did ")
	require.Regexp(t, `(?m)^  others' I/Os +[0-9,]+ +\([0-9.]+% of the devices' I/O\)`, txt.stdout)
}

// TestQuietDeviceHasNoNote: a run alone on its loop device counts next to
// nothing for others there, and no note about the device; whether the
// CPU note is there follows the figure (this machine may be busy).
func TestQuietDeviceHasNoNote(t *testing.T) {
	dir := t.TempDir()
	dev := testloop.Device(t, 64<<20)
	o := ioprobe(t, dir, "run", "--target", dev, "--bs", "4k", "--qd", "4", "--duration", "1s", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	noteIffAbove(t, r)
	require.Less(t, r.Summary.OthersDeviceShare(), result.OthersThreshold, "nobody else used %s", dev)
	for _, n := range r.Notes {
		require.NotContains(t, n, "others did")
	}
}

// TestCheckEtcdNamesTheLoad: check etcd beside busy loops says in its
// verdict that it was measured beside other load, with the figures.
func TestCheckEtcdNamesTheLoad(t *testing.T) {
	dir := t.TempDir()
	hogs(t, runtime.NumCPU())
	o := ioprobe(t, dir, "check", "etcd", "--target", dir, "--duration", "2s", "--output", "json")
	require.Contains(t, []int{0, 2, 3}, o.code, o.stderr)
	r := checkDoc(t, o.stdout)
	require.NotNil(t, r.HostOthers)
	require.NotNil(t, r.Verdict)
	if r.HostOthers.CPUFraction > result.OthersThreshold {
		require.Contains(t, r.Verdict.Reason, " — measured beside other load: others used ")
		require.Contains(t, r.Notes[0], "during the check")
	}
	require.Greater(t, r.HostOthers.CPUFraction, result.OthersThreshold, "the loops ran through the check")
	txt := ioprobe(t, dir, "check", "etcd", "--target", dir, "--duration", "1s", "--backend=false")
	require.Regexp(t, `(?m)^Others    [0-9.]+ of \d+ CPUs \([0-9.]+% of the host's CPU\)`, txt.stdout)
	require.Regexp(t, `(?m)^Check     etcd: [A-Z]+: .* — measured beside other load: others used `, txt.stdout)
}
