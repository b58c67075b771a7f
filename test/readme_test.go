package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeDeviceExamplesRunAsWritten runs every example of README.md and
// docs/*.md — each fenced code block — as written, adapting only what
// names this machine:
//   - paths: /dev/nvme1n1 and /dev/sdb are one loop device, /dev/sdc
//     another (128 MiB each, empty); /data, /var/lib/…, /etc/…, /results
//     and /tmp/ioprobe-fleet.json are under a temporary root; the shell
//     runs in a temporary directory with the checkout's configs/ (its
//     paths rewritten the same way) and grafana/;
//   - hosts: node1, node2 and node3 are three daemons on 127.0.0.1
//     (dns+NAME resolves localhost); ssh and scp reach them as directories
//     of their own on this machine; serve listens on a free port;
//   - times: `ioprobe` is the binary under test behind docsWrapper, which
//     replaces the value of --duration, --ramp (and fleet's --start-delay,
//     check's --duration) where an example gives one and adds it where it
//     does not, so that the rest of the command line is the example's;
//     a common start minutes ahead (date -d '+2 minutes') is docsStartLead
//     ahead.
//
// Blocks that show output are checked against what the binary prints;
// configuration fragments with --config.check; PromQL with promtool and
// the exposition's metric names. An example that cannot run here is in
// docExamples with the reason. A block that is in neither fails the test:
// a new example is run, or listed with why not.
func TestReadmeDeviceExamplesRunAsWritten(t *testing.T) {
	// Beside the package's other waiting tests: every example's exit
	// code and printed words are checked, never a figure it measures
	// (check's verdict may be either way: this machine's disk decides).
	besideOthers(t)
	runDocExamples(t, "here")
}

// docExample is how the test treats one code block of the docs, found by
// its file and the start of its first line.
type docExample struct {
	file, first string
	run         func(t *testing.T, e *docsEnv, b docBlock)
	// why the block is not run (run is nil).
	why string
	// hosts: the block runs on the local daemons or as several hosts,
	// in a shell directory of its own, beside the others.
	hosts bool
	// apart names a group of blocks that run in order, beside the others,
	// on an environment of their own (devices, paths, shell directory,
	// daemons): the files one writes are there for the next.
	apart string
}

// group is the name of the subtest that runs the block: "hosts", its
// apart group, or "here".
func (x docExample) group() string {
	switch {
	case x.hosts:
		return "hosts"
	case x.apart != "":
		return x.apart
	}
	return "here"
}

