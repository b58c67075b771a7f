package test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// Issue 33 item 5: fio's random_distribution, side by side with fio 3.33 on
// one loop device. Each tool reads 8,192 blocks of 4 KiB at random from a
// 16 MiB region (psync: one pread64 per I/O, traced with strace), and the
// offsets it read are compared:
//
//   - with the hot spot placed (a center: fio then puts rank 0 there, no
//     random start), where each rank lands is fio's hash of it, so the
//     shares of 64 equal bins of the region must agree: a two-sample
//     chi-square test at α = 0.001 (bins pooled to 10 I/Os at least);
//   - without one (fio starts the ranks at a random block, as ioprobe
//     does with its own draw), the rank-frequency curve: each tool's
//     blocks sorted by their counts, the share of the k busiest against
//     k, whose largest gap must stay within the two-sample
//     Kolmogorov-Smirnov bound at α = 0.001 (1.95 √(2/n)).
//
// Either test fails for uniform offsets (refused on main: exit 2), and the
// first for ranks not spread by fio's hash.
func TestFioSideRandomDistribution(t *testing.T) {
	besideOthers(t)
	testdeps.Need(t, testdeps.Tool("strace"))
	dev, dir := sideBySide(t, 16<<20)
	const ios = 8192
	reads := func(t *testing.T, dist, extra string) (fio, ours []int64) {
		job := writeJob(t, dir, "dist.fio", fmt.Sprintf("[j]\nfilename=DEV\nrw=randread\ndirect=1\nbs=4k\nsize=16m\nio_size=%d\nioengine=psync\nrandom_distribution=%s\n%s", ios*4096, dist, extra), dev)
		fio = tracedReads(t, dir, "fio", ios, dev, "fio", job)
		ours = tracedReads(t, dir, "ioprobe", ios, dev, binary, "run", "--fio-job", job, "--output", "json")
		return fio, ours
	}
	for _, dist := range []string{"zipf:1.2:0", "normal:10:0.25", "zoned:60/10:30/20:10/70"} {
		t.Run(dist, func(t *testing.T) {
			fio, ours := reads(t, dist, "")
			bins := func(offs []int64) []float64 {
				b := make([]float64, 64)
				for _, o := range offs {
					b[o/(16<<20/64)]++
				}
				return b
			}
			stat, df := chiSquareTwoSample(bins(fio), bins(ours), 10)
			t.Logf("%s: chi-square %.1f with %d degrees of freedom (bound %.1f)", dist, stat, df, chiSquareCritical(df))
			require.Less(t, stat, chiSquareCritical(df), "%s: offsets per bin differ from fio's (chi-square %.1f, %d degrees of freedom)", dist, stat, df)
		})
	}
	for _, dist := range []string{"zipf:1.2", "pareto:0.9"} {
		t.Run(dist, func(t *testing.T) {
			fio, ours := reads(t, dist, "")
			gap, at := rankFrequencyGap(fio, ours)
			t.Logf("%s: distinct blocks fio %d, ioprobe %d; largest gap %.4f at %d; the 1, 4, 10, 100 busiest: fio %.4f, ioprobe %.4f",
				dist, distinct(fio), distinct(ours), gap, at, topShares(fio), topShares(ours))
			bound := 1.95 * math.Sqrt(2.0/ios)
			require.Less(t, gap, bound, "%s: the share of the %d busiest blocks differs by %.4f", dist, at, gap)
		})
	}
	// random_generator=lfsr: every block once, without fio's map.
	t.Run("lfsr", func(t *testing.T) {
		job := writeJob(t, dir, "lfsr.fio", "[j]\nfilename=DEV\nrw=randread\ndirect=1\nbs=4k\nsize=16m\nioengine=psync\nrandom_generator=lfsr\n", dev)
		for _, offs := range [][]int64{
			tracedReads(t, dir, "fio", 4096, dev, "fio", job),
			tracedReads(t, dir, "ioprobe", 4096, dev, binary, "run", "--fio-job", job, "--output", "json"),
		} {
			seen := map[int64]bool{}
			for _, o := range offs {
				seen[o] = true
			}
			require.Len(t, seen, 4096, "each block once")
		}
	})
}

