package test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// The storage description asks the kernel what backs a loop device
// (LOOP_GET_STATUS64 stats the backing file): with the backing file's
// filesystem not answering stats, a read run of that loop device (whose
// reads the filesystem still answers) describes what it can, says what
// it could not see, and runs, instead of waiting on the filesystem for
// ever before its first I/O (/work/notes/stall.md: a hung mount must not
// hang a run).
func TestStackOfAStalledLoopDeviceEndsWhereItStopsSeeing(t *testing.T) {
	s := newStallFS(t)
	s.hangOpsAndProve(t, "hang getattr")
	// 64 reads (capped under the hang detector), not a window, which
	// beside load may complete none.
	o, killed := runWithin(t, s, hangDetector, t.TempDir(), append([]string{"run", "--target", s.dev, "--read-pct", "100",
		"--output", "json"}, countedIOsWithin(64, "20s")...)...)
	require.False(t, killed, "the run did not end while %s does not answer stats: %s", s.mnt, o.stderr)
	require.Equal(t, 0, o.code, "%s", o.stderr)
	res := decodeResult(t, o.stdout)
	require.Positive(t, res.Summary.ReadOps, "it measured")
	require.Len(t, res.Targets, 1)
	tg := res.Targets[0]
	name := filepath.Base(s.dev)
	// What sysfs says without asking the filesystem is there: the loop
	// device, its queue and its backing file's name.
	require.NotEmpty(t, tg.Stack)
	require.Equal(t, result.LayerLoop, tg.Stack[0].Kind)
	require.Equal(t, name, tg.Stack[0].Name)
	require.Equal(t, s.img, tg.Stack[0].Backing)
	require.NotNil(t, tg.Stack[0].Queue)
	// What it could not see is said, naming the loop device, and not
	// guessed: nothing below the loop device.
	require.Len(t, tg.Stack, 1, "%+v", tg.Stack)
	require.Nil(t, tg.Disk)
	unseen := strings.Join(tg.StackUnseen, "\n")
	require.Contains(t, unseen, "what backs "+name)
	require.Contains(t, unseen, "did not answer within 5s")
	require.Empty(t, tg.StackChanged, "the second reading saw what the first did")
	require.NotEmpty(t, s.waits(), "the filesystem was still not answering stats")
}
