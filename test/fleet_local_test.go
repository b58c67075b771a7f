package test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testcert"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// The fleet's fast end-to-end tests: real `ioprobe serve` daemons on
// 127.0.0.1 (distinct ports, a target file each under the test's temp
// directory), driven by the real `ioprobe fleet`. The network-namespace
// tests (one address and loop device per daemon) are the e2e's own.

// TestFleetLocalRunMergesExactly: three daemons measure at once from one
// start instant; the merged result is exactly the hosts' together, and
// each host keeps its own result and identity. Then report reads the
// document: a row per host and an "All hosts" row, and figures per host
// and in total.
func TestFleetLocalRunMergesExactly(t *testing.T) {
	hosts := startLocalFleet(t, 3)
	dir := t.TempDir()
	out := filepath.Join(dir, "fleet.json")
	o := ioprobe(t, dir, localFleetArgs(localFleetAddrs(hosts), "--output", "json", "--out", out)...)
	require.Equal(t, 0, o.code, o.stderr)
	f := readFleetDoc(t, out)

	require.False(t, f.Partial)
	require.Empty(t, f.FailedHosts)
	require.Equal(t, "data", f.Target)
	require.Len(t, f.Hosts, 3)
	var ops, bytes uint64
	hist := result.NewHistogram()
	for i, h := range f.Hosts {
		require.Equal(t, hosts[i].addr, h.Address, "hosts in the order given")
		require.Equal(t, result.RunDone, h.State)
		require.NotEmpty(t, h.Identity.Hostname)
		require.NotEmpty(t, h.RunID)
		r := h.Result
		require.NotNil(t, r)
		require.Equal(t, result.StatusOK, r.Status)
		require.Positive(t, r.Summary.Ops)
		require.Equal(t, hosts[i].file, r.Targets[0].Path, "each daemon measured its own configured target")
		require.True(t, f.StartAt.Equal(r.StartAt), "every host was asked for the common start")
		require.False(t, r.StartedAt.Before(f.StartAt), "host %s started its ramp at %s, before the common start %s", h.Address, r.StartedAt, f.StartAt)
		require.LessOrEqual(t, h.ClockUncertaintySeconds, 0.05)
		ops += r.Summary.Ops
		bytes += r.Summary.Bytes
		hist.Merge(r.Histogram.Read)
	}
	m := f.Merged
	require.NotNil(t, m)
	require.Equal(t, ops, m.Summary.Ops, "merged op count is the sum of the hosts'")
	require.Equal(t, bytes, m.Summary.Bytes)
	require.Equal(t, 3, m.Merged.Runs)
	require.Equal(t, result.LatencyOf(hist), m.Summary.Latency, "merged percentiles are those of the hosts' histograms merged")
	require.True(t, f.StartAt.Equal(m.StartAt))

	// The three daemons are one machine, their files on one disk: each
	// host's kernel counts hold all three hosts' I/O, and the merge takes
	// them once, saying so.
	var devReads uint64
	for _, h := range f.Hosts {
		require.Equal(t, f.Hosts[0].Result.Host.BootID, h.Result.Host.BootID, "one machine")
		require.Equal(t, f.Hosts[0].Result.Summary.Device.Devices, h.Result.Summary.Device.Devices, "one disk")
		devReads = max(devReads, h.Result.Summary.Device.ReadOps)
	}
	require.Equal(t, devReads, m.Summary.Device.ReadOps, "the disk's reads once, not three times")
	require.Len(t, m.Summary.Device.Shared, 1)
	require.Equal(t, 3, m.Summary.Device.Shared[0].Runs)

	text := ioprobe(t, dir, "report", out)
	require.Equal(t, 0, text.code, text.stderr)
	require.Contains(t, text.stdout, ": shared by 3 runs at once, counted once")
	for _, h := range hosts {
		require.Contains(t, text.stdout, h.addr)
	}
	require.Regexp(t, `(?m)^All hosts\s+3/3 done`, text.stdout)

	html := ioprobe(t, dir, "report", out, "--output", "html")
	require.Equal(t, 0, html.code, html.stderr)
	require.Contains(t, html.stdout, "All hosts")
	for _, h := range hosts {
		require.Contains(t, html.stdout, h.addr, "a figure per host")
	}

	cmp := ioprobe(t, dir, "compare", out, out)
	require.Equal(t, 0, cmp.code, cmp.stderr)
	// The same document twice holds each host's run twice: merging it
	// would count them twice.
	twice := ioprobe(t, dir, "report", "--merge", out, out, "--output", "json")
	require.Equal(t, 2, twice.code, twice.stderr)
	require.Contains(t, twice.stderr, out+" is named twice")
}

