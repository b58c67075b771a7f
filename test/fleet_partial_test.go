package test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestFleetLocalSuitePartialPointIsMarked: a fleet suite adds hosts one at
// a time (--cycle hosts=1,2,3); the third host is killed (by its pid)
// while the 3-host point measures. That point's total holds two hosts
// under the row "3": text, CSV and HTML mark it and say which hosts it
// holds.
func TestFleetLocalSuitePartialPointIsMarked(t *testing.T) {
	besideOthers(t)
	hosts := startLocalFleet(t, 3)
	victim := hosts[2] // measures only in the 3-host point
	dir := t.TempDir()
	out := filepath.Join(dir, "suite.json")
	b := startBackground(t, "fleet", "suite", "custom", "--hosts", localFleetAddrs(hosts), "--target", "data", "--size", "4MiB", "--qd", "4",
		"--ramp", "0s", "--duration", "2s", "--start-delay", "2s", "--engine", "sync", "--cycle", "hosts=1,2,3", "--host-timeout", "2s",
		"--output", "json", "--out", out)
	waitMeasuring(t, victim.addr)
	require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
	require.Equal(t, 1, b.exitCode(t), b.errb.String())

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var s result.Suite
	decodeStrict(t, data, &s)
	require.Len(t, s.Results, 3)
	partial := s.Results[2]
	require.Equal(t, 3, partial.Point.Hosts)
	held, failed := partial.FleetPartial()
	require.Equal(t, []string{hosts[0].addr, hosts[1].addr}, []string{held[0].Address, held[1].Address})
	require.Len(t, failed, 1)
	require.Equal(t, victim.addr, failed[0].Address)
	for _, r := range s.Results[:2] {
		_, f := r.FleetPartial()
		require.Empty(t, f, "the 1- and 2-host points are whole")
	}

	name := held[0].Identity.Hostname // one machine: one hostname, told apart by address
	note := "partial: holds 2 of 3 hosts (" + name + " at " + hosts[0].addr + ", " + name + " at " + hosts[1].addr + "); " +
		name + " at " + victim.addr + " " + string(failed[0].State)
	text := ioprobe(t, dir, "report", out)
	require.Equal(t, 0, text.code, text.stderr)
	require.Regexp(t, `(?m)^3 +[0-9,.]+†$`, text.stdout, "the 3-host row's cells are marked")
	require.NotRegexp(t, `(?m)^[12] +[0-9,.]+†$`, text.stdout)
	require.Contains(t, text.stdout, "† "+partial.Point.Name+" on ")
	require.Contains(t, text.stdout, note)
	require.Regexp(t, regexp.QuoteMeta(partial.Point.Name+" (3 hosts; "+note+")"), text.stdout)
	// The host's row says its state in a word; its error follows the table.
	require.NotEmpty(t, failed[0].Error)
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(name)+` +`+regexp.QuoteMeta(victim.addr)+` +`+string(failed[0].State)+` +- `, text.stdout)
	require.Contains(t, text.stdout, "\n"+name+" at "+victim.addr+" "+string(failed[0].State)+": "+failed[0].Error+"\n")
	for _, line := range strings.Split(text.stdout, "\n") {
		if strings.Contains(line, victim.addr) && strings.Contains(line, " - ") {
			require.NotContains(t, line, failed[0].Error, "the error is not in the State column")
		}
	}

	c := ioprobe(t, dir, "report", out, "--output", "csv")
	require.Equal(t, 0, c.code, c.stderr)
	rows, err := csv.NewReader(strings.NewReader(c.stdout)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4)
	at := func(row []string, col string) string { return row[slices.Index(rows[0], col)] }
	require.Equal(t, hosts[0].addr+";"+hosts[1].addr, at(rows[3], "fleet_hosts"))
	require.Equal(t, victim.addr, at(rows[3], "fleet_failed_hosts"))
	require.Empty(t, at(rows[2], "fleet_failed_hosts"))

	html := ioprobe(t, dir, "report", out, "--output", "html")
	require.Equal(t, 0, html.code, html.stderr)
	require.Contains(t, html.stdout, "<td>ok †</td>", "the table of every run marks it")
	require.Contains(t, html.stdout, `<p class="note">† `+partial.Point.Name+" on ", "and says below it which hosts it holds")
	require.Contains(t, html.stdout, "† "+partial.Point.Name+" on 3 hosts: "+note, "under the tables")
}
