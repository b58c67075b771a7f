package test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// The fleet's end-to-end tests (issue 14's "Done when"): daemons in their
// own network namespaces (helpers_netns_test.go), driven by `ioprobe fleet`.

// requireExactMerge checks a merged result against its hosts' own: the
// op counts add up, the percentiles are those of the hosts' histograms
// merged (recomputed here from each host's histograms), and the hosts
// started together: every one was given the same instant, none began
// before it (one clock here), and every host's run overlapped every
// other's. How far apart they began is logged, not bounded: on a loaded
// machine a daemon may be scheduled late, which is lateness, not a wrong
// start (the result says when each began).
func requireExactMerge(t *testing.T, hosts []*result.Result, merged *result.Result) {
	t.Helper()
	var ops, reads uint64
	all, rd := result.NewHistogram(), result.NewHistogram()
	var first, last time.Time
	for i, r := range hosts {
		require.Positive(t, r.Summary.Ops, r.Host.Hostname)
		ops += r.Summary.Ops
		reads += r.Summary.ReadOps
		all.Merge(r.Histogram.Combined())
		if r.Histogram.Read != nil {
			rd.Merge(r.Histogram.Read)
		}
		if i == 0 || r.StartedAt.Before(first) {
			first = r.StartedAt
		}
		if i == 0 || r.StartedAt.After(last) {
			last = r.StartedAt
		}
	}
	require.Equal(t, ops, merged.Summary.Ops, "merged op count is the hosts' sum")
	require.Equal(t, reads, merged.Summary.ReadOps)
	require.Equal(t, all.Count(), merged.Summary.Ops, "every op is in a histogram")
	want := result.LatencyOf(all)
	require.Equal(t, want.Percentiles, merged.Summary.Latency.Percentiles, "merged percentiles are those of the merged histograms")
	require.Equal(t, want.MaxSeconds, merged.Summary.Latency.MaxSeconds)
	require.Equal(t, result.LatencyOf(rd).Percentiles, merged.Summary.ReadLatency.Percentiles)
	t.Logf("%d hosts, %d ops merged, p99 %gs; measured windows began within %s", len(hosts), ops, want.Percentiles["99"], last.Sub(first))
	for _, r := range hosts {
		require.False(t, r.StartAt.IsZero(), "%s: a fleet run has a common start", r.Host.Hostname)
		require.True(t, r.StartAt.Equal(hosts[0].StartAt), "%s: start_at %s, %s's %s", r.Host.Hostname, r.StartAt, hosts[0].Host.Hostname, hosts[0].StartAt)
		require.False(t, r.StartedAt.Before(r.StartAt), "%s began at %s, before the common start %s", r.Host.Hostname, r.StartedAt, r.StartAt)
		for _, o := range hosts {
			end := o.StartedAt.Add(time.Duration(o.Summary.ElapsedSeconds * float64(time.Second)))
			require.True(t, r.StartedAt.Before(end), "%s began at %s, after %s's run ended at %s", r.Host.Hostname, r.StartedAt, o.Host.Hostname, end)
		}
	}
}

// requireDeviceSawOps: the kernel's count for a host's loop device grew
// by at least the ops the host counted (ramp-up I/O comes on top).
func requireDeviceSawOps(t *testing.T, h *nsHost, before diskIOs, r *result.Result) {
	t.Helper()
	after := deviceIOs(t, h.Dev)
	t.Logf("%s: %d reads counted, the kernel saw %d on %s", h.Name, r.Summary.ReadOps, after.Reads-before.Reads, h.Dev)
	require.GreaterOrEqual(t, after.Reads-before.Reads, r.Summary.ReadOps, "%s: the kernel saw fewer reads on %s than counted", h.Name, h.Dev)
	require.GreaterOrEqual(t, after.Writes-before.Writes, r.Summary.WriteOps, "%s: the kernel saw fewer writes on %s than counted", h.Name, h.Dev)
}

// nsFleetArgs are a short fleet run's flags: 4 KiB random reads for 2 s
// after 300 ms of ramp-up, starting 2 s after the posts (preparing a loop
// device is opening it).
func nsFleetArgs(f *netFleet, hosts []*nsHost, extra ...string) []string {
	return append([]string{"fleet", "run", "--hosts", f.Addrs(hosts...), "--target", "data", "--bs", "4k", "--qd", "4",
		"--ramp", "300ms", "--duration", "2s", "--start-delay", "2s"}, extra...)
}

