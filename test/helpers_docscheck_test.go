package test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The docs' blocks that are not a list of commands: a daemon started and
// asked, output shown, configuration fragments, PromQL, synopses.

// startServe starts an example's `ioprobe serve` line (adapted, on a free
// port of 127.0.0.1 whatever address it names) from the shell's
// directory.
func (e *docsEnv) startServe(t *testing.T, line string) *daemon {
	t.Helper()
	line = regexp.MustCompile(`--web\.listen-address\s+\S+`).ReplaceAllString(e.adapt.Replace(line), "")
	cmd := exec.Command("bash", "-c", "exec "+line+" --web.listen-address 127.0.0.1:0")
	cmd.Dir, cmd.Env = e.work, e.environ()
	return superviseDaemon(t, cmd)
}

// readmeServe: the directory made, the example config checked (exit 0),
// the daemon started with it, and its metrics scraped until the grep
// finds the live counter.
func readmeServe(t *testing.T, e *docsEnv, b docBlock) {
	cmds := commands(b.text)
	require.Len(t, cmds, 4, "%s: the test runs four commands: update readmeServe", b)
	require.True(t, strings.HasPrefix(cmds[2], "ioprobe serve --config "), cmds[2])
	require.True(t, strings.HasPrefix(cmds[3], "curl "), cmds[3])
	e.run(t, cmds[0])
	e.run(t, cmds[1])
	d := e.startServe(t, cmds[2])
	curl := strings.ReplaceAll(cmds[3], "localhost:9816", d.addr)
	// The grep finds the counter's samples once the canary has begun
	// (after the 1 GiB file is filled).
	sample := regexp.MustCompile(`(?m)^ioprobe_io_operations_total\{.*ioprobe_job="canary"`)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		o, err := tryCmd(e.shellCmd(e.work, curl))
		require.NoError(c, err)
		require.Equal(c, 0, o.code, "%s: %s\n%s", curl, o.stderr, d.log())
		assert.Regexp(c, sample, o.stdout, "%s\n%s", curl, d.log())
	}, time.Minute, 200*time.Millisecond)
	stopServe(t, d)
}

// stopServe stops a daemon as its user would, with Ctrl-C, and waits for
// it to exit 0: what it was doing (filling its target) ends cleanly.
func stopServe(t *testing.T, d *daemon) {
	t.Helper()
	require.NoError(t, d.cmd.Process.Signal(os.Interrupt))
	select {
	case <-d.exited:
	case <-time.After(time.Minute):
		t.Fatalf("ioprobe serve did not stop on SIGINT:\n%s", d.log())
	}
	err := d.cmd.Wait()
	require.NoError(t, err, d.log())
}

// configServe: the config as installed checks (exit 0); the daemon started
// with it reloads on SIGHUP, as the comment says.
func configServe(t *testing.T, e *docsEnv, b docBlock) {
	cmds := commands(b.text)
	require.Len(t, cmds, 2, "%s: update configServe", b)
	require.NoError(t, os.MkdirAll(filepath.Join(e.root, "var", "lib", "ioprobe"), 0o755)) // "create the directory first"
	e.run(t, cmds[0])
	d := e.startServe(t, cmds[1])
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Contains(d.log(), "reload") }, 30*time.Second, 100*time.Millisecond, d.log())
	resp, err := http.Get("http://" + d.addr + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	stopServe(t, d)
}

// configCheckOutput: --config.check of the example config on a machine
// without /var/lib/ioprobe prints the block's line, exit 2.
func configCheckOutput(t *testing.T, e *docsEnv, b docBlock) {
	root := t.TempDir()
	adapt := e.adaptFor(root)
	cfg, err := os.ReadFile(filepath.Join(e.repo, "configs", "ioprobe.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc", "ioprobe"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "ioprobe", "ioprobe.yaml"), []byte(adapt.Replace(string(cfg))), 0o644))
	o := e.shell(t, e.work, adapt.Replace("ioprobe serve --config.check /etc/ioprobe/ioprobe.yaml"))
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, adapt.Replace(b.text)+"\n", o.stderr)
}

// configFragment: a fragment of the config, beside a target data, passes
// --config.check.
func configFragment(t *testing.T, e *docsEnv, b docBlock) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("targets:\n  data: {path: "+filepath.Join(dir, "probe.dat")+", size: 64MiB}\n"+b.text+"\n"), 0o644))
	o := e.shell(t, e.work, "ioprobe serve --config.check "+cfg)
	require.Equal(t, 0, o.code, "%s\n%s", b.text, o.stderr)
}