// docExamples is every code block of README.md and docs/*.md, in their
// order.
var docExamples = []docExample{
	{file: "README.md", first: "make run", run: eachLine(map[string]string{
		"make test": "the whole test suite, this test among it"})},
	{file: "README.md", first: "ioprobe run --target /data/probe.dat", run: eachLine(nil)},
	{file: "README.md", first: "ioprobe suite characterize", run: withFixtures(eachLine(nil)), apart: "README suites"},
	{file: "README.md", first: "ioprobe fleet run", run: eachLine(nil), hosts: true},
	{file: "README.md", first: "sudo install -d", run: readmeServe},

	{file: "docs/access-specs.md", first: "ioprobe run --target /dev/nvme1n1", run: eachLine(nil)},

	{file: "docs/configuration.md", first: "ioprobe serve --config.check", run: configServe},
	{file: "docs/configuration.md", first: "ioprobe: /etc/ioprobe/ioprobe.yaml:18:", run: configCheckOutput},
	{file: "docs/configuration.md", first: "jobs:", run: configFragment},
	{file: "docs/configuration.md", first: "devices: [", run: configFragment},
	{file: "docs/configuration.md", first: "api:", run: configFragment},
	{file: "docs/configuration.md", first: "http:", run: allowedHostsFragment},
	{file: "docs/configuration.md", first: "$ curl -H 'Host: rebind.example:9816'", run: misdirected},

	{file: "docs/dashboards.md", first: "cp grafana/provisioning/dashboards/", run: eachLine(nil)},
	{file: "docs/dashboards.md", first: "dashboard-linter lint --strict", why: "Grafana's dashboard-linter and mixtool are not in the Go module proxy (built from their sources by hand); test/upstream/dashlint_test.go runs their rules"},
	{file: "docs/dashboards.md", first: "IOPROBE_MIXTOOL=/path/to/mixtool", why: "runs TestRealMixtool… and TestRealDashboardLinter… (test/reallinters_test.go), which need the hand-built binaries the variables name"},

	{file: "docs/engines.md", first: "Engine    uring", run: engineLines},

	{file: "docs/fio.md", first: "job.fio:8: [b] rw:", run: fioRefusal},

	{file: "docs/fleet.md", first: "ioprobe fleet run --hosts node1", run: eachLine(map[string]string{
		"ioprobe fleet suite scaling --hosts @hosts.txt": "--cycle hosts=1..32*2 needs 32 hosts; TestFleetScalingChartOverHosts runs a fleet suite with --cycle hosts on local daemons"}), hosts: true},
	{file: "docs/fleet.md", first: "ioprobe run --start-at=$(START_AT)", run: indexedJob, hosts: true},
	{file: "docs/fleet.md", first: "START=$(date -u -d '+3 minutes'", run: eachLine(map[string]string{
		"START=":  "Kubernetes: the Job's instant (the pods' command runs above with its own)",
		"sed ":    "Kubernetes: kubectl apply (the Job's pods' command runs above, on this machine)",
		"kubectl": "Kubernetes: kubectl wait"}), hosts: true},
	{file: "docs/fleet.md", first: "START=$(date -u -d '+2 minutes'", run: withFleetFiles(script), hosts: true},
	{file: "docs/fleet.md", first: "# ansible-playbook", why: "Ansible is not installed here; the playbook's command is the SSH loop's above, which runs"},

	{file: "docs/iometer.md", first: "ioprobe run --icf oltp.icf", run: withICF(eachLine(nil))},
	{file: "docs/iometer.md", first: "oltp.icf:38: [ACCESS SPECIFICATIONS]", run: icfRefusal},
	{file: "docs/iometer.md", first: "ioprobe: oltp.icf: target", run: icfTargetLine},

	{file: "docs/metrics.md", first: "# p99 latency of each target's canary", run: promQL},
	{file: "docs/metrics.md", first: "# IOPS per %CPU (esx2)", run: promQL},
	{file: "docs/metrics.md", first: "# disks whose scheduler is not none, by host", run: promQL},

	{file: "docs/configuration.md", first: "ioprobe: config file /etc/ioprobe/ioprobe.yaml is refused", why: "a refusal's words for /etc/ioprobe, not the test's to chmod: test/inputs_config_test.go checks the same words on a directory of its own"},
	{file: "docs/configuration.md", first: "ioprobe: --web.config.file /etc/ioprobe/web.yml: yaml:", why: "a refusal's words for a file under /etc/ioprobe: test/redteam_config_test.go checks the same words on a shadow-like file of its own"},
	{file: "docs/output.md", first: "ioprobe: --out a.json is an input of the report", why: "a refusal's words: test/redteam_out_test.go checks the same words for a run, a report, a comparison and a fio job file"},
	{file: "docs/output.md", first: "ioprobe: --out /dev/sdb is a block device", why: "refusals naming /dev/sdb, not the test's: test/inputs_out_test.go checks the same words on a loop device and a symlink to it"},
	{file: "docs/reliability.md", first: "ioprobe: job.fio:6: include /dev/zero", why: "refusals' words: test/inputs_bounds_test.go checks each on /dev/zero, a FIFO, an include tree and an over-size file of its own"},
	{file: "docs/suites.md", first: "Storage differs: the differences above", why: "compare's lines for storage that differs, not a command: TestStackCompareSaysTheSchedulerDiffers prints them for two real runs of a loop device whose scheduler was switched, and internal/report's TestWriteCompareTextSaysTheStorageDiffers these very lines"},
	{file: "docs/output.md", first: "summary.device{", why: "the device latency's field list, not a command (test/devlat_test.go reads the fields from real results)"},
	{file: "docs/output.md", first: "summary.host_others{", why: "the field list of what others did, not a command (test/neighbours_test.go reads the fields from real runs)"},
	{file: "docs/output.md", first: `schema: "ioprobe.fleet/v1"`, why: "the fleet document's field list, not a command (the fleet tests decode the documents strictly)"},

	{file: "docs/performance.md", first: "make bench-fio", why: "a benchmark of minutes on a loop device over /dev/shm, which needs the machine quiet (scripts/bench-fio.sh, make bench-fio: not part of make test)"},
	{file: "docs/performance.md", first: "BASE=main ROUNDS=7 DURATION=10s scripts/bench-devlat.sh", why: "the device-latency programs' cost: about 10 minutes on a loop device over /dev/shm, which needs the machine quiet (make bench-devlat: not part of make test)"},
	{file: "docs/performance.md", first: "BASE=6e21244 ROUNDS=5", why: "the commands behind the page's before-and-after figures: over 20 minutes on /dev/zram0 and a quiet machine (not part of make test)"},

	{file: "docs/suites.md", first: "ioprobe suite characterize --target /data/probe.dat", run: withFixtures(eachLine(nil)), apart: "docs suites"},
	{file: "docs/suites.md", first: "ioprobe suite NAME --target PATH", run: synopsis("suite"), apart: "docs suites"},
	{file: "docs/suites.md", first: "ioprobe: suite characterize, point random-write-4k", run: suiteRefusal, apart: "docs suites"},
	{file: "docs/suites.md", first: "ioprobe suite custom --profile oltp", run: eachLine(nil), apart: "docs suites"},
	{file: "docs/suites.md", first: `"spread": {`, run: spreadKeys, apart: "docs suites"},
	{file: "docs/suites.md", first: "Table 1. I/O operations per second", run: suiteTableLayout, apart: "docs suites"},
	{file: "docs/suites.md", first: "ioprobe report --merge node1.json", run: withFixtures(eachLine(nil)), apart: "docs suites"},
	{file: "docs/suites.md", first: "ioprobe compare BASE.json OTHER.json", run: compareSynopsis, apart: "docs suites"},
	{file: "docs/suites.md", first: "Point                 Size", run: compareLayout, apart: "docs suites"},
}