// TestFleetLocalHostDownBeforeStart: one host of three does not answer. The
// pre-checks name it, exit 2, and nothing runs anywhere: the others'
// daemons ran nothing and did not even create their target files.
func TestFleetLocalHostDownBeforeStart(t *testing.T) {
	hosts := startLocalFleet(t, 2)
	down := freePort(t) // nothing listens there
	o := ioprobe(t, t.TempDir(), localFleetArgs(hosts[0].addr+","+down+","+hosts[1].addr)...)
	require.Equal(t, 2, o.code, o.stderr)
	require.Empty(t, o.stdout)
	require.Contains(t, o.stderr, "ioprobe: host "+down+": unreachable")
	require.Contains(t, o.stderr, "1 of 3 hosts failed the pre-checks (above): nothing was started anywhere")
	for _, h := range hosts {
		require.NotContains(t, o.stderr, "host "+h.addr)
		require.Empty(t, apiRunsOf(t, h.addr))
		require.NoFileExists(t, h.file, "no preparation either")
		require.NotContains(t, fetch(t, "http://"+h.addr+"/metrics"), `ioprobe_io_operations_total{ioprobe_job="api"`)
	}
}

// TestFleetLocalPreChecksNameEachHost: a daemon without the admin API and one
// without the target both fail the pre-checks, each on its own line.
func TestFleetLocalPreChecksNameEachHost(t *testing.T) {
	good := startLocalFleet(t, 1)[0]
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, "targets:\n  other:\n    path: %s\napi: {}\n", filepath.Join(dir, "o.dat")), 0o600))
	noTarget := startDaemon(t, "--config", cfg, "--web.enable-admin-api")
	noAdmin := startDaemon(t, "--config", cfg)
	o := ioprobe(t, dir, localFleetArgs(strings.Join([]string{good.addr, noTarget.addr, noAdmin.addr}, ","))...)
	require.Equal(t, 2, o.code, o.stderr)
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	require.Len(t, lines, 3, o.stderr)
	require.Contains(t, lines[0], "host "+noTarget.addr+`: target "data"`)
	require.Contains(t, lines[1], "host "+noAdmin.addr+": refused")
	require.Contains(t, lines[1], "--web.enable-admin-api")
	require.Contains(t, lines[2], "2 of 3 hosts failed the pre-checks")
	require.Empty(t, apiRunsOf(t, good.addr))

	// A bound no clock reading can meet: the host is named, nothing runs.
	o = ioprobe(t, dir, localFleetArgs(good.addr, "--max-skew", "1ns")...)
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "host "+good.addr+": its clock cannot be read within --max-skew 1ns")
	require.Empty(t, apiRunsOf(t, good.addr))
}

// liveAPIOps is a daemon's live count of its API runs' reads.
var liveAPIOps = regexp.MustCompile(`(?m)^ioprobe_io_operations_total\{ioprobe_job="api",op="read",target="data"\} [1-9]`)