// TestNetnsFleetRun (issue 14, first "Done when"): `ioprobe fleet run` across
// three hosts. The merged op count is the sum of the hosts' and each
// host's loop device saw at least what it counted; the merged
// percentiles are those of the hosts' histograms merged; the windows
// began within 50 ms by the daemons' own timestamps; every host is named
// by its own hostname; the text report has a row per host and "All
// hosts".
func TestNetnsFleetRun(t *testing.T) {
	besideOthers(t)
	f := newNetFleet(t, 3, 64<<20)
	before := map[string]diskIOs{}
	for _, h := range f.Hosts {
		before[h.Name] = deviceIOs(t, h.Dev)
	}
	dir := t.TempDir()
	out := dir + "/fleet.json"
	o := ioprobe(t, dir, nsFleetArgs(f, nil, "--output", "json", "--out", out)...)
	require.Equal(t, 0, o.code, o.stderr)
	doc := readFleetDoc(t, out)
	require.False(t, doc.Partial)
	require.Empty(t, doc.FailedHosts)
	require.Equal(t, "data", doc.Target)
	require.Len(t, doc.Hosts, 3)
	var results []*result.Result
	for i, fh := range doc.Hosts {
		h := f.Hosts[i]
		require.Equal(t, h.Addr, fh.Address)
		require.Equal(t, result.RunDone, fh.State, "%s: %s", h.Name, fh.Error)
		require.Equal(t, h.Name, fh.Identity.Hostname, "the host as its daemon names itself")
		require.NotNil(t, fh.Result, h.Name)
		r := fh.Result
		require.Equal(t, h.Name, r.Host.Hostname)
		require.Equal(t, result.StatusOK, r.Status)
		require.True(t, r.StartAt.Equal(doc.StartAt), "%s: start_at %s, the fleet's %s", h.Name, r.StartAt, doc.StartAt)
		require.False(t, r.StartedAt.Before(doc.StartAt), "%s began before the common start", h.Name)
		require.Equal(t, h.Dev, r.Targets[0].Path, "the daemon measured its own device")
		requireDeviceSawOps(t, h, before[h.Name], r)
		results = append(results, r)
	}
	require.NotNil(t, doc.Merged)
	require.Equal(t, []string{"node1", "node2", "node3"}, doc.Merged.Merged.Hosts)
	requireExactMerge(t, results, doc.Merged)

	// The report of the fleet file: a row per host, then all of them.
	o = ioprobe(t, dir, "report", out)
	require.Equal(t, 0, o.code, o.stderr)
	for _, h := range f.Hosts {
		require.Regexp(t, `(?m)^`+h.Name+`\s+`+regexp.QuoteMeta(h.Addr)+`\s+done`, o.stdout)
	}
	require.Regexp(t, `(?m)^All hosts\s+3/3 done`, o.stdout)
}

// TestNetnsFleetHostDownBeforeStart: a host whose daemon is stopped before the
// run is found by the checks: exit 2 naming it, nothing started anywhere
// (no API run on the others, and not one I/O on any host's device).
func TestNetnsFleetHostDownBeforeStart(t *testing.T) {
	besideOthers(t)
	f := newNetFleet(t, 3, 64<<20)
	down := f.Hosts[1]
	require.NoError(t, down.cmd.Process.Signal(syscall.SIGTERM))
	<-down.exited
	_ = down.cmd.Wait()
	before := map[string]diskIOs{}
	for _, h := range f.Hosts {
		before[h.Name] = deviceIOs(t, h.Dev)
	}
	dir := t.TempDir()
	o := ioprobe(t, dir, nsFleetArgs(f, nil, "--output", "json")...)
	require.Equal(t, 2, o.code, o.stderr)
	require.Empty(t, o.stdout)
	require.Contains(t, o.stderr, down.Addr)
	t.Logf("fleet run, one host down:\n%s", o.stderr)
	for _, h := range f.Hosts {
		if h != down {
			require.NotContains(t, o.stderr, h.Addr+":", "only the host that is down is named")
			require.Empty(t, apiRunsOf(t, h.Addr), "%s ran something", h.Name)
			require.NotContains(t, fetch(t, "http://"+h.Addr+"/metrics"), `ioprobe_io_operations_total{ioprobe_job="api"`, "%s started an API run", h.Name)
		}
		require.Equal(t, before[h.Name], deviceIOs(t, h.Dev), "%s: I/O reached %s", h.Name, h.Dev)
	}
}