// engineLines: the Engine line a run prints here is one of the block's
// (which one depends on the kernel and the device).
func engineLines(t *testing.T, e *docsEnv, b docBlock) {
	o := e.run(t, "ioprobe run --target /data/engine.dat --size 16MiB")
	var got string
	for _, l := range strings.Split(o.stdout, "\n") {
		if strings.HasPrefix(l, "Engine ") {
			got = l
		}
	}
	require.Contains(t, strings.Split(b.text, "\n"), got)
}

// fioRefusal: a job file whose line 8 is rw=trimwrite in section [b] is
// refused with the block's line, exit 2.
func fioRefusal(t *testing.T, e *docsEnv, b docBlock) {
	dir := t.TempDir()
	job := "[global]\ndirect=1\nbs=4k\nsize=16m\n[a]\nrw=randread\n[b]\nrw=trimwrite\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "job.fio"), []byte(job), 0o644))
	o := e.shell(t, dir, "ioprobe run --fio-job job.fio --dry-run")
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, "ioprobe: "+b.text+"\n", o.stderr)
}

// indexedJob runs the Job's pod command as two pods of an Indexed Job
// would (completion indexes 0 and 1), each with its node's disk as /data
// and the shared claim as /results, at an instant docsStartLead ahead (the
// Job's START_AT); then copies /results to fleet-results, as the next
// block says to, for its `report --merge`.
func indexedJob(t *testing.T, e *docsEnv, b docBlock) {
	cmds := commands(b.text)
	require.Len(t, cmds, 1)
	start := time.Now().Add(docsStartLead).UTC().Format(time.RFC3339)
	var pods []string
	for i := range 2 {
		node := filepath.Join(e.root, "nodes", fmt.Sprint(i))
		require.NoError(t, os.MkdirAll(filepath.Join(node, "data"), 0o755))
		pods = append(pods, strings.NewReplacer("$(START_AT)", start, "$(JOB_COMPLETION_INDEX)", fmt.Sprint(i),
			"/data/", node+"/data/", "/results/", e.root+"/results/").Replace(cmds[0]))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(e.root, "results"), 0o755))
	e.runAtOnce(t, pods...)
	o := e.shell(t, e.work, "mkdir -p fleet-results && cp "+e.root+"/results/*.json fleet-results/")
	require.Equal(t, 0, o.code, o.stderr)
}

// An Iometer file as the docs' oltp.icf: saved by Iometer with every
// section, its access specifications from line 34 (the 64 KiB sequential
// read's line is line 38), one worker on C: "SYSTEM". Its run time is a
// second and it has no ramp-up: the test's own times.
const oltpICF = `Version 2006.07.27
'TEST SETUP ====================================================================
'Test Description
	oltp
'Run Time
'	hours      minutes    seconds
	0          0          1
'Ramp Up Time (s)
	0
'Default Disk Workers to Spawn
	NUMBER_OF_CPUS
'Default Network Workers to Spawn
	0
'Record Results
	ALL
'Worker Cycling
'	start      step       step type
	1          1          LINEAR
'Disk Cycling
'	start      step       step type
	1          1          LINEAR
'Queue Depth Cycling
'	start      end        step       step type
	1          32         2          EXPONENTIAL
'Test Type
	NORMAL
'END test setup
'RESULTS DISPLAY ===============================================================
'Update Frequency,Update Type
	0,WHOLE_TEST
'Bar chart 1 statistic
	Total I/Os per Second
'END results display
'ACCESS SPECIFICATIONS =========================================================
'Access specification name,default assignment
	64K sequential read,NONE
'size,% of size,% reads,% random,delay,burst,align,reply
	65536,100,100,0,0,1,0,REPLY
'Access specification name,default assignment
	OLTP 8K,NONE
'size,% of size,% reads,% random,delay,burst,align,reply
	8192,100,67,100,0,1,0,0
'END access specifications
'MANAGER LIST ==================================================================
'Manager ID, manager name
	1,DB1
'Manager network address
	10.0.0.1
'Worker
	Worker 1
'Worker type
	DISK
'Default target settings for worker
'Number of outstanding IOs,test connection rate,transactions per connection
	8,DISABLED,1
'Disk maximum size,starting sector
	16384,0
'End default target settings for worker
'Assigned access specs
	64K sequential read
	OLTP 8K
'End assigned access specs
'Target assignments
'Target
	C: "SYSTEM"
'Target type
	DISK
'End target
'End target assignments
'End worker
'End manager
'END manager list
Version 2006.07.27
`

