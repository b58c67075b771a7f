package exporter

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/suiterun"
)

// TestPeakIOPSMeasuresEachSpecificationOnce: of peak-iops' 15 points on
// one target, two repeat an earlier point's specification under the same
// last-run series; the daemon runs 13.
func TestPeakIOPSMeasuresEachSpecificationOnce(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := loadConfig(t, dir, `
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  peak:
    target: data
    suite: peak-iops
    every: 1h
`, config.Options{})
	pts := cfg.Jobs["peak"].Points
	require.Len(t, pts, 15)
	var again []string
	for i, j := range suiterun.SameAs(jobUnits(cfg.Jobs["peak"])) {
		if j >= 0 {
			again = append(again, pts[i].Name)
		}
	}
	require.Equal(t, []string{"workers-8k-qd32-w1", "targets-8k-qd16-t1"}, again)
}