// TestNetnsFleetHostKilledMidRun: a daemon SIGKILLed while its run is under way
// (its own live counter of the API run is moving): the fleet waits
// --host-timeout for it, then gives the others' results merged, marked
// partial and naming the lost host; exit 1.
func TestNetnsFleetHostKilledMidRun(t *testing.T) {
	besideOthers(t)
	f := newNetFleet(t, 3, 64<<20)
	victim := f.Hosts[2]
	dir := t.TempDir()
	out := dir + "/fleet.json"
	fl := startBackground(t, nsFleetArgs(f, nil, "--duration", "4s", "--host-timeout", "2s", "--output", "json", "--out", out)...)
	waitMeasuring(t, victim.Addr)
	require.NoError(t, victim.cmd.Process.Kill())
	<-victim.exited

	require.Equal(t, 1, fl.exitCode(t), fl.errb.String())
	require.Contains(t, fl.errb.String(), victim.Addr)
	doc := readFleetDoc(t, out)
	require.True(t, doc.Partial)
	require.Equal(t, []string{victim.Addr}, doc.FailedHosts)
	var kept []*result.Result
	for i, fh := range doc.Hosts {
		h := f.Hosts[i]
		if h == victim {
			require.Equal(t, result.RunUnreachable, fh.State)
			require.Nil(t, fh.Result)
			continue
		}
		require.Equal(t, result.RunDone, fh.State, "%s: %s", h.Name, fh.Error)
		require.NotNil(t, fh.Result)
		require.Equal(t, result.StatusOK, fh.Result.Status)
		kept = append(kept, fh.Result)
	}
	require.Len(t, kept, 2)
	require.NotNil(t, doc.Merged)
	require.Equal(t, []string{"node1", "node2"}, doc.Merged.Merged.Hosts)
	require.Contains(t, doc.Merged.Message, victim.Addr)
	requireExactMerge(t, kept, doc.Merged)
}

// TestNetnsFleetSuiteScaling (issue 14's last "Done when"): `fleet
// suite scaling --cycle hosts=1,2,3` is esx35 Figure 5 over real hosts:
// each point ran on the first N hosts at once and is their exact merge;
// the text tables have a row per host count; the HTML draws the merged
// ("All hosts") aggregate throughput with hosts on the x-axis and the
// figures of the JSON at each of them. Workers are cycled to 1 alone, to
// keep it to 2 patterns × 3 host counts.
func TestNetnsFleetSuiteScaling(t *testing.T) {
	besideOthers(t)
	f := newNetFleet(t, 3, 64<<20)
	dir := t.TempDir()
	out := dir + "/scaling.json"
	o := ioprobe(t, dir, "fleet", "suite", "scaling", "--hosts", f.Addrs(), "--target", "data", "--cycle", "hosts=1,2,3",
		"--cycle", "workers=1", "--ramp", "100ms", "--duration", "500ms", "--start-delay", "1s", "--output", "json", "--out", out)
	require.Equal(t, 0, o.code, o.stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	doc := decodeSuite(t, b)
	require.NotNil(t, doc.Fleet)
	require.False(t, doc.Fleet.Partial)
	require.Len(t, doc.Results, 6)
	mbps := map[string]map[int]float64{} // pattern -> hosts -> merged MB/s
	for _, r := range doc.Results {
		require.NotNil(t, r.Point)
		n := r.Point.Hosts
		require.Len(t, r.Hosts, n, "point %s on %d hosts", r.Point.Name, n)
		var hosts []*result.Result
		for i, fh := range r.Hosts {
			require.Equal(t, f.Hosts[i].Addr, fh.Address, "the first %d hosts of --hosts", n)
			require.Equal(t, result.RunDone, fh.State)
			hosts = append(hosts, fh.Result)
		}
		requireExactMerge(t, hosts, r)
		if mbps[r.Point.Pattern] == nil {
			mbps[r.Point.Pattern] = map[int]float64{}
		}
		mbps[r.Point.Pattern][n] = r.Summary.MBPerSecond
	}
	require.Len(t, mbps, 2)
	for p, byHosts := range mbps {
		require.Len(t, byHosts, 3, p)
	}

	// Text: the tables have the host counts down the side.
	o = ioprobe(t, dir, "report", out)
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, o.stdout, "esx35 Figure 5")
	_, tput, ok := strings.Cut(o.stdout, "Table 2. Throughput (MB/s)\n")
	require.True(t, ok, o.stdout)
	rows := strings.Split(tput, "\n")
	require.Regexp(t, `^Hosts\s+64 KiB Sequential Read\s+8 KiB Random Read$`, rows[0])
	for n := 1; n <= 3; n++ {
		cells := strings.Fields(rows[n])
		require.Equal(t, []string{strconv.Itoa(n), mbText(mbps["Sequential Read"][n]), mbText(mbps["Random Read"][n])}, cells)
	}

	// HTML: the merged aggregate throughput against hosts at once.
	html := dir + "/scaling.html"
	o = ioprobe(t, dir, "report", out, "--output", "html", "--out", html)
	require.Equal(t, 0, o.code, o.stderr)
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	svg := regexp.MustCompile(`(?s)<svg[^>]*>\s*<title[^>]*>Figure \d+\. Aggregate throughput — All hosts</title>.*?</svg>`).Find(page)
	require.NotNil(t, svg, "no merged aggregate throughput figure")
	require.Contains(t, string(svg), `class="x-label"`)
	require.Regexp(t, `class="x-label"[^>]*>Hosts at once<`, string(svg))
	for n := 1; n <= 3; n++ {
		require.Regexp(t, `class="tick x"[^>]*><tspan>`+strconv.Itoa(n)+`</tspan>`, string(svg))
		for pattern, series := range map[string]string{"Sequential Read": "64 KiB Sequential Read", "Random Read": "8 KiB Random Read"} {
			require.Contains(t, string(svg), fmt.Sprintf("<title>%s, %d: %s MB/s</title>", series, n, mbText(mbps[pattern][n])))
		}
	}
}

