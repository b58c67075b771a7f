package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseWindow(t *testing.T) {
	skip, length, err := parseWindow("2:7.5")
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, skip)
	require.Equal(t, 7500*time.Millisecond, length)
	for _, bad := range []string{"", "2", "2:", ":7", "0:7", "2:-1", "a:b", "2:7:1", "2:4000"} {
		_, _, err := parseWindow(bad)
		require.Error(t, err, bad)
	}
}

// A process tree's CPU counts its children's threads: the tree of this
// test, with a busy child, holds at least what the child ran.
func TestTreeCPUCountsChildren(t *testing.T) {
	child := exec.Command("sh", "-c", "while :; do :; done")
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	time.Sleep(200 * time.Millisecond) //hygiene:sleep let the child run; the assertion holds for any amount it ran
	// The child's own figure first: the tree's, read after, holds at
	// least as much of it.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(child.Process.Pid) + "/schedstat")
	require.NoError(t, err)
	own, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
	require.NoError(t, err)
	tree, err := treeCPU(os.Getpid())
	require.NoError(t, err)
	require.Positive(t, own)
	require.GreaterOrEqual(t, tree, own, "the tree holds the child's run time")
}