// tracedReads runs name ARGS under strace and returns the offsets of its
// last n 4 KiB reads of dev, in order (ioprobe's looks at the device come
// before its run).
func tracedReads(t *testing.T, dir, name string, n int, dev string, args ...string) []int64 {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), name+".strace") // its own: -ff writes a file per thread
	o := runCmd(t, exec.Command("strace", append([]string{"-ff", "-qq", "-ttt", "-e", "trace=openat,close,pread64,pwrite64,clone,clone3", "-o", prefix}, args...)...))
	require.Equal(t, 0, o.code, "%s: %s", name, o.stderr)
	offs := traceOffsets(t, prefix, dev, 4096, name == "ioprobe")
	require.GreaterOrEqual(t, len(offs), n, "%s: its reads of %s", name, dev)
	return offs[len(offs)-n:]
}

// chiSquareTwoSample is the chi-square statistic of two samples' counts
// over the same bins (homogeneity), adjacent bins pooled until each group
// holds at least min counts of both together; df its degrees of freedom.
func chiSquareTwoSample(a, b []float64, min float64) (stat float64, df int) {
	var na, nb float64
	for i := range a {
		na, nb = na+a[i], nb+b[i]
	}
	var groups [][2]float64
	var ga, gb float64
	for i := range a {
		ga, gb = ga+a[i], gb+b[i]
		if ga+gb >= min {
			groups = append(groups, [2]float64{ga, gb})
			ga, gb = 0, 0
		}
	}
	if ga+gb > 0 && len(groups) > 0 {
		groups[len(groups)-1][0] += ga
		groups[len(groups)-1][1] += gb
	}
	for _, g := range groups {
		t := g[0] + g[1]
		ea, eb := t*na/(na+nb), t*nb/(na+nb)
		stat += (g[0]-ea)*(g[0]-ea)/ea + (g[1]-eb)*(g[1]-eb)/eb
	}
	return stat, len(groups) - 1
}

// chiSquareCritical is the chi-square value with df degrees of freedom
// that chance exceeds with probability 0.001 (Wilson-Hilferty).
func chiSquareCritical(df int) float64 {
	k := float64(df)
	z := 3.0902 // the normal's 0.999 quantile
	return k * math.Pow(1-2/(9*k)+z*math.Sqrt(2/(9*k)), 3)
}

// rankFrequencyGap compares two samples' rank-frequency curves: each one's
// blocks sorted by count, the share of its k busiest blocks; it returns the
// largest gap between the curves and the k where it is.
func rankFrequencyGap(a, b []int64) (float64, int) {
	curve := func(offs []int64) []float64 {
		c := busiestFirst(offs)
		out := make([]float64, len(c))
		sum := 0
		for i, n := range c {
			sum += n
			out[i] = float64(sum) / float64(len(offs))
		}
		return out
	}
	ca, cb := curve(a), curve(b)
	gap, at := 0.0, 0
	for k := range max(len(ca), len(cb)) {
		fa, fb := 1.0, 1.0
		if k < len(ca) {
			fa = ca[k]
		}
		if k < len(cb) {
			fb = cb[k]
		}
		if d := math.Abs(fa - fb); d > gap {
			gap, at = d, k+1
		}
	}
	return gap, at
}

