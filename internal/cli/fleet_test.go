package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFleetBadInput: every refusal of the command line is one line, exit
// 2, before any host is contacted (the hosts named do not exist: a
// contact would be a different error).
func TestFleetBadInput(t *testing.T) {
	dir := t.TempDir()
	cc := filepath.Join(dir, "client.yaml")
	require.NoError(t, os.WriteFile(cc, []byte("basic_auth:\n  username: u\n  password: p\n  password_file: /x\n"), 0o600))
	base := []string{"--hosts", "192.0.2.1:9816,192.0.2.2:9816", "--target", "data"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fleet", "run", "--target", "data"}, "--hosts is required"},
		{[]string{"fleet", "run", "--hosts", "192.0.2.1:9816"}, "give one --target"},
		{[]string{"fleet", "run", "--hosts", "192.0.2.1:9816", "--target", "/data/p.dat"}, "not a path"},
		{[]string{"fleet", "run", "--hosts", "192.0.2.1:9816", "--target", "p.dat"}, "not a path"}, // no config can name a target so
		{[]string{"fleet", "run", "--hosts", "192.0.2.1:9816", "--target", "Data"}, "not a path"},
		{[]string{"fleet", "run", "--hosts", "node1", "--target", "data"}, `"node1" is not HOST:PORT`},
		{[]string{"fleet", "run", "--hosts", "node1:99999", "--target", "data"}, "the port must be a number"},
		{[]string{"fleet", "run", "--hosts", "a:1,a:1", "--target", "data"}, "a:1 is named twice"},
		{[]string{"fleet", "run", "--hosts", "@" + filepath.Join(dir, "missing"), "--target", "data"}, "no such file"},
		{append([]string{"fleet", "run", "--allow-destructive"}, base...), "--allow-destructive is not a fleet flag"},
		{append([]string{"fleet", "run", "--qd", "0"}, base...), "--qd"},
		{append([]string{"fleet", "run", "--max-skew", "0s"}, base...), "--max-skew"},
		{append([]string{"fleet", "run", "--output", "fio-json"}, base...), "--output"},
		{append([]string{"fleet", "run", "--client-config", cc}, base...), "--client-config"},
		{append([]string{"fleet", "suite", "characterize", "--cycle", "hosts=1,2,3"}, base...), "3 hosts, but --hosts names 2"},
		{append([]string{"fleet", "suite", "characterize", "--repeat", "2"}, base...), "--repeat is not a fleet flag"},
		{append([]string{"fleet", "suite", "nosuch"}, base...), "unknown suite"},
		{[]string{"fleet"}, "say run or suite"},
		{[]string{"fleet", "walk"}, `unknown command "walk"`},
		{[]string{"suite", "characterize", "--target", filepath.Join(dir, "x"), "--cycle", "hosts=1,2"}, "cycles the hosts of 'ioprobe fleet suite'"},
	} {
		var out, errb bytes.Buffer
		g := &globalOptions{stdout: &out, stderr: &errb, engines: newEngines()}
		code := execute(context.Background(), g, tc.args)
		require.Equal(t, ExitBadInput, code, "%v: %s", tc.args, errb.String())
		require.Contains(t, errb.String(), tc.want, tc.args)
		require.Equal(t, 1, strings.Count(errb.String(), "\n"), "one line: %q", errb.String())
		require.Empty(t, out.String())
	}
}

func TestRunLabel(t *testing.T) {
	at, err := parseStartAt("2026-12-01T10:00:00Z", mustTime(t, "2026-11-30T00:00:00Z"))
	require.NoError(t, err)
	require.Equal(t, "fleet-20261201T100000-8kib-random-67-read", runLabel(at, "8KiB random 67% read"))
	require.Equal(t, "fleet-20261201T100000-oltp", runLabel(at, "  OLTP  "))
}

func mustTime(t *testing.T, s string) (at time.Time) {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return at
}
