package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/check"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// slowFlush is a journaled ext4 on a loop device over a file in a FUSE
// passthrough whose every fsync first sleeps the milliseconds in delay:
// a device whose flushes are slower by a known amount (this kernel has
// no dm-delay).
type slowFlush struct {
	mnt   string // the ext4
	dev   string // the loop device's kernel name
	delay string // the file the passthrough reads its delay from
}

func (s slowFlush) setDelay(t *testing.T, ms int) {
	t.Helper()
	require.NoError(t, os.WriteFile(s.delay, []byte(strconv.Itoa(ms)), 0o600))
}

func (s slowFlush) stat(t *testing.T) target.DiskStats {
	t.Helper()
	st, err := target.ReadDiskStats("", s.dev)
	require.NoError(t, err)
	return st
}

// newSlowFlush builds the device; everything is unmounted, detached and
// stopped (by its pid) when the test ends.
func newSlowFlush(t *testing.T) slowFlush {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: FUSE mount, loop device, mount")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount", "fio"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (scripts/test-deps.sh installs it)", tool)
		}
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import fusepy").Run(); err != nil {
		t.Skip("Debian's python3-fusepy is not installed (scripts/test-deps.sh installs it)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse here")
	}
	base := t.TempDir()
	root, fuseMnt, mnt := filepath.Join(base, "root"), filepath.Join(base, "fuse"), filepath.Join(base, "ext4")
	for _, d := range []string{root, fuseMnt, mnt} {
		require.NoError(t, os.Mkdir(d, 0o700))
	}
	s := slowFlush{mnt: mnt, delay: filepath.Join(base, "delay")}
	s.setDelay(t, 0)

	script, err := filepath.Abs(filepath.Join("testdata", "slowflush.py"))
	require.NoError(t, err)
	fuse := exec.Command("/usr/bin/python3", script, root, fuseMnt, s.delay)
	var fuseLog strings.Builder
	fuse.Stdout, fuse.Stderr = &fuseLog, &fuseLog
	require.NoError(t, fuse.Start())
	exited := make(chan struct{})
	go func() { _ = fuse.Wait(); close(exited) }()
	t.Cleanup(func() {
		if out, err := exec.Command("umount", fuseMnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", fuseMnt, err, out)
		}
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = fuse.Process.Kill() // ours, by its pid
			<-exited
			t.Errorf("the FUSE passthrough did not stop when unmounted: %s", fuseLog.String())
		}
	})
	require.Eventually(t, func() bool {
		var a, b unix.Stat_t
		return unix.Stat(fuseMnt, &a) == nil && unix.Stat(base, &b) == nil && a.Dev != b.Dev
	}, 30*time.Second, 20*time.Millisecond, "the FUSE passthrough never mounted: %s", &fuseLog)

	img := filepath.Join(fuseMnt, "disk.img")
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	require.NoError(t, os.Truncate(img, 512<<20))
	// Buffered: the loop driver's direct I/O through FUSE fails.
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	require.NoError(t, err, "%s", out)
	dev := strings.TrimSpace(string(out))
	s.dev = filepath.Base(dev)
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("detach %s: %v: %s", dev, err, out)
		}
	})
	// Journaled (the default), with inode tables and journal written now:
	// lazy initialisation would write them in the background, into the
	// counters the test compares.
	mustRun(t, "mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
	mustRun(t, "mount", dev, mnt)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	return s
}

// measured is one tool's run at one added delay.
type measured struct {
	tool                       string
	delay, round               int
	samples                    uint64
	p50, p99                   float64 // seconds
	verdict                    string  // from the p99 against 10 ms; ioprobe's own for ioprobe
	borderline                 bool
	flushesPerSync, kibPerSync float64
	runtime                    time.Duration // the recipe's (fio's job_runtime)
}

