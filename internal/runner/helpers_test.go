package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func spec(t *testing.T, bs string, read, random, qd int, d time.Duration) workload.Spec {
	t.Helper()
	b, err := workload.ParseBlockSizes(bs)
	require.NoError(t, err)
	s := workload.Spec{BlockSizes: b, ReadPct: read, RandomPct: random, QueueDepth: qd, Workers: 1, Duration: d, RegionBytes: 32 << 20}.WithDefaults()
	require.NoError(t, s.Validate())
	return s
}

func plan(groups ...Group) Plan {
	return Plan{Groups: groups, Engines: engine.NewRegistry(syncio.New()), Version: "test", Interval: 250 * time.Millisecond}
}

// kernelReads is the reads-completed field of /sys/block/DEV/stat.
func kernelReads(t *testing.T, dev string) uint64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "stat"))
	require.NoError(t, err)
	f := strings.Fields(string(b))
	require.NotEmpty(t, f)
	n, err := strconv.ParseUint(f[0], 10, 64)
	require.NoError(t, err)
	return n
}
