package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shipped config on a machine without its directory (any machine
// outside the systemd unit): the daemon says once that the canary cannot
// start, backs off, shows the streak on /metrics, and starts the canary
// once the directory exists. (Before the back-off it wrote about 15,000
// "run could not start" lines a second.) Lines are counted, never timed.
func TestServeBacksOffAMissingDirectory(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "state")
	b, err := os.ReadFile("../configs/ioprobe.yaml")
	require.NoError(t, err)
	// Its directory moved under the test's, and a small file once it exists.
	doc := strings.NewReplacer("/var/lib/ioprobe/", missing+"/", "size: 1GiB", "size: 16MiB").Replace(string(b))
	require.NotEqual(t, string(b), doc)
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(doc), 0o644))

	line := 1 + strings.Count(doc[:strings.Index(doc, "path: "+missing)], "\n")
	o := ioprobe(t, dir, "serve", "--config.check", cfg)
	require.Equal(t, 2, o.code)
	require.Equal(t, "ioprobe: "+cfg+":"+strconv.Itoa(line)+": targets.data.path: jobs canary, oltp-hourly, seq-read and characterize, and module randread cannot start: target "+
		missing+"/probe.dat: cannot create it: directory "+missing+" does not exist\n", o.stderr)

	// oltp-hourly (every 1h) and characterize (every 24h) are aligned
	// to the clock: at the top of an hour they try (and fail on the
	// missing directory), or once it exists run for a minute (12 at
	// midnight) and pause the canary. The test starts its daemon after
	// the next top of the hour when that is near, so that none falls
	// inside it (its waits are bounded well under 55 minutes).
	if next := time.Now().Truncate(time.Hour).Add(time.Hour); time.Until(next) < beforeTheHour {
		t.Logf("waiting for %s to pass: the aligned jobs start then", next.Format(time.TimeOnly))
		time.Sleep(time.Until(next) + time.Second) //hygiene:sleep past the top of the hour, when the shipped config's aligned jobs start
	}
	started := time.Now()
	aligned := func() bool { return time.Now().Truncate(time.Hour).After(started) }
	d := startDaemon(t, "--config", cfg)
	metrics := "http://" + d.addr + "/metrics"
	gauge := func(t require.TestingT, exposition, series string) float64 {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(exposition)
		if m == nil {
			return -1
		}
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		return v
	}
	streak := `ioprobe_job_consecutive_failures{ioprobe_job="canary"}`
	// One scrape is one instant of the canary: the daemon counts a run
	// that could not start, lengthens its streak and plans its retry in
	// one step, ends the streak and the retry in one step, and reads the
	// three at once. So every scrape is checked, and only what comes
	// with time (the streak's length, the recovery) is awaited.
	var (
		mu   sync.Mutex // the waits' conditions run on their own goroutines
		torn []string
	)
	scrape := func(c require.TestingT) string {
		m := fetch(c, metrics)
		mu.Lock()
		defer mu.Unlock()
		failed := gauge(c, m, `ioprobe_job_runs_total{ioprobe_job="canary",status="failed"}`)
		n := gauge(c, m, streak)
		next := gauge(c, m, `ioprobe_job_next_attempt_timestamp_seconds{ioprobe_job="canary"}`)
		switch {
		case n > 0 && next == 0:
			torn = append(torn, "a failing canary with no retry planned:\n"+m)
		case failed < n:
			torn = append(torn, "fewer failed runs counted than the streak:\n"+m)
		case n == 0 && next != 0:
			torn = append(torn, "a recovered canary still waiting to try again:\n"+m)
		}
		return m
	}
	var last string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m := scrape(c)
		require.GreaterOrEqual(c, gauge(c, m, streak), 2.0)
		last = m
	}, 60*time.Second, 100*time.Millisecond, "two failed starts in a row")
	mu.Lock()
	require.Empty(t, torn, "scrapes that were no instant of the canary")
	mu.Unlock()
	require.GreaterOrEqual(t, gauge(t, last, `ioprobe_job_runs_total{ioprobe_job="canary",status="failed"}`), gauge(t, last, streak))
	require.Greater(t, gauge(t, last, `ioprobe_job_next_attempt_timestamp_seconds{ioprobe_job="canary"}`), 0.0)
	require.False(t, aligned(), "the test outlasted the hour it started in")
	require.Equal(t, 0.0, gauge(t, last, `ioprobe_job_consecutive_failures{ioprobe_job="oltp-hourly"}`), "a scheduled job has not tried yet")

	log := d.log()
	require.Len(t, lines(log, "cannot start until this is fixed"), 1, "%s", log)
	require.Len(t, canaryLines(log, "job cannot start"), 1, "%s", log)
	require.Less(t, len(lines(log, "")), 12, "a handful of lines, not one per attempt:\n%s", log)

	// The directory appears: the canary starts at its next attempt, and
	// says so once.
	require.NoError(t, os.Mkdir(missing, 0o755))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m := scrape(c)
		require.Equal(c, 0.0, gauge(c, m, streak))
		last = m
	}, 60*time.Second, 100*time.Millisecond, "the canary starts once its directory exists")
	mu.Lock()
	require.Empty(t, torn, "scrapes that were no instant of the canary")
	mu.Unlock()
	require.Equal(t, 0.0, gauge(t, last, `ioprobe_job_next_attempt_timestamp_seconds{ioprobe_job="canary"}`))
	require.Eventually(t, func() bool { return len(lines(d.log(), "job recovered")) == 1 }, testwait.Patience, 50*time.Millisecond)

	require.NoError(t, d.cmd.Process.Signal(syscall.SIGTERM))
	<-d.exited
	require.NoError(t, d.cmd.Wait())
	log = d.log()
	require.Len(t, canaryLines(log, "job cannot start"), 1, "%s", log)
	require.Len(t, lines(log, "job recovered"), 1, "%s", log)
	require.Len(t, lines(log, "job cannot start"), 1, "no other job tried:\n%s", log)
}

// beforeTheHour is how near the top of the hour TestServeBacksOffAMissingDirectory
// waits for it to pass before it starts: more than the test lasts on a
// loaded machine (a minute or two), far less than the hour.
const beforeTheHour = 5 * time.Minute

// canaryLines are the lines of the daemon's log s that contain sub and
// are the canary's.
func canaryLines(s, sub string) []string {
	var out []string
	for _, l := range lines(s, sub) {
		if strings.Contains(l, " job=canary ") {
			out = append(out, l)
		}
	}
	return out
}

// lines are the lines of s that contain sub.
func lines(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" && strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}
