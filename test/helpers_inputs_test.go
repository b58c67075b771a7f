package test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// boundedAS is the address space the binary gets: ample for ioprobe,
// far from the machine's memory.
const boundedAS = 2 << 30

// bounded runs the binary in dir with args, within boundedAS of address
// space and 60 s.
func bounded(t *testing.T, dir string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "prlimit", append([]string{fmt.Sprintf("--as=%d", boundedAS), binary}, args...)...)
	cmd.Dir = dir
	o := runCmd(t, cmd)
	require.NoError(t, ctx.Err(), "ioprobe %s did not end within 60 s (blocked on its input?)\nstderr: %s", strings.Join(args, " "), o.stderr)
	return o
}

// fifo makes a FIFO nobody writes to.
func fifo(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(p, 0o600))
	return p
}

// shortRead is a one-second read run's result document.
func shortRead(t *testing.T, dir string) []byte {
	t.Helper()
	out := filepath.Join(dir, "a.json")
	o := ioprobe(t, dir, "run", "--target", filepath.Join(dir, "t.dat"), "--size", "4MiB", "--qd", "4", "--engine", "sync",
		"--ramp", "0s", "--duration", "1s", "--output", "json", "--out", out)
	require.Equal(t, 0, o.code, o.stderr)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	return data
}