// exitCodes are the statuses an example may end with: 0, and for a check
// its verdict either way (0 pass, 3 fail: this machine's disk decides).
func exitCodes(cmd string) []int {
	if strings.HasPrefix(cmd, "ioprobe check ") {
		// 2 only as INCONCLUSIVE (run checks it): in the wrapper's
		// docsCheckTime the backend commits fewer times than a verdict
		// needs.
		return []int{0, 2, 3}
	}
	return []int{0}
}

// withFleetFiles makes each host's file of the SSH example before it
// runs. The example starts the hosts two minutes ahead; here docsStartLead
// ahead, which on a loaded machine is too soon for three hosts to create
// and fill 1 GiB each at once: their preparation ended after the instant,
// and each rightly measured nothing. The common start is what the example
// shows; made once, the files are there for every later run too.
func withFleetFiles(f func(t *testing.T, e *docsEnv, b docBlock)) func(t *testing.T, e *docsEnv, b docBlock) {
	return func(t *testing.T, e *docsEnv, b docBlock) {
		var cmds []string
		for _, h := range []string{"node1", "node2", "node3"} {
			cmds = append(cmds, e.adapt.Replace("ssh "+h+" ioprobe run --target /var/lib/ioprobe/fleet.dat --size 1GiB --duration 1s --ramp 0s"))
		}
		e.runAtOnce(t, cmds...)
		f(t, e, b)
	}
}

// eachLine runs a shell block's commands one by one in the shell's
// directory, each adapted, each to one of exitCodes; a command that
// starts with a key of skip is not run, for its reason (and a key that
// starts no command fails: the list is kept true).
func eachLine(skip map[string]string) func(t *testing.T, e *docsEnv, b docBlock) {
	return func(t *testing.T, e *docsEnv, b docBlock) {
		used := map[string]bool{}
		for _, c := range commands(b.text) {
			if k := skipped(skip, c); k != "" {
				used[k] = true
				t.Logf("not run: %s: %s", c, skip[k])
				continue
			}
			e.run(t, c)
		}
		for k := range skip {
			require.True(t, used[k], "%s: no command starts with %q: update docExamples", b, k)
		}
	}
}

func skipped(skip map[string]string, cmd string) string {
	for k := range skip {
		if strings.HasPrefix(cmd, k) {
			return k
		}
	}
	return ""
}

// run runs one command of an example, adapted, in the shell's directory.
func (e *docsEnv) run(t *testing.T, cmd string) outcome {
	t.Helper()
	o := e.shell(t, e.work, e.adapt.Replace(cmd))
	require.Contains(t, exitCodes(cmd), o.code, "%s\nstdout: %s\nstderr: %s", cmd, tail(o.stdout, 2000), o.stderr)
	if strings.HasPrefix(cmd, "ioprobe check ") && o.code == 2 {
		require.Contains(t, o.stderr, ": INCONCLUSIVE: ", "%s: exit 2 is a check's too few samples, not bad input", cmd)
	}
	return o
}

// script runs a block as one bash script (its commands share variables,
// loops and background jobs), adapted.
func script(t *testing.T, e *docsEnv, b docBlock) {
	o := e.shell(t, e.work, "set -e\n"+e.adapt.Replace(b.text))
	require.Equal(t, 0, o.code, "%s\nstdout: %s\nstderr: %s", b, tail(o.stdout, 2000), o.stderr)
}

// withFixtures makes the files the suite examples read before they run:
// before.json, an earlier run of the business suite (what compare
// compares after.json with), and node1.json … node3.json, one suite run
// on three targets at once (what report --merge merges).
func withFixtures(f func(t *testing.T, e *docsEnv, b docBlock)) func(t *testing.T, e *docsEnv, b docBlock) {
	return func(t *testing.T, e *docsEnv, b docBlock) {
		if _, err := os.Stat(filepath.Join(e.work, "node1.json")); err != nil {
			e.run(t, "ioprobe suite business --target /dev/sdb --allow-destructive --output json --out before.json")
			var nodes []string
			for _, n := range []string{"node1", "node2", "node3"} {
				dir := filepath.Join(e.root, "hosts", n, "data")
				require.NoError(t, os.MkdirAll(dir, 0o755))
				nodes = append(nodes, "ioprobe suite custom --cycle qd=1,2 --target "+filepath.Join(dir, "probe.dat")+" --size 16MiB --output json --out "+n+".json")
			}
			e.runAtOnce(t, nodes...)
		}
		f(t, e, b)
	}
}
