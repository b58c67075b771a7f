package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The examples of docs/configuration.md's `http` section.

// allowedHostsFragment: the http fragment, beside a target and a module
// (a file with only an http section has nothing to do), passes
// --config.check.
func allowedHostsFragment(t *testing.T, e *docsEnv, b docBlock) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("targets:\n  data: {path: "+filepath.Join(dir, "probe.dat")+", size: 64MiB}\n"+
		"modules:\n  quick: {profile: random-read}\n"+b.text+"\n"), 0o644))
	o := e.shell(t, e.work, "ioprobe serve --config.check "+cfg)
	require.Equal(t, 0, o.code, "%s\n%s", b.text, o.stderr)
}

// misdirected: the block's curl, sent to a daemon here instead of
// 10.0.0.5, prints the block's refusal.
func misdirected(t *testing.T, e *docsEnv, b docBlock) {
	lines := strings.Split(b.text, "\n")
	require.Len(t, lines, 2, "%s: a command and its output", b)
	cmd, ok := strings.CutPrefix(lines[0], "$ ")
	require.True(t, ok, lines[0])
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("targets:\n  data: {path: "+filepath.Join(dir, "probe.dat")+"}\nmodules:\n  quick: {profile: random-read}\n"), 0o644))
	d := startDaemon(t, "--config", cfg)
	o := e.shell(t, e.work, strings.ReplaceAll(cmd, "10.0.0.5:9816", d.addr))
	require.Equal(t, 0, o.code, o.stderr)
	require.Equal(t, lines[1]+"\n", o.stdout)
}