// TestFleetLocalInterruptStopsEveryHost: SIGINT to the fleet stops the run on
// every host (DELETE); their partial results are collected and written;
// exit 130.
func TestFleetLocalInterruptStopsEveryHost(t *testing.T) {
	besideOthers(t)
	hosts := startLocalFleet(t, 2)
	out := filepath.Join(t.TempDir(), "fleet.json")
	b := startBackground(t, localFleetArgs(localFleetAddrs(hosts), "--duration", "50s", "--output", "json", "--out", out)...)
	for _, h := range hosts {
		waitMeasuring(t, h.addr)
	}
	require.NoError(t, b.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 130, b.exitCode(t), b.errb.String())
	f := readFleetDoc(t, out)
	require.True(t, f.Partial)
	require.Len(t, f.FailedHosts, 2)
	for _, h := range f.Hosts {
		require.Equal(t, result.RunStopped, h.State)
		require.NotNil(t, h.Result, "the partial result is kept")
		require.Equal(t, result.StatusInterrupted, h.Result.Status)
	}
	require.Equal(t, result.StatusInterrupted, f.Merged.Status)
	for _, h := range hosts {
		require.Len(t, apiRunsOf(t, h.addr), 1, "the run ended on the daemon")
	}
}

// TestFleetLocalHostKilledMidRun: a daemon killed (by its pid) while the run
// goes on leaves a partial result that names it; the others' results are
// kept and merged; exit 1.
func TestFleetLocalHostKilledMidRun(t *testing.T) {
	besideOthers(t)
	hosts := startLocalFleet(t, 3)
	dir := t.TempDir()
	out := filepath.Join(dir, "fleet.json")
	victim := hosts[1]
	b := startBackground(t, localFleetArgs(localFleetAddrs(hosts), "--duration", "4s", "--host-timeout", "2s", "--output", "json", "--out", out)...)
	waitMeasuring(t, victim.addr)
	require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
	code := b.exitCode(t)
	require.Equal(t, 1, code, b.errb.String())
	f := readFleetDoc(t, out)
	require.True(t, f.Partial)
	require.Equal(t, []string{victim.addr}, f.FailedHosts)
	require.Contains(t, b.errb.String(), victim.addr)
	require.NotContains(t, b.errb.String(), "\r", "no progress line when stderr is not a terminal")
	var ops uint64
	for i, h := range f.Hosts {
		if i == 1 {
			require.Equal(t, result.RunUnreachable, h.State)
			require.Nil(t, h.Result)
			continue
		}
		require.Equal(t, result.RunDone, h.State)
		ops += h.Result.Summary.Ops
	}
	require.Equal(t, ops, f.Merged.Summary.Ops)
	require.Equal(t, 2, f.Merged.Merged.Runs)
	require.Contains(t, f.Merged.Message, victim.addr)
}

// TestFleetLocalSuiteCyclesHosts: --cycle hosts=1,2 runs the point on the
// first host, then on both; each point carries its hosts' results and
// their exact merge; the tables and charts have hosts along their rows
// and x-axis (esx35 Figure 5 over real hosts).
func TestFleetLocalSuiteCyclesHosts(t *testing.T) {
	besideOthers(t)
	hosts := startLocalFleet(t, 2)
	dir := t.TempDir()
	out := filepath.Join(dir, "suite.json")
	o := ioprobe(t, dir, "fleet", "suite", "custom", "--hosts", localFleetAddrs(hosts), "--target", "data", "--size", "4MiB", "--qd", "4",
		"--ramp", "0s", "--duration", "1s", "--start-delay", "2s", "--engine", "sync", "--cycle", "hosts=1,2", "--output", "json", "--out", out)
	require.Equal(t, 0, o.code, o.stderr)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var s result.Suite
	decodeStrict(t, data, &s)
	require.Equal(t, result.SuiteSchema, s.Schema)
	require.Equal(t, &result.FleetSuite{Target: "data", Hosts: []string{hosts[0].addr, hosts[1].addr}, FailedHosts: []string{}}, s.Fleet)
	require.Len(t, s.Results, 2)
	for i, r := range s.Results {
		n := i + 1
		require.Equal(t, n, r.Point.Hosts)
		require.Len(t, r.Hosts, n, "the point on the first %d hosts", n)
		var ops uint64
		for j, h := range r.Hosts {
			require.Equal(t, hosts[j].addr, h.Address)
			require.Equal(t, result.RunDone, h.State)
			require.Equal(t, r.Point.Name, h.Result.Point.Name, "each host's result names its point")
			ops += h.Result.Summary.Ops
		}
		require.Equal(t, ops, r.Summary.Ops)
		require.Equal(t, n, r.Merged.Runs)
	}

	text := ioprobe(t, dir, "report", out)
	require.Equal(t, 0, text.code, text.stderr)
	require.Regexp(t, `(?m)^Hosts\s+Random Read\n1\s+[0-9,]+\n2\s+[0-9,]+$`, text.stdout)
	require.Regexp(t, `(?m)^\S+ \(2 hosts\)\n.*\n.*`+regexp.QuoteMeta(hosts[0].addr)+`.*\n.*`+regexp.QuoteMeta(hosts[1].addr)+`.*\nAll hosts\s+2/2 done`, text.stdout,
		"Iometer's view of each point: a row per host, then all hosts")
	html := ioprobe(t, dir, "report", out, "--output", "html")
	require.Equal(t, 0, html.code, html.stderr)
	require.Contains(t, html.stdout, "Aggregate I/O rate — All hosts")
	require.Contains(t, html.stdout, "Hosts at once")
}

