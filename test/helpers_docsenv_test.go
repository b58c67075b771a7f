package test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
)

// What TestReadmeDeviceExamplesRunAsWritten runs the docs' examples in:
// a shell whose `ioprobe` is the binary under test behind a wrapper that
// shortens its times, a stand-in for the machine's paths, loop devices
// for the devices, and local daemons for the hosts.

// docBlock is one fenced code block of README.md or docs/*.md.
type docBlock struct {
	file string // "README.md", "docs/fleet.md"
	line int    // of the opening fence
	lang string
	text string // the lines between the fences
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// first is the block's first non-blank line, trimmed: with the file, what
// the test knows the block by.
func (b docBlock) first() string {
	for _, l := range strings.Split(b.text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

var fenceRE = regexp.MustCompile("^\\s*(```+)\\s*([A-Za-z0-9_+-]*)\\s*$")

// docBlocks reads every fenced block of README.md and docs/*.md.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	files, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	files = append([]string{"../README.md"}, files...)
	var out []docBlock
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		name := strings.TrimPrefix(f, "../")
		var cur *docBlock
		fence := ""
		for i, l := range strings.Split(string(data), "\n") {
			m := fenceRE.FindStringSubmatch(l)
			switch {
			case cur == nil && m != nil:
				cur, fence = &docBlock{file: name, line: i + 1, lang: m[2]}, m[1]
			case cur != nil && m != nil && m[2] == "" && len(m[1]) >= len(fence):
				cur.text = strings.TrimSuffix(cur.text, "\n")
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				cur.text += l + "\n"
			}
		}
		require.Nil(t, cur, "%s: a code block is not closed", name)
	}
	return out
}

// commands are a shell block's commands, one a line, continuation lines
// joined; comment lines and blank lines are left out.
func commands(text string) []string {
	var out []string
	cur := ""
	for _, l := range strings.Split(text, "\n") {
		if cur == "" && (strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#")) {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		out = append(out, strings.TrimSpace(cur+l))
		cur = ""
	}
	return out
}

// Times the wrapper gives every run: the docs' examples are run to show
// that they work, not to measure — but long enough that every point
// completes I/Os on a loaded machine (a point that measured nothing is an
// error, and ends its suite: a 100 ms video-on-demand point on a loop
// device completed none at load 10).
const (
	docsDuration = "300ms"
	docsRamp     = "0s"
	// fleet: how far ahead the common start is picked (the local daemons
	// create and fill their targets before it: see localFleetArgs).
	docsStartDelay = "2s"
	// check etcd: thousands of WAL fdatasyncs on this machine's disk, a
	// verdict; the backend's 300 commits would take 30 s and more, so its
	// stream is INCONCLUSIVE (exit 2 unless the WAL fails: exitCodes).
	docsCheckTime = "2s"
	// docsStartLead replaces the minutes ahead that the examples of
	// --start-at pick their common instant: time to prepare (three hosts
	// create and fill a 1 GiB file each at once), which takes seconds
	// here, and took 10.3 s at load 13 beside the package's other waiting
	// tests.
	docsStartLead = 20 * time.Second
)

// docsWrapperEnv names the binary the wrapper runs: set, the test binary
// is the wrapper (TestMain hands over to docsWrapper).
const docsWrapperEnv = "IOPROBE_DOCS_REAL"

// docsWrapper is `ioprobe` in the docs' shell: the binary under test with
// its times shortened. A --duration, --ramp or --start-delay an example
// gives has its value replaced, one it leaves out is added (run, suite and
// fleet: docsDuration, docsRamp, docsStartDelay; check: docsCheckTime),
// so that nothing else of the command line changes. A fio job file and an
// Iometer file with a 'TEST SETUP set their own times (the flags are
// refused beside them): none is added; the files are the test's, with
// short times.
func docsWrapper(real string, args []string) {
	set := map[string]string{}
	sub := ""
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			sub = strings.TrimSpace(sub + " " + a)
			if sub != "fleet" {
				break
			}
		}
	}
	switch sub {
	case "run", "suite":
		set["--duration"], set["--ramp"] = docsDuration, docsRamp
	case "fleet run", "fleet suite":
		set["--duration"], set["--ramp"], set["--start-delay"] = docsDuration, docsRamp, docsStartDelay
	case "check":
		set["--duration"] = docsCheckTime
	}
	// A fio job file sets its times (the flags are refused beside it),
	// and so does an Iometer file with a 'TEST SETUP: given, they are
	// replaced; absent, not added.
	add := true
	if flagValue(args, "--fio-job") != "" {
		add = false
	}
	if icf := flagValue(args, "--icf"); icf != "" {
		if data, err := os.ReadFile(icf); err == nil && strings.Contains(strings.ToUpper(string(data)), "'TEST SETUP") {
			add = false
		}
	}
	out := append([]string(nil), args...)
	for flag, v := range set {
		found := !add
		for i := 0; i < len(out); i++ {
			switch {
			case out[i] == flag && i+1 < len(out):
				out[i+1], found = v, true
			case strings.HasPrefix(out[i], flag+"="):
				out[i], found = flag+"="+v, true
			}
		}
		if !found {
			out = append(out, flag, v)
		}
	}
	err := syscall.Exec(real, append([]string{real}, out...), os.Environ())
	fmt.Fprintln(os.Stderr, "docs wrapper:", err)
	os.Exit(127)
}

