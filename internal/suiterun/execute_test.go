package suiterun

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func shortRead(name string, qd int) workload.Spec {
	s := workload.Spec{Name: name, BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}}, ReadPct: 100, RandomPct: 100,
		QueueDepth: qd, Workers: 1, Duration: 30 * time.Millisecond, Engine: "sync", RegionBytes: 1 << 20}.WithDefaults()
	s.Ramp = 0
	return s
}

func unitOn(path string, i int, name string, qd int) Unit {
	return Unit{Index: i, Point: workload.SuitePoint{Name: name, Specs: []workload.Spec{shortRead(name, qd)}}, Targets: []string{path}, Side: path}
}

// realRun measures each unit on this host with the runner, and records
// which runs were asked for, in order.
func realRun(calls *[]string) RunFunc {
	set := Settings{Interval: 10 * time.Millisecond, Engines: engine.NewRegistry(syncio.New())}
	return func(ctx context.Context, u Unit, run int) (*result.Result, error) {
		*calls = append(*calls, fmt.Sprintf("%s/%d", u.Point.Name, run))
		return runner.Run(ctx, set.Plan(u))
	}
}

// TestExecuteRepeatsMeasuresOnceAndAnnotates runs three units on a real
// file, twice each: the second repeats the first's specification and is
// reported from it, the others are measured and their repeats merged.
func TestExecuteRepeatsMeasuresOnceAndAnnotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.dat")
	units := []Unit{unitOn(path, 0, "a", 1), unitOn(path, 1, "b", 1), unitOn(path, 2, "c", 2)}
	var calls, kept, reused []string
	var results []*result.Result
	ex := Executor{Run: realRun(&calls), Repeat: 2, Suite: "custom",
		Kept: func(u Unit, res *result.Result) {
			kept = append(kept, u.Point.Name)
			results = append(results, res)
		},
		Reused: func(u, from Unit, res *result.Result) {
			require.NotNil(t, res)
			reused = append(reused, u.Point.Name+"<"+from.Point.Name)
		},
	}
	require.NoError(t, ex.Execute(context.Background(), units))
	require.Equal(t, []string{"a/1", "a/2", "c/1", "c/2"}, calls)
	require.Equal(t, []string{"a", "b", "c"}, kept)
	require.Equal(t, []string{"b<a"}, reused)
	require.Equal(t, []Unit{units[0], units[2]}, Measured(units))

	a, b, c := results[0], results[1], results[2]
	require.Equal(t, &result.Point{Suite: "custom", Name: "a", Index: 0, Target: path}, a.Point)
	require.Equal(t, &result.Point{Suite: "custom", Name: "b", Index: 1, Target: path, SameAs: "a"}, b.Point)
	require.Equal(t, a.Summary, b.Summary)
	require.NotSame(t, a, b)
	require.NotNil(t, a.Spread, "two runs merged with their spread")
	require.NotNil(t, c.Spread)
	require.Equal(t, 2, c.Workload.QueueDepth)
}

// TestExecuteStopsOrKeepsGoing: a unit that measures nothing stops the
// command line's suite, and the daemon's job carries on to the next
// point; without a suite name the results are not annotated.
func TestExecuteStopsOrKeepsGoing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "missing", "t.dat") // its directory does not exist
	units := []Unit{unitOn(bad, 0, "bad", 1), unitOn(filepath.Join(dir, "t.dat"), 1, "good", 1)}

	var calls []string
	err := Executor{Run: realRun(&calls)}.Execute(context.Background(), units)
	var st *Stopped
	require.ErrorAs(t, err, &st)
	require.Equal(t, "bad", st.Unit.Point.Name)
	require.Error(t, st.Err)
	require.False(t, st.Interrupted)
	require.Equal(t, []string{"bad/1"}, calls)

	calls = nil
	var kept []*result.Result
	err = Executor{Run: realRun(&calls), KeepGoing: true, Kept: func(_ Unit, r *result.Result) { kept = append(kept, r) }}.Execute(context.Background(), units)
	require.NoError(t, err)
	require.Equal(t, []string{"bad/1", "good/1"}, calls)
	require.Len(t, kept, 1)
	require.Nil(t, kept[0].Point)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = nil
	err = Executor{Run: realRun(&calls), KeepGoing: true}.Execute(ctx, units)
	require.ErrorAs(t, err, &st)
	require.True(t, st.Interrupted)
	require.Empty(t, calls, "nothing runs after the end of ctx")
}