// withICF writes the Iometer files the examples name into the shell's
// directory: oltp.icf (oltpICF) and library.icf (access specifications
// only, as Iometer 2008.06.18 saves them: pkg/icf's testdata).
func withICF(f func(t *testing.T, e *docsEnv, b docBlock)) func(t *testing.T, e *docsEnv, b docBlock) {
	return func(t *testing.T, e *docsEnv, b docBlock) {
		require.NoError(t, os.WriteFile(filepath.Join(e.work, "oltp.icf"), []byte(strings.Replace(oltpICF, "REPLY", "0", 1)), 0o644))
		lib, err := os.ReadFile("../pkg/icf/testdata/v2008.06.18-specs-only.icf")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(e.work, "library.icf"), lib, 0o644))
		f(t, e, b)
	}
}

// icfRefusal: oltp.icf with a reply size on line 38 is refused with the
// block's line, exit 2, nothing created.
func icfRefusal(t *testing.T, e *docsEnv, b docBlock) {
	dir := t.TempDir()
	icf := strings.Replace(oltpICF, "REPLY", "1024", 1)
	require.Equal(t, "\t65536,100,100,0,0,1,0,1024", strings.Split(icf, "\n")[37], "line 38")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "oltp.icf"), []byte(icf), 0o644))
	o := e.shell(t, dir, e.adapt.Replace("ioprobe run --icf oltp.icf --target /dev/nvme1n1 --allow-destructive --dry-run"))
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, "ioprobe: "+b.text+"\n", o.stderr)
}

// icfTargetLine: the iometer examples' run says on stderr which device
// replaces the file's target: the block's line.
func icfTargetLine(t *testing.T, e *docsEnv, b docBlock) {
	withICF(func(t *testing.T, e *docsEnv, _ docBlock) {
		o := e.run(t, "ioprobe run --icf oltp.icf --target /dev/nvme1n1 --allow-destructive --dry-run")
		require.Contains(t, strings.Split(o.stderr, "\n"), e.adapt.Replace(b.text))
	})(t, e, b)
}

// suiteRefusal: characterize on a device without --allow-destructive is
// refused as the block says (its lines wrapped), exit 2.
func suiteRefusal(t *testing.T, e *docsEnv, b docBlock) {
	o := e.shell(t, e.work, e.adapt.Replace("ioprobe suite characterize --target /dev/sdb"))
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, strings.Join(strings.Fields(e.adapt.Replace(b.text)), " "), strings.Join(strings.Fields(o.stderr), " "))
}

// synopsis: every flag of a command's synopsis is one of its flags.
func synopsis(command string) func(t *testing.T, e *docsEnv, b docBlock) {
	return func(t *testing.T, e *docsEnv, b docBlock) {
		o := e.run(t, "ioprobe "+command+" --help")
		flags := regexp.MustCompile(`--[a-z][a-z-]*`).FindAllString(b.text, -1)
		require.NotEmpty(t, flags)
		for _, f := range flags {
			require.Regexp(t, `(?m)^\s+(-\w, )?`+regexp.QuoteMeta(f)+`\b`, o.stdout, "%s: %s", b, f)
		}
	}
}

// compareSynopsis: the synopsis's flags exist, and each --output it names
// compares the suites' before.json and after.json (BASE and OTHER).
func compareSynopsis(t *testing.T, e *docsEnv, b docBlock) {
	synopsis("compare")(t, e, b)
	m := regexp.MustCompile(`--output ([a-z|]+)`).FindStringSubmatch(b.text)
	require.NotNil(t, m)
	for _, f := range strings.Split(m[1], "|") {
		e.run(t, "ioprobe compare before.json after.json --output "+f)
	}
}

// compareLayout: compare's text has the block's header and its summary.
func compareLayout(t *testing.T, e *docsEnv, b docBlock) {
	o := e.run(t, "ioprobe compare before.json after.json")
	head := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(strings.Split(b.text, "\n")[0]), -1)
	var got []string
	for _, l := range strings.Split(o.stdout, "\n") {
		if strings.HasPrefix(l, "Point ") {
			got = regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1)
		}
	}
	require.Equal(t, head, got, o.stdout)
	require.Contains(t, b.text, "\nSummary\n")
	require.Contains(t, o.stdout, "\nSummary\n")
}

