package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every file ioprobe reads as input is a regular file read with a bound
// the error names (docs/reliability.md, "Bounds"). Each test runs the
// binary under an address-space limit, so that a binary that reads
// /dev/zero whole fails on its own instead of taking the shared
// machine's memory, and under a deadline, so that one that blocks on a
// FIFO fails instead of hanging.

// TestInputsIncludeIsBounded: a job file that includes /dev/zero, or a
// FIFO, is refused at once naming the include and what it is; nothing is
// created.
func TestInputsIncludeIsBounded(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "t.dat")
	for name, inc := range map[string]string{"zero": "/dev/zero", "fifo": fifo(t, dir)} {
		job := filepath.Join(dir, name+".fio")
		require.NoError(t, os.WriteFile(job, fmt.Appendf(nil, "[j]\nrw=randread\nbs=4k\ntime_based\nruntime=1\ninclude %s\n", inc), 0o600))
		o := bounded(t, dir, "run", "--fio-job", job, "--target", tgt)
		require.Equal(t, 2, o.code, o.stderr)
		what := map[string]string{"zero": "is a character device", "fifo": "is a FIFO"}[name]
		require.Equal(t, fmt.Sprintf("ioprobe: %s:6: include %s: job file %s %s, not a regular file: ioprobe reads a job file only from a regular file\n", job, inc, inc, what), o.stderr)
		require.NoFileExists(t, tgt)
	}
}

// TestInputsIncludeTreeBudget: 4 includes per level over 15 levels (a
// billion files once expanded, 16 of them on disk) end at once with a
// refusal that names the include budget.
func TestInputsIncludeTreeBudget(t *testing.T) {
	dir := t.TempDir()
	for level := 15; level >= 0; level-- {
		var body strings.Builder
		if level == 0 {
			body.WriteString("[j]\nrw=randread\ntime_based\nruntime=1\n")
		}
		if level == 15 {
			body.WriteString("bs=4k\n")
		} else {
			for range 4 {
				fmt.Fprintf(&body, "include level%d.fio\n", level+1)
			}
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("level%d.fio", level)), []byte(body.String()), 0o600))
	}
	o := bounded(t, dir, "run", "--fio-job", "level0.fio", "--target", filepath.Join(dir, "t.dat"), "--dry-run")
	require.Equal(t, 2, o.code, o.stderr)
	require.Regexp(t, `^ioprobe: level\d+\.fio:\d+: include level\d+\.fio: the job file's include tree holds more than 1024 includes: ioprobe follows at most that many\n$`, o.stderr)
}

// TestInputsReadersRefuseDevicesAndFIFOs: report, compare, report
// --merge, run --icf and fleet's --hosts @FILE of /dev/zero and of a
// FIFO: one line naming the file and what it is, exit 2, at once.
func TestInputsReadersRefuseDevicesAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	ff := fifo(t, dir)
	tgt := filepath.Join(dir, "t.dat")
	for _, in := range []struct{ path, is string }{{"/dev/zero", "a character device"}, {ff, "a FIFO"}} {
		for _, c := range []struct {
			args []string
			what string
		}{
			{[]string{"report", in.path}, "result file"},
			{[]string{"report", "--merge", in.path, in.path}, "result file"},
			{[]string{"compare", in.path, in.path}, "result file"},
			{[]string{"run", "--icf", in.path, "--target", tgt}, "Iometer configuration file"},
			{[]string{"fleet", "run", "--hosts", "@" + in.path, "--target", "data"}, "host list"},
			{[]string{"serve", "--config.check", in.path}, "config file"},
		} {
			o := bounded(t, dir, c.args...)
			require.Equal(t, 2, o.code, "%v: %s", c.args, o.stderr)
			require.Contains(t, o.stderr, fmt.Sprintf("%s %s is %s, not a regular file: ioprobe reads a %s only from a regular file\n", c.what, in.path, in.is, c.what), c.args)
			require.Equal(t, 1, strings.Count(o.stderr, "\n"), "one line: %s", o.stderr)
			require.Empty(t, o.stdout)
		}
	}
	require.NoFileExists(t, tgt)
}

// TestInputsTooLargeIsNamed: a result file over the bound (a sparse file
// of 600 MiB) is refused naming the bound, before any of it is read.
func TestInputsTooLargeIsNamed(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(600<<20))
	require.NoError(t, f.Close())
	o := bounded(t, dir, "report", big)
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, "ioprobe: result file "+big+" is larger than 512 MiB: ioprobe reads at most 512 MiB of a result file\n", o.stderr)
}