// traceOffsets reads strace -ff -ttt files prefix.TID and returns the
// offsets of the pread64 and pwrite64 calls of size bytes on path that did
// all their bytes, in time order. With shared (ioprobe: threads of one
// process) a descriptor names what any thread of the same process last
// opened as it — the clone calls traced say which threads are one process
// (CLONE_THREAD): ioprobe's helper process for calls that can block opens
// and closes descriptors of its own, with the same numbers; else (fio's
// jobs are processes, each its own table) what its own process opened as
// it, or what its parent did before it forked.
func traceOffsets(t *testing.T, prefix, path string, size int64, shared bool) []int64 {
	t.Helper()
	files, err := filepath.Glob(prefix + ".*")
	require.NoError(t, err)
	type ev struct {
		tid       string
		at        float64
		kind      string
		fd        int
		name      string
		off, want int64
		got       int64
	}
	var evs []ev
	open := regexp.MustCompile(`^([\d.]+) openat\([^"]*"([^"]*)".*\) = (\d+)`)
	closeRx := regexp.MustCompile(`^([\d.]+) close\((\d+)\)`)
	io := regexp.MustCompile(`^([\d.]+) p(?:read|write)64\((\d+), .*, (\d+), (\d+)\) = (-?\d+)`)
	cloned := regexp.MustCompile(`^[\d.]+ clone3?\((.*)\) = (\d+)$`)
	thread := map[string]string{} // a thread's tid (".TID") → the tid of the thread that made it
	for _, f := range files {
		tid := filepath.Ext(f)
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n") {
			if m := cloned.FindStringSubmatch(line); m != nil {
				if strings.Contains(m[1], "CLONE_THREAD") {
					thread["."+m[2]] = tid
				}
			} else if m := io.FindStringSubmatch(line); m != nil {
				at, _ := strconv.ParseFloat(m[1], 64)
				fd, _ := strconv.Atoi(m[2])
				want, _ := strconv.ParseInt(m[3], 10, 64)
				off, _ := strconv.ParseInt(m[4], 10, 64)
				got, _ := strconv.ParseInt(m[5], 10, 64)
				evs = append(evs, ev{tid: tid, at: at, kind: "io", fd: fd, off: off, want: want, got: got})
			} else if m := open.FindStringSubmatch(line); m != nil {
				at, _ := strconv.ParseFloat(m[1], 64)
				fd, _ := strconv.Atoi(m[3])
				evs = append(evs, ev{tid: tid, at: at, kind: "open", fd: fd, name: m[2]})
			} else if m := closeRx.FindStringSubmatch(line); m != nil {
				at, _ := strconv.ParseFloat(m[1], 64)
				fd, _ := strconv.Atoi(m[2])
				evs = append(evs, ev{tid: tid, at: at, kind: "close", fd: fd})
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	type key struct {
		tid string
		fd  int
	}
	// process is the tid of a thread's process's first thread.
	process := func(tid string) string {
		for i := 0; i < len(thread); i++ {
			up, ok := thread[tid]
			if !ok {
				break
			}
			tid = up
		}
		return tid
	}
	mine, anyone := map[key]string{}, map[key]string{}
	var out []int64
	for _, e := range evs {
		k, p := key{e.tid, e.fd}, key{process(e.tid), e.fd}
		switch e.kind {
		case "open":
			mine[k], anyone[p], anyone[key{fd: e.fd}] = e.name, e.name, e.name
		case "close":
			delete(mine, k)
			if shared {
				delete(anyone, p)
			}
		default:
			name, ok := mine[k]
			if shared {
				name = anyone[p]
			} else if !ok {
				name = anyone[key{fd: e.fd}]
			}
			if name == path && e.want == size && e.got == size {
				out = append(out, e.off)
			}
		}
	}
	return out
}

// distinct is how many different offsets offs holds.
func distinct(offs []int64) int { return len(busiestFirst(offs)) }

// busiestFirst is how often each offset of offs occurs, the most often
// first.
func busiestFirst(offs []int64) []int {
	counts := map[int64]int{}
	for _, o := range offs {
		counts[o]++
	}
	c := make([]int, 0, len(counts))
	for _, n := range counts {
		c = append(c, n)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(c)))
	return c
}

// topShares is the share of the 1, 4, 10 and 100 busiest blocks of offs.
func topShares(offs []int64) []float64 {
	c := busiestFirst(offs)
	var out []float64
	for _, k := range []int{1, 4, 10, 100} {
		sum := 0
		for _, n := range c[:min(k, len(c))] {
			sum += n
		}
		out = append(out, float64(sum)/float64(len(offs)))
	}
	return out
}