// suiteTableLayout: the text of the two-target characterize run
// (esx2.json) has the block's title and header, and rows by data size.
func suiteTableLayout(t *testing.T, e *docsEnv, b docBlock) {
	o := e.run(t, "ioprobe report esx2.json")
	want := strings.Split(e.adapt.Replace(b.text), "\n")
	require.Contains(t, o.stdout, "\n"+want[0]+"\n")
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	after := o.stdout[strings.Index(o.stdout, want[0]):]
	got := strings.Split(after, "\n")
	require.Equal(t, norm(want[1]), norm(got[1]), "the header")
	for i, l := range want[2:] {
		require.Equal(t, strings.Fields(l)[0], strings.Fields(got[2+i])[0], "row %d's data size", i)
	}
}

// spreadKeys: the spread object of a --repeat 3 result (the suites'
// after.json) has every key the block shows, runs 3.
func spreadKeys(t *testing.T, e *docsEnv, b docBlock) {
	data, err := os.ReadFile(filepath.Join(e.work, "after.json"))
	require.NoError(t, err)
	var doc struct {
		Results []struct {
			Spread map[string]json.RawMessage `json:"spread"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.NotEmpty(t, doc.Results)
	sp := doc.Results[0].Spread
	require.JSONEq(t, `"repeat"`, string(sp["source"]))
	require.JSONEq(t, `3`, string(sp["runs"]))
	keys := regexp.MustCompile(`"([a-z_0-9]+)":`).FindAllStringSubmatch(b.text, -1)
	require.NotEmpty(t, keys)
	var stat map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(sp["iops"], &stat))
	for _, k := range keys[1:] { // [0] is "spread"
		_, inSpread := sp[k[1]]
		_, inStat := stat[k[1]]
		require.True(t, inSpread || inStat, "%s: %q is neither a key of spread nor of its statistics", b, k[1])
	}
}

// promQL: every expression parses (promtool check rules, as recording
// rules) and names metrics the daemon exports (testdata/metrics.golden)
// or Prometheus' process collector.
func promQL(t *testing.T, e *docsEnv, b docBlock) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		promtool = filepath.Join(e.repo, ".tools", "prometheus3", "promtool")
	}
	require.FileExists(t, promtool, "promtool (make test-deps installs Debian's prometheus)")
	var exprs []string
	cur := ""
	for _, l := range strings.Split(b.text, "\n") {
		switch {
		case strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "  ") && cur != "":
			cur += " " + strings.TrimSpace(l)
		default:
			if cur != "" {
				exprs = append(exprs, cur)
			}
			cur = strings.TrimSpace(l)
		}
	}
	if cur != "" {
		exprs = append(exprs, cur)
	}
	require.NotEmpty(t, exprs)
	var rules strings.Builder
	rules.WriteString("groups:\n- name: docs\n  rules:\n")
	for i, x := range exprs {
		q, err := json.Marshal(x)
		require.NoError(t, err)
		fmt.Fprintf(&rules, "  - record: docs:example%d\n    expr: %s\n", i, q)
	}
	f := filepath.Join(t.TempDir(), "rules.yml")
	require.NoError(t, os.WriteFile(f, []byte(rules.String()), 0o644))
	out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput()
	require.NoError(t, err, "%s\n%s", out, rules.String())

	golden, err := os.ReadFile(filepath.Join("testdata", "metrics.golden"))
	require.NoError(t, err)
	labels := map[string]bool{}
	for _, set := range regexp.MustCompile(`\{([^}]*)\}`).FindAllStringSubmatch(string(golden), -1) {
		for _, l := range strings.Split(set[1], ",") {
			labels[l] = true
		}
	}
	for _, name := range regexp.MustCompile(`\b(ioprobe_[a-z0-9_]+|process_[a-z0-9_]+)`).FindAllString(b.text, -1) {
		if labels[name] || strings.HasPrefix(name, "process_") {
			continue // a label (ioprobe_job); the process collector's (internal/exporter registers it)
		}
		require.Regexp(t, `(?m)^`+regexp.QuoteMeta(name)+`(_bucket|_count|_sum)? `, string(golden), "%s: %s is not a metric the daemon exports", b, name)
	}
}