// runRecipe runs etcd's community fio recipe in the directory, with the
// loop device's counters read around it.
func runRecipe(t *testing.T, s slowFlush, size string) measured {
	t.Helper()
	before := s.stat(t)
	cmd := exec.Command("fio", "--name=etcd", "--rw=write", "--ioengine=sync", "--fdatasync=1",
		"--directory="+s.mnt, "--size="+size, "--bs=2300", "--output-format=json")
	out, err := cmd.Output()
	require.NoError(t, err, "fio: %s", out)
	after := s.stat(t)
	require.NoError(t, os.Remove(filepath.Join(s.mnt, "etcd.0.0")))
	var doc struct {
		Jobs []struct {
			Runtime int64 `json:"job_runtime"` // ms
			Sync    struct {
				Lat struct {
					N          uint64             `json:"N"`
					Percentile map[string]float64 `json:"percentile"`
				} `json:"lat_ns"`
			} `json:"sync"`
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal(out, &doc), "%s", out)
	require.Len(t, doc.Jobs, 1)
	l := doc.Jobs[0].Sync.Lat
	m := measured{tool: "fio recipe", samples: l.N, p50: l.Percentile["50.000000"] / 1e9, p99: l.Percentile["99.000000"] / 1e9,
		runtime: time.Duration(doc.Jobs[0].Runtime) * time.Millisecond}
	m.verdict = check.Pass
	if m.p99 >= check.EtcdWAL.Threshold.Seconds() {
		m.verdict = check.Fail
	}
	d := after.Sub(before)
	m.flushesPerSync = float64(d.FlushOps) / float64(l.N)
	m.kibPerSync = float64(d.WriteBytes()) / 1024 / float64(l.N)
	return m
}

// runCheck runs `ioprobe check etcd` in the directory, the same way.
func runCheckEtcd(t *testing.T, s slowFlush, args ...string) measured {
	t.Helper()
	before := s.stat(t)
	// ioprobe()'s two minutes are less than the full form's runs at +9 ms.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"check", "etcd", "--target", s.mnt, "--output", "json"}, args...)...)
	o := runCmd(t, cmd)
	after := s.stat(t)
	require.Contains(t, []int{0, 2, 3}, o.code, o.stderr)
	r := checkDoc(t, o.stdout)
	require.Equal(t, result.StatusOK, r.Status, r.Message)
	require.Empty(t, entries(t, s.mnt)[1:], "only lost+found is left") // lost+found sorts first
	wal := r.Streams[0]
	m := measured{tool: "ioprobe", samples: wal.Samples, p50: wal.Latency.Percentiles["50"], p99: wal.Latency.Percentiles["99"],
		verdict: wal.Verdict.Verdict, borderline: wal.Verdict.Borderline}
	calls := wal.Samples
	if len(r.Streams) > 1 {
		calls += r.Streams[1].Fdatasyncs
	}
	d := after.Sub(before)
	m.flushesPerSync = float64(d.FlushOps) / float64(calls)
	m.kibPerSync = float64(d.WriteBytes()) / 1024 / float64(calls)
	return m
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// TestCheckEtcdAgreesWithRecipeOnSlowFlushes: on the slow-flush device,
// at several added flush delays, ioprobe's check (the WAL alone, which is
// what the recipe measures) and etcd's fio recipe, run in interleaved
// rounds, cost the kernel the same flushes and the same written bytes
// per fdatasync (within 5%): the same I/O, not a different one that
// happens to time alike.
//
// In make test it is short: two delays (0 and 5 ms), one round, the
// recipe at 1 MiB and ioprobe for 2 s, and it asserts what load cannot
// move — the kernel's counts, and that each tool's median fdatasync
// takes at least the added delay (every fdatasync here flushes). With
// IOPROBE_ETCD_SLOWFLUSH=full it is the comparison issue 23 asks for:
// delays 0, 3, 5 and 9 ms, three rounds, the recipe as published
// (--size=22m) and ioprobe for as long as the recipe ran at that delay
// (on a shared machine a longer window meets more of the others' bursts,
// which set a 99th percentile); then ioprobe's verdict
// must be the recipe's at every delay (unless either is within the
// borderline margin, which it reports) and its p50 and p99 within 25% of
// the recipe's medians. It prints its table either way.
func TestCheckEtcdAgreesWithRecipeOnSlowFlushes(t *testing.T) {
	full := os.Getenv("IOPROBE_ETCD_SLOWFLUSH") == "full"
	s := newSlowFlush(t)
	delays, rounds, size, dur := []int{0, 5}, 1, "1m", 2*time.Second
	if full {
		delays, rounds, size = []int{0, 3, 5, 9}, 3, "22m"
	}
	var all []measured
	recipeTook := map[int]time.Duration{} // by delay: the recipe's last runtime
	checkFor := func(delay int) string {
		if d, ok := recipeTook[delay]; ok && full {
			return max(d, time.Second).Round(time.Second).String()
		}
		return dur.String()
	}
	for round := 1; round <= rounds; round++ {
		for _, delay := range delays {
			s.setDelay(t, delay)
			run := []func() measured{
				func() measured { m := runRecipe(t, s, size); recipeTook[delay] = m.runtime; return m },
				func() measured { return runCheckEtcd(t, s, "--duration", checkFor(delay), "--backend=false") },
			}
			if round%2 == 0 { // interleaved: neither always goes first (the recipe's runtime is known from round 1)
				run[0], run[1] = run[1], run[0]
			}
			for _, f := range run {
				m := f()
				m.delay, m.round = delay, round
				all = append(all, m)
			}
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-10s %5s %5s %8s %9s %9s %-13s %12s %10s\n", "tool", "delay", "round", "samples", "p50 ms", "p99 ms", "verdict", "flushes/sync", "KiB/sync")
	for _, m := range all {
		v := m.verdict
		if m.borderline {
			v += "*"
		}
		fmt.Fprintf(&table, "%-10s %5d %5d %8d %9.3f %9.3f %-13s %12.3f %10.2f\n", m.tool, m.delay, m.round, m.samples, m.p50*1e3, m.p99*1e3, v, m.flushesPerSync, m.kibPerSync)
	}
	t.Log(table.String())

	margin := check.EtcdWAL.Margin.Seconds()
	limit := check.EtcdWAL.Threshold.Seconds()
	for _, delay := range delays {
		var fio, io []measured
		for _, m := range all {
			if m.delay == delay {
				if m.tool == "ioprobe" {
					io = append(io, m)
				} else {
					fio = append(fio, m)
				}
			}
		}
		med := func(ms []measured, f func(measured) float64) float64 {
			var xs []float64
			for _, m := range ms {
				xs = append(xs, f(m))
			}
			return median(xs)
		}
		p50 := func(m measured) float64 { return m.p50 }
		p99 := func(m measured) float64 { return m.p99 }
		flushes := func(m measured) float64 { return m.flushesPerSync }
		kib := func(m measured) float64 { return m.kibPerSync }
		// The same I/O: the kernel's own counts.
		require.InEpsilon(t, med(fio, flushes), med(io, flushes), 0.05, "flushes per fdatasync at +%d ms", delay)
		require.InEpsilon(t, med(fio, kib), med(io, kib), 0.05, "KiB written per fdatasync at +%d ms", delay)
		// Every fdatasync here flushes, and every flush sleeps.
		require.GreaterOrEqual(t, med(io, p50), float64(delay)/1e3, "ioprobe's median fdatasync at +%d ms", delay)
		require.GreaterOrEqual(t, med(fio, p50), float64(delay)/1e3, "the recipe's median fdatasync at +%d ms", delay)
		if !full {
			continue
		}
		fioP99, ioP99 := med(fio, p99), med(io, p99)
		fioVerdict := check.Pass
		if fioP99 >= limit {
			fioVerdict = check.Fail
		}
		ioVerdict := check.Pass
		if ioP99 >= limit {
			ioVerdict = check.Fail
		}
		near := abs(fioP99-limit) <= margin || abs(ioP99-limit) <= margin
		if near && ioVerdict != fioVerdict {
			t.Logf("+%d ms: the recipe's p99 %.3f ms and ioprobe's %.3f ms are within the %v margin of 10 ms: borderline, verdicts %s and %s",
				delay, fioP99*1e3, ioP99*1e3, check.EtcdWAL.Margin, fioVerdict, ioVerdict)
		} else {
			require.Equal(t, fioVerdict, ioVerdict, "verdicts at +%d ms (p99 %.3f ms and %.3f ms)", delay, fioP99*1e3, ioP99*1e3)
		}
		require.InEpsilon(t, med(fio, p50), med(io, p50), 0.25, "p50 at +%d ms", delay)
		require.InEpsilon(t, fioP99, ioP99, 0.25, "p99 at +%d ms", delay)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
