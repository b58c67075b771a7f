package runner

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// silentEngine is storage that does not answer within the run: its
// workers set up, pass the start barrier and complete nothing until the
// run stops them. (The daemon saw it for real: a suite's point on a target
// another run held published status ok with iops 0.)
type silentEngine struct{}

func (silentEngine) Name() workload.EngineName { return workload.EngineSync }
func (silentEngine) Available() error          { return nil }
func (silentEngine) Run(w *engine.Worker) error {
	for t := range w.Targets {
		w.NewLane(t)
	}
	sl := w.Ctl.NewSleeper()
	defer sl.Close()
	w.WaitStart()
	sl.Until(engine.Nanotime() + int64(time.Hour)) // until the run stops it
	return nil
}

// A run in which no I/O completed says so in its message and notes: its
// figures are the storage's silence, not a measurement of its speed.
func TestRunWithoutIOSaysSo(t *testing.T) {
	p := plan(Group{Spec: spec(t, "4k", 100, 100, 2, 300*time.Millisecond), Targets: []string{filepath.Join(t.TempDir(), "t.dat")}})
	p.Engines = engine.NewRegistry(silentEngine{})
	res, err := Run(context.Background(), p)
	require.NoError(t, err)
	require.Zero(t, res.Summary.Ops)
	require.Equal(t, result.StatusOK, res.Status, "a window without I/O is what the storage did, not a failed run")
	require.Equal(t, noIOMessage, res.Message)
	require.Contains(t, res.Notes, noIOMessage)
}