// mbText is a MB/s figure as the reports print it: two decimals, thousands
// separated.
func mbText(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String() + "." + frac
}

// TestNetnsHarness: the harness itself. Each daemon answers on its own
// address from the root namespace, runs in its own network and UTS
// namespaces (not this process's), and reports its own hostname; once
// the test is over, nothing it created is left: no namespace, no link,
// no loop device, no process.
func TestNetnsHarness(t *testing.T) {
	needNetns(t)
	var names, backing []string
	var pids []int
	var subnet string
	t.Run("up", func(t *testing.T) {
		f := newNetFleet(t, 3, 16<<20)
		names = append(names, f.Bridge)
		self, err := os.Readlink("/proc/self/ns/net")
		require.NoError(t, err)
		selfUTS, err := os.Readlink("/proc/self/ns/uts")
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, h := range f.Hosts {
			names = append(names, h.NS, h.Veth)
			b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(h.Dev), "loop", "backing_file"))
			require.NoError(t, err)
			backing = append(backing, strings.TrimSpace(string(b)))
			pid := h.cmd.Process.Pid
			pids = append(pids, pid)
			netns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
			require.NoError(t, err)
			require.NotEqual(t, self, netns, "%s runs in the root network namespace", h.Name)
			require.False(t, seen[netns], "two daemons share %s", netns)
			seen[netns] = true
			uts, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/uts", pid))
			require.NoError(t, err)
			require.NotEqual(t, selfUTS, uts)
			comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			require.NoError(t, err)
			require.Equal(t, "ioprobe", strings.TrimSpace(string(comm)), "the pid the harness holds is the daemon's")
			require.Contains(t, sh(t, "ip", "netns", "list"), h.NS)

			resp, err := http.Get("http://" + h.Addr + "/api/v1/runs")
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, h.Name)
			host := strings.TrimSpace(sh(t, "nsenter", "-t", strconv.Itoa(pid), "-u", "hostname"))
			require.Equal(t, h.Name, host)
		}
		subnet = f.Subnet
	})
	require.Len(t, pids, 3)

	netns := sh(t, "ip", "netns", "list")
	links := sh(t, "ip", "-o", "link", "show")
	loops := sh(t, "losetup", "-a")
	for _, n := range names {
		require.NotContains(t, netns, n)
		require.NotContains(t, links, n)
	}
	// By its file: the device's number may be someone else's by now.
	for _, b := range backing {
		require.NotContains(t, loops, b, "%s is still attached", b)
		require.NoDirExists(t, filepath.Dir(b))
	}
	for _, pid := range pids {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		require.True(t, os.IsNotExist(err), "daemon %d still runs", pid)
	}
	require.NotContains(t, sh(t, "ip", "-o", "-4", "addr", "show"), " "+strings.TrimSuffix(subnet, "0/24"), "an address of the harness is left")
}