// flagValue is the value of flag in args ("" when absent).
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

// docsEnv is where the examples run.
type docsEnv struct {
	repo string // the checkout
	// root stands for the machine's /: /data, /var/lib/…, /etc/… are
	// under it.
	root string
	// work is the shell's directory: where a user who cloned the
	// repository types the examples (configs/ and grafana/ are there).
	work string
	bin  string   // the wrapper and the stand-ins for sudo, ssh, scp, make
	devs []string // the loop devices standing for /dev/nvme1n1 and /dev/sdb, /dev/sdc
	// fleet are the daemons standing for node1, node2 and node3.
	fleet []localFleetHost
	// adapt rewrites an example's paths and hosts to this machine's.
	adapt *strings.Replacer
}

func newDocsEnv(t *testing.T) *docsEnv {
	t.Helper()
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	e := &docsEnv{repo: repo, root: t.TempDir(), work: t.TempDir(), bin: t.TempDir()}
	// 128 MiB: the largest region an example asks of a device is 100MiB.
	e.devs = []string{testloop.Device(t, 128<<20), testloop.Device(t, 128<<20)}
	e.fleet = startLocalFleet(t, 3)
	e.adapt = e.adaptFor(e.root)
	// What exists on the machines the examples were written for: the
	// disk mounted at /data, etcd's data directory, Grafana's
	// provisioning directories, /tmp.
	for _, d := range []string{"data", "var/lib/etcd", "etc/grafana/provisioning/dashboards", "etc/grafana/provisioning/datasources", "var/lib/grafana", "tmp", "etc/ioprobe"} {
		require.NoError(t, os.MkdirAll(filepath.Join(e.root, d), 0o755))
	}
	// /etc/ioprobe/ioprobe.yaml is the example config as the systemd
	// unit's install step puts it there.
	cfg, err := os.ReadFile(filepath.Join(repo, "configs", "ioprobe.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "etc", "ioprobe", "ioprobe.yaml"), []byte(e.adapt.Replace(string(cfg))), 0o644))
	e.checkout(t, e.work)
	e.writeShims(t)
	return e
}

// checkout makes dir a checkout's directory as the examples expect it:
// the example config (its paths the machine's) and the dashboards.
func (e *docsEnv) checkout(t *testing.T, dir string) {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(e.repo, "configs", "ioprobe.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "configs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "configs", "ioprobe.yaml"), []byte(e.adapt.Replace(string(cfg))), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(e.repo, "grafana"), filepath.Join(dir, "grafana")))
}