// TestFleetLocalClientConfigTLSAndBasicAuth: a daemon behind TLS and basic
// auth (its --web.config.file) is reached with --client-config (the CA,
// the user and a password file: nothing secret on the command line);
// without it the pre-check names the host and nothing starts.
func TestFleetLocalClientConfigTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSignedCert(t, dir)
	web := filepath.Join(dir, "web.yml")
	// bcrypt of "s3cret"
	require.NoError(t, os.WriteFile(web, fmt.Appendf(nil, "tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  prom: $2a$04$K2IKb5c4F3B1hAXn.WO6Be6ZTNc7TJCZMA8MM46zPP8o92MIrHa4W\n", cert, key), 0o600))
	cfg := filepath.Join(dir, "ioprobe.yaml")
	file := filepath.Join(dir, "probe.dat")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, "targets:\n  data:\n    path: %s\n    size: 8MiB\napi: {}\n", file), 0o600))
	d := startDaemon(t, "--config", cfg, "--web.enable-admin-api", "--web.config.file", web)

	pw := filepath.Join(dir, "password")
	require.NoError(t, os.WriteFile(pw, []byte("s3cret\n"), 0o600))
	client := filepath.Join(dir, "client.yml")
	require.NoError(t, os.WriteFile(client, fmt.Appendf(nil, "tls_config:\n  ca_file: %s\nbasic_auth:\n  username: prom\n  password_file: %s\n", cert, pw), 0o600))

	o := ioprobe(t, dir, localFleetArgs(d.addr, "--client-config", client, "--dry-run")...)
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, o.stdout, d.addr+": clock offset")
	require.Contains(t, o.stdout, "every point accepted")

	o = ioprobe(t, dir, localFleetArgs("https://"+d.addr, "--dry-run")...)
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "host https://"+d.addr+": unreachable")
	noAuth := filepath.Join(dir, "noauth.yml")
	require.NoError(t, os.WriteFile(noAuth, fmt.Appendf(nil, "tls_config:\n  ca_file: %s\n", cert), 0o600))
	o = ioprobe(t, dir, localFleetArgs(d.addr, "--client-config", noAuth)...)
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "host "+d.addr+": ")
	require.Contains(t, o.stderr, "HTTP 401")
	require.NoFileExists(t, file)
}

// selfSignedCert writes a certificate for 127.0.0.1 (its own CA) and its
// key.
func selfSignedCert(t *testing.T, dir string) (cert, key string) {
	cert, key, _ = testcert.Write(t, dir)
	return cert, key
}

// TestFleetLocalPostRefusedStopsTheOthers: the pre-checks pass, but one host
// refuses the run itself (its device is held by another API run, 409).
// The runs the others had accepted are stopped before their start: exit
// 2 naming the host, and no I/O anywhere.
func TestFleetLocalPostRefusedStopsTheOthers(t *testing.T) {
	hosts := startLocalFleet(t, 3)
	busy := hosts[2]
	body := fmt.Sprintf(`{"target":"data","specs":[{"block_sizes":[{"bytes":4096,"weight":1}],"read_pct":100,"random_pct":100,"queue_depth":1,"workers":1,"engine":"sync"}],"ramp":"0s","duration":"1s","start_at":%q}`,
		time.Now().Add(5*time.Minute).UTC().Format(time.RFC3339))
	resp, err := http.Post("http://"+busy.addr+"/api/v1/runs", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)

	o := ioprobe(t, t.TempDir(), localFleetArgs(localFleetAddrs(hosts))...)
	require.Equal(t, 2, o.code, o.stderr)
	require.Empty(t, o.stdout)
	require.Contains(t, o.stderr, "ioprobe: fleet: host "+busy.addr+": ")
	require.Contains(t, o.stderr, "HTTP 409")
	require.Contains(t, o.stderr, "stopped before their start: nothing was measured")
	for _, h := range hosts {
		m := fetch(t, "http://"+h.addr+"/metrics")
		require.NotRegexp(t, liveAPIOps, m, "no I/O on %s", h.addr)
		if h != busy {
			// Its accepted run was stopped (DELETE answers once the run
			// has let its device go), not left waiting for the start.
			require.Contains(t, m, `ioprobe_run_active{ioprobe_job="api",target="data"} 0`, h.addr)
		}
	}
}

// TestFleetLocalSuiteHostKilledBetweenPoints: a daemon killed (by its pid)
// once the first point of a fleet suite is complete — the controller has
// announced the second — leaves the first point kept with both hosts, the
// document naming the host and the point where it failed, exit 1.
func TestFleetLocalSuiteHostKilledBetweenPoints(t *testing.T) {
	besideOthers(t)
	hosts := startLocalFleet(t, 2)
	dir := t.TempDir()
	out := filepath.Join(dir, "suite.json")
	victim := hosts[1]
	cmd := exec.Command(binary, "fleet", "suite", "custom", "--hosts", localFleetAddrs(hosts), "--target", "data", "--size", "4MiB",
		"--ramp", "0s", "--duration", "1s", "--start-delay", "2s", "--engine", "sync", "--cycle", "qd=1,2", "--host-timeout", "2s",
		"--output", "json", "--out", out)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var lines []string
	points := 0
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "ioprobe: fleet: point ") {
			if points++; points == 2 { // the first point is collected
				require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
			}
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, strings.Join(lines, "\n"))
	require.Equal(t, 1, ee.ExitCode(), strings.Join(lines, "\n"))
	require.Equal(t, 2, points, "two points announced, the victim killed at the second:\n%s", strings.Join(lines, "\n"))
	require.Contains(t, strings.Join(lines, "\n"), victim.addr)

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var s result.Suite
	decodeStrict(t, data, &s)
	require.True(t, s.Fleet.Partial)
	require.Equal(t, []string{victim.addr}, s.Fleet.FailedHosts)
	require.Len(t, s.Fleet.Failures, 1)
	fail := s.Fleet.Failures[0]
	require.Equal(t, victim.addr, fail.Address)
	require.Equal(t, result.RunUnreachable, fail.State)
	require.NotEmpty(t, fail.Error)

	// The first point is kept, measured on both hosts; the failure is at
	// the second (whether the victim died before or after accepting it).
	require.NotEmpty(t, s.Results)
	first := s.Results[0]
	require.Len(t, first.Hosts, 2)
	for _, h := range first.Hosts {
		require.Equal(t, result.RunDone, h.State)
	}
	require.NotEqual(t, first.Point.Name, fail.Point)
	for _, r := range s.Results[1:] {
		require.Equal(t, fail.Point, r.Point.Name, "only the point where the victim died follows, merged from the other host")
		require.Equal(t, 1, r.Merged.Runs)
	}

	text := ioprobe(t, dir, "report", out)
	require.Equal(t, 0, text.code, text.stderr)
	require.Regexp(t, `(?m)^Failed +`+regexp.QuoteMeta(victim.addr)+` unreachable at point `+regexp.QuoteMeta(fail.Point)+`: `, text.stdout)
	require.Regexp(t, `(?m)^Fleet +target "data" on 2 hosts: every point holds its hosts' runs merged into one result`, text.stdout)
	require.NotContains(t, text.stdout, "not merged")
	// Both daemons are this machine: one hostname, told apart by address.
	require.Regexp(t, `(?m)^Hosts +\S+ at `+regexp.QuoteMeta(hosts[0].addr)+`, \S+ at `+regexp.QuoteMeta(victim.addr)+`$`, text.stdout)
}