// adaptFor rewrites an example's paths to root's, its devices to the
// loop devices, its hosts to the local daemons, and the minutes ahead of
// a common start to docsStartLead.
func (e *docsEnv) adaptFor(root string) *strings.Replacer {
	lead := fmt.Sprintf("'+%d seconds'", int(docsStartLead.Seconds()))
	return strings.NewReplacer(
		"/dev/nvme1n1", e.devs[0], "/dev/sdb", e.devs[0], "/dev/sdc", e.devs[1],
		"/data/", root+"/data/",
		"/var/lib/etcd", root+"/var/lib/etcd",
		"/var/lib/ioprobe", root+"/var/lib/ioprobe",
		"/var/lib/grafana/", root+"/var/lib/grafana/",
		"/etc/ioprobe/", root+"/etc/ioprobe/",
		"/etc/grafana/", root+"/etc/grafana/",
		"/results/", root+"/results/",
		"/tmp/ioprobe-fleet.json", root+"/tmp/ioprobe-fleet.json",
		"node1:9816,node2:9816,node3:9816", localFleetAddrs(e.fleet),
		"dns+ioprobe.monitoring.svc:9816", "dns+localhost:"+port(e.fleet[0].addr),
		"'+2 minutes'", lead, "'+3 minutes'", lead,
	)
}

func port(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }

// writeShims puts `ioprobe` (the wrapper: this test binary, which
// TestMain turns into docsWrapper) and stand-ins for what the examples
// call that this machine has not, or must not do, in e.bin:
//   - sudo runs its command (the tests run as root);
//   - ssh HOST CMD… runs CMD here with HOST's own /var/lib/ioprobe and
//     /tmp (a directory per host under root/hosts), and scp HOST:PATH DEST
//     copies from there: three hosts on one machine;
//   - make run runs the Makefile's `run` recipe with `ioprobe` for the
//     binary it would build.
func (e *docsEnv) writeShims(t *testing.T) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, os.Symlink(self, filepath.Join(e.bin, "ioprobe")))
	recipe := makeRecipe(t, filepath.Join(e.repo, "Makefile"), "run")
	shims := map[string]string{
		"sudo": `exec "$@"`,
		// Paths under root are the host's: root/hosts/HOST/….
		"ssh": fmt.Sprintf(`h=$1; shift
r=%[1]s/ hr=%[1]s/hosts/$h
mkdir -p "$hr/var/lib/ioprobe" "$hr/tmp"
args=()
for a in "$@"; do args+=("${a//"$r"/$hr/}"); done
exec "${args[@]}"`, e.root),
		"scp": fmt.Sprintf(`h=${1%%%%:*}; p=${1#*:}
r=%[1]s
exec cp "$r/hosts/$h${p#"$r"}" "$2"`, e.root),
		"make": fmt.Sprintf(`[ "$1" = run ] || { echo "make $1: not a target the docs test stands in for" >&2; exit 2; }
%s`, recipe),
	}
	for name, body := range shims {
		require.NoError(t, os.WriteFile(filepath.Join(e.bin, name), []byte("#!/bin/bash\n"+body+"\n"), 0o755))
	}
}

// makeRecipe is a Makefile target's recipe with ./$(BIN) written ioprobe.
func makeRecipe(t *testing.T, makefile, target string) string {
	t.Helper()
	f, err := os.Open(makefile)
	require.NoError(t, err)
	defer f.Close()
	var lines []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, target+":"):
			in = true
		case in && strings.HasPrefix(l, "\t"):
			lines = append(lines, strings.ReplaceAll(strings.TrimPrefix(l, "\t"), "./$(BIN)", "ioprobe"))
		case in:
			in = false
		}
	}
	require.NotEmpty(t, lines, "the Makefile has no recipe for %s", target)
	return strings.Join(lines, "\n")
}