// openPTY opens a pseudo-terminal: its controller side (read by the test)
// and the terminal a child's stderr is given.
func openPTY(t *testing.T) (ctrl, term *os.File) {
	t.Helper()
	ctrl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err) //hygiene:skip the machine's devpts
	}
	t.Cleanup(func() { ctrl.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(ctrl.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetUint32(int(ctrl.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	return ctrl, term
}

// TestFleetLocalRunProgressOnATerminal: with stderr a terminal, fleet run
// shows run's kind of progress line: every host's state, each going
// forward through waiting/running to done, a countdown to the common
// start and then to the end; the line is cleared before the exit.
// (Without a terminal there is no such line: TestFleetLocalHostKilledMidRun.)
func TestFleetLocalRunProgressOnATerminal(t *testing.T) {
	hosts := startLocalFleet(t, 2)
	ctrl, term := openPTY(t)
	// A 3 s window: the controller polls each host at most every 2 s
	// (MaxPoll), so some poll falls inside it and sees the run going.
	cmd := exec.Command(binary, localFleetArgs(localFleetAddrs(hosts), "--duration", "3s", "--output", "json", "--out", filepath.Join(t.TempDir(), "f.json"))...)
	cmd.Stderr = term
	require.NoError(t, cmd.Start())
	term.Close() // the child holds it: the reads below end when it exits
	var buf bytes.Buffer
	_, _ = io.Copy(&buf, ctrl) // EIO once the last holder of the terminal is gone
	require.NoError(t, cmd.Wait(), buf.String())

	out := buf.String()
	require.Regexp(t, `fleet: [^\r]*done[^\r]*\r +\rioprobe: wrote `, out, "the line is cleared before the next message")
	var lines []string
	for _, l := range strings.Split(out, "\r") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "fleet: ") {
			lines = append(lines, l)
		}
	}
	require.NotEmpty(t, lines, "%q", out)
	order := map[string]int{"posting": 0, "accepted": 1, "preparing": 2, "waiting": 3, "running": 4, "done": 5}
	sawStartIn, sawLeft := -1, -1
	for _, h := range hosts {
		last, seen := -1, map[string]bool{}
		re := regexp.MustCompile(regexp.QuoteMeta(h.addr) + ` (\w+)`)
		for i, l := range lines {
			if strings.HasPrefix(l, "fleet: start in ") && sawStartIn < 0 {
				sawStartIn = i
			}
			if strings.Contains(l, " left: ") && sawLeft < 0 {
				sawLeft = i
			}
			m := re.FindStringSubmatch(l)
			require.NotNil(t, m, "every line names every host: %q", l)
			o, ok := order[m[1]]
			require.True(t, ok, "a state of a run that went well: %q", l)
			require.GreaterOrEqual(t, o, last, "states only go forward: %q", lines)
			last = o
			seen[m[1]] = true
		}
		require.True(t, seen["running"], "%s seen running: %q", h.addr, lines)
		require.Equal(t, order["done"], last, "%s ends done: %q", h.addr, lines)
	}
	require.GreaterOrEqual(t, sawStartIn, 0, "a countdown to the start: %q", lines)
	require.Greater(t, sawLeft, sawStartIn, "then to the end: %q", lines)
}