// shell runs a command line of an example (adapted) with bash in dir.
func (e *docsEnv) shell(t *testing.T, dir, line string) outcome {
	t.Helper()
	return runCmd(t, e.shellCmd(dir, line))
}

// shellCmd is the command shell runs (for tryCmd where a test must not
// be failed).
func (e *docsEnv) shellCmd(dir, line string) *exec.Cmd {
	cmd := exec.Command("bash", "-c", "set -o pipefail\n"+line)
	cmd.Dir = dir
	cmd.Env = e.environ()
	return cmd
}

func (e *docsEnv) environ() []string {
	env := slices.DeleteFunc(os.Environ(), func(s string) bool { return strings.HasPrefix(s, "PATH=") || strings.HasPrefix(s, "USER=") })
	return append(env, "PATH="+e.bin+":"+os.Getenv("PATH"), "USER=root", docsWrapperEnv+"="+binary)
}

// runAtOnce runs commands at the same time (hosts running together), each
// to exit status 0.
func (e *docsEnv) runAtOnce(t *testing.T, cmds ...string) {
	t.Helper()
	type res struct {
		cmd string
		o   outcome
	}
	done := make(chan res, len(cmds))
	for _, c := range cmds {
		cmd := exec.Command("bash", "-c", c)
		cmd.Dir, cmd.Env = e.work, e.environ()
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Start())
		go func() {
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			done <- res{c, outcome{code: code, stdout: out.String(), stderr: errb.String()}}
		}()
	}
	for range cmds {
		r := <-done
		require.Equal(t, 0, r.o.code, "%s\nstderr: %s", r.cmd, r.o.stderr)
	}
}

// docGroups are the groups of examples, each run by a test of its own
// beside the package's other waiting tests: the examples on many hosts
// (the local daemons, ssh, the Indexed Job) mostly wait for a common start
// and use no device; the suites' (tens of points each, a minute and a half
// one after the other) run on environments of their own; the others
// ("here") one after another on the devices. The groups other than "here"
// are top-level tests in docs_examples_test.go, which sorts before the
// other parallel tests: they are the longest, and go test starts parallel
// tests in the order they are declared, so they start first.
var docGroups = []string{"here", "hosts", "README suites", "docs suites"}

// runDocExamples runs the examples of one group, in the docs' order, on an
// environment of its own; every test that calls it also checks that each
// code block of the docs is one entry of docExamples, in a group one of
// these tests runs.
func runDocExamples(t *testing.T, group string) {
	t.Helper()
	blocks := docBlocks(t)
	require.NotEmpty(t, blocks)
	seen := make([]int, len(docExamples))
	var mine []func(*testing.T, *docsEnv)
	for _, b := range blocks {
		i := slices.IndexFunc(docExamples, func(x docExample) bool {
			return x.file == b.file && strings.HasPrefix(b.first(), x.first)
		})
		if i < 0 {
			t.Errorf("%s: an example the test does not know (%q): run it, or list it with why not, in docExamples", b, b.first())
			continue
		}
		seen[i]++
		x := docExamples[i]
		if x.run == nil {
			if group == "here" {
				t.Logf("%s: not run: %s", b, x.why)
			}
			continue
		}
		if !slices.Contains(docGroups, x.group()) {
			t.Errorf("%s: group %q is run by no test (docGroups)", b, x.group())
		}
		if x.group() == group {
			mine = append(mine, func(t *testing.T, e *docsEnv) {
				t.Run(strings.ReplaceAll(b.String(), "/", "_"), func(t *testing.T) { x.run(t, e, b) })
			})
		}
	}
	for i, n := range seen {
		require.Equal(t, 1, n, "docExamples[%d] (%s: %q) matches %d blocks: each entry is one block", i, docExamples[i].file, docExamples[i].first, n)
	}
	if t.Failed() {
		return
	}
	require.NotEmpty(t, mine, "no example in group %q", group)
	e := newDocsEnv(t)
	for _, f := range mine {
		f(t, e)
	}
}
