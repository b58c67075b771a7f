//go:build linux

package runner

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func TestKernelCountAgreesOnRandomReads(t *testing.T) {
	dev := testloop.Device(t, 256<<20)
	s := spec(t, "4k", 100, 100, 16, 2*time.Second)
	s.RegionBytes = 0 // the whole device
	s.Ramp = 200 * time.Millisecond
	before := kernelReads(t, dev)
	res, err := Run(context.Background(), plan(Group{Spec: s, Targets: []string{dev}}))
	require.NoError(t, err)
	whole := kernelReads(t, dev) - before
	require.Equal(t, result.StatusOK, res.Status, res.Message)
	require.Equal(t, "block", res.Targets[0].Kind)
	require.NotNil(t, res.Summary.Device)
	require.Equal(t, []string{filepath.Base(dev)}, res.Summary.Device.Devices)
	// Every read counted in the window, by us or by the window's kernel
	// delta, is one of the reads the kernel saw over the whole run.
	require.LessOrEqual(t, res.Summary.ReadOps, whole)
	require.LessOrEqual(t, res.Summary.Device.ReadOps, whole)
	ours, kernel := float64(res.Summary.ReadOps), float64(res.Summary.Device.ReadOps)
	require.Greater(t, ours, 1000.0)
	require.InEpsilon(t, ours, kernel, 0.02, "ioprobe counted %v reads, the kernel %v", ours, kernel)
	require.InEpsilon(t, float64(res.Summary.ReadBytes), float64(res.Summary.Device.ReadBytes), 0.02)
	require.Zero(t, res.Summary.Device.WriteOps, "a read-only run wrote to the device")
}

func TestSummaryIsConsistent(t *testing.T) {
	tgt := filepath.Join(t.TempDir(), "t.dat")
	s := spec(t, "4k:70,16k:30", 70, 50, 4, 1500*time.Millisecond)
	res, err := Run(context.Background(), plan(Group{Spec: s, Targets: []string{tgt}}))
	require.NoError(t, err)
	require.Equal(t, result.StatusOK, res.Status)
	sum := res.Summary
	require.Equal(t, sum.ReadOps+sum.WriteOps, sum.Ops)
	require.Equal(t, sum.Ops, res.Histogram.Read.Count()+res.Histogram.Write.Count())
	// 70% reads, within five standard deviations of the binomial draw
	// (however few I/Os a loaded machine managed).
	require.Positive(t, sum.Ops)
	require.InDelta(t, 0.70, float64(sum.ReadOps)/float64(sum.Ops), 5*math.Sqrt(0.7*0.3/float64(sum.Ops)))
	require.InEpsilon(t, float64(sum.Ops)/sum.ElapsedSeconds, sum.IOPS, 1e-9)
	require.InEpsilon(t, float64(sum.Bytes)/1e6/sum.ElapsedSeconds, sum.MBPerSecond, 1e-9)
	require.InEpsilon(t, float64(res.Histogram.Combined().Sum())/float64(sum.Ops)/1e9, sum.Latency.MeanSeconds, 1e-9)
	// The intervals cover the window: their ops add up to the total. (How
	// many there are depends on how many ticks a loaded machine delivered.)
	require.NotEmpty(t, res.Intervals)
	var ops, prev float64
	for _, iv := range res.Intervals {
		ops += iv.IOPS * (iv.TSeconds - prev)
		prev = iv.TSeconds
	}
	require.InEpsilon(t, float64(sum.Ops), ops, 0.01)
	require.InDelta(t, sum.ElapsedSeconds, prev, 0.01)
	require.Greater(t, sum.CPU.ProcessCPUSecondsPerIO, 0.0)
	require.Greater(t, sum.CPU.HostUtilizationPct, 0.0)
	require.Equal(t, "4KiB:70,16KiB:30 70% read 50% random", res.Workload.Name)
	require.Nil(t, res.Histogram.Intended, "unpaced: no latency from an intended start")
	require.Nil(t, sum.IntendedLatency)
}

// A rate-limited run carries the latency from the intended start of every
// measured I/O, reads and writes, beside the service time.
func TestPacedRunHasIntendedLatency(t *testing.T) {
	tgt := filepath.Join(t.TempDir(), "t.dat")
	s := spec(t, "4k", 50, 100, 2, 1200*time.Millisecond)
	s.RateIOPS = 200
	res, err := Run(context.Background(), plan(Group{Spec: s, Targets: []string{tgt}}))
	require.NoError(t, err)
	require.Positive(t, res.Summary.Ops)
	require.NotNil(t, res.Histogram.Intended)
	require.Equal(t, res.Summary.Ops, res.Histogram.Intended.Count(), "one intended latency per measured I/O")
	require.NotNil(t, res.Summary.IntendedLatency)
	require.Equal(t, result.LatencyOf(res.Histogram.Intended), *res.Summary.IntendedLatency)
	require.GreaterOrEqual(t, res.Histogram.Intended.Sum(), res.Histogram.Combined().Sum(),
		"never shorter than the service time")
}

func TestMixedGroupsRunTogether(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.dat"), filepath.Join(dir, "b.dat")
	reads := spec(t, "4k", 100, 100, 2, time.Second)
	reads.Name = "reader"
	writes := spec(t, "64k", 0, 0, 2, time.Second)
	writes.Name, writes.Workers = "logger", 2
	p := plan(Group{Spec: reads, Targets: []string{a, b}}, Group{Spec: writes, Targets: []string{b}})
	p.Name = "mixed"
	res, err := Run(context.Background(), p)
	require.NoError(t, err)
	require.Equal(t, result.StatusOK, res.Status, res.Message)
	require.Equal(t, "mixed", res.Workload.Name)
	require.Len(t, res.Groups, 2)
	require.Equal(t, "logger", res.Groups[1].Name)
	require.Equal(t, 2, res.Groups[1].Workers)
	require.Len(t, res.Targets, 2)
	require.Greater(t, res.Summary.ReadOps, uint64(0))
	require.Greater(t, res.Summary.WriteOps, uint64(0))
	require.EqualValues(t, 64<<10, res.Summary.WriteBytes/res.Summary.WriteOps)
}

func TestCancelGivesPartialInterruptedResult(t *testing.T) {
	tgt := filepath.Join(t.TempDir(), "t.dat")
	s := spec(t, "4k", 100, 100, 2, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	p := plan(Group{Spec: s, Targets: []string{tgt}})
	var cancelledAt time.Duration
	p.Observers = []Observer{ObserverFunc(func(s *Snapshot) {
		if s.Phase == PhaseMeasure && s.Targets[0].Read.Ops > 0 && cancelledAt == 0 {
			cancelledAt = s.Elapsed
			cancel()
		}
	})}
	res, err := Run(ctx, p)
	require.NoError(t, err)
	// An hour's run came back (the test did not time out) with what was
	// measured until the cancel, and says it was interrupted.
	require.Equal(t, result.StatusInterrupted, res.Status)
	require.Positive(t, res.Summary.Ops)
	require.Equal(t, res.Summary.Ops, res.Histogram.Read.Count())
	require.GreaterOrEqual(t, res.Summary.ElapsedSeconds, cancelledAt.Seconds())
}

func TestErrorBudgetStopsTheRun(t *testing.T) {
	// Reads start failing (short reads) when the file is truncated behind
	// the runner's back; the budget of 3 errors stops the run.
	tgt := filepath.Join(t.TempDir(), "t.dat")
	s := spec(t, "4k", 100, 100, 2, time.Minute)
	p := plan(Group{Spec: s, Targets: []string{tgt}})
	p.MaxErrors = 3
	shrunk := false
	p.Observers = []Observer{ObserverFunc(func(snap *Snapshot) {
		if !shrunk {
			shrunk = true
			require.NoError(t, os.Truncate(tgt, 0))
		}
	})}
	res, err := Run(context.Background(), p)
	require.NoError(t, err)
	require.Equal(t, result.StatusErrors, res.Status)
	require.GreaterOrEqual(t, res.Summary.Errors, uint64(3))
	require.Contains(t, res.Message, "stopped after 3 I/O error(s)")
	require.Contains(t, res.Summary.ErrorsByClass, "short")
}

func TestBadSecondTargetCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.dat")
	s := spec(t, "4k", 100, 100, 2, time.Second)
	_, err := Run(context.Background(), plan(Group{Spec: s, Targets: []string{good, "/dev/shm/ioprobe-runner-test.dat"}}))
	require.Error(t, err)
	_, statErr := os.Stat(good)
	require.True(t, os.IsNotExist(statErr), "the first target was created although the second was refused")
}

// picky is an engine that says no opened target suits it.
type picky struct{ ran bool }

func (*picky) Name() workload.EngineName  { return "picky" }
func (*picky) Available() error           { return nil }
func (p *picky) Run(*engine.Worker) error { p.ran = true; return nil }
func (*picky) Suits(fd int) error         { return os.ErrInvalid }

func TestAutoPassesOverAnEngineTheTargetsDoNotSuit(t *testing.T) {
	tgt := filepath.Join(t.TempDir(), "t.dat")
	s := spec(t, "4k", 100, 100, 2, 300*time.Millisecond)
	pk := &picky{}
	p := plan(Group{Spec: s, Targets: []string{tgt}})
	p.Engines = engine.NewRegistry(pk, syncio.New())
	res, err := Run(context.Background(), p)
	require.NoError(t, err)
	require.Equal(t, result.StatusOK, res.Status, res.Message)
	require.False(t, pk.ran)
	require.Equal(t, workload.EngineSync, res.Workload.Engine)
	require.Equal(t, "picky passed over: "+tgt+": invalid argument; using sync", res.Workload.EngineReason)
}

func TestCheckTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new.dat")
	s := spec(t, "4k", 0, 100, 4, time.Second)
	require.NoError(t, Check(plan(Group{Spec: s, Targets: []string{fresh}})))
	_, err := os.Stat(fresh)
	require.True(t, os.IsNotExist(err), "Check created the target")

	foreign := filepath.Join(dir, "foreign.dat")
	data := make([]byte, 32<<20)
	data[0] = 'x'
	require.NoError(t, os.WriteFile(foreign, data, 0o644))
	err = Check(plan(Group{Spec: s, Targets: []string{foreign}}))
	require.ErrorContains(t, err, "refusing to write to")
	require.ErrorContains(t, err, "--allow-destructive")
	reads := spec(t, "4k", 100, 100, 4, time.Second)
	require.NoError(t, Check(plan(Group{Spec: reads, Targets: []string{foreign}})))

	bad := s
	bad.Engine = "aio"
	require.ErrorContains(t, Check(plan(Group{Spec: bad, Targets: []string{fresh}})), "--engine aio")
}

// A cancelled context stops the preparation of a new file target: Run
// returns at once and leaves no partial file behind.
func TestCancelDuringPreparation(t *testing.T) {
	tgt := filepath.Join(t.TempDir(), "new.dat")
	s := spec(t, "4k", 100, 100, 1, time.Second)
	s.RegionBytes = 256 << 20
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, plan(Group{Spec: s, Targets: []string{tgt}}))
	require.ErrorIs(t, err, target.ErrCancelled)
	_, statErr := os.Stat(tgt)
	require.True(t, os.IsNotExist(statErr), "the partial file was left behind")
}

// slowSetup is the sync engine with one worker slow to set up (as a ring
// registering large buffers on a loaded host is). It notes, on one
// monotonic clock, when that worker's setup ended and when each worker's
// first I/O completed.
type slowSetup struct {
	engine.Engine
	delay   time.Duration
	ops     [2]atomic.Int64
	setUp   atomic.Int64 // ns since t0: the slow worker's setup is over
	firstIO [2]atomic.Int64
	t0      time.Time
}

func (s *slowSetup) since() int64 { return int64(time.Since(s.t0)) + 1 } // never 0: 0 is "not yet"

func (s *slowSetup) Run(w *engine.Worker) error {
	if w.ID == 1 {
		time.Sleep(s.delay) //hygiene:sleep the slow setup this test is about, not a wait for an event
		s.setUp.Store(s.since())
	}
	w.Trace = func(*engine.Lane, *engine.IO, int64) {
		s.firstIO[w.ID].CompareAndSwap(0, s.since())
		s.ops[w.ID].Add(1)
	}
	return s.Engine.Run(w)
}

// TestStartBarrierWaitsForEveryWorker: the start barrier opens only when
// every worker is set up, so no worker's first I/O precedes the end of the
// slowest one's setup, and the slow worker measures too. (Before, the
// barrier opened at once and the slow worker missed most of the window:
// a short point of a many-worker mixed run could report almost nothing.)
// Only the order of events is asserted, on one clock: how many I/Os each
// worker managed depends on the machine's load.
func TestStartBarrierWaitsForEveryWorker(t *testing.T) {
	s := spec(t, "4k", 100, 100, 1, 300*time.Millisecond)
	s.Workers, s.Ramp = 2, 0
	slow := &slowSetup{Engine: syncio.New(), delay: 200 * time.Millisecond, t0: time.Now()}
	p := plan(Group{Spec: s, Targets: []string{filepath.Join(t.TempDir(), "t.dat")}})
	p.Engines = engine.NewRegistry(slow)
	res, err := Run(context.Background(), p)
	require.NoError(t, err)
	require.Equal(t, result.StatusOK, res.Status, res.Message)
	setUp := slow.setUp.Load()
	require.Positive(t, setUp)
	for id := range slow.firstIO {
		first := slow.firstIO[id].Load()
		require.Positive(t, first, "worker %d did no I/O", id)
		require.Greater(t, first, setUp, "worker %d's first I/O came %v before the slow worker was set up",
			id, time.Duration(setUp-first))
	}
	require.GreaterOrEqual(t, uint64(slow.ops[0].Load()+slow.ops[1].Load()), res.Summary.Ops, "counted I/Os were done")
}

func TestStartAtOpensTheBarrierAtTheInstant(t *testing.T) {
	s := spec(t, "4k", 100, 100, 2, 500*time.Millisecond)
	s.Ramp = 250 * time.Millisecond
	// The instant must come after preparation (creating and filling the
	// file, the safety checks), which takes what the machine gives it:
	// 2.7 s under -race at load 20 on two cores. A lead that preparation
	// overran is bad input (TestStartAtOverrunByPreparationIsBadInput),
	// not what this test is about: it tries again with twice the lead.
	var (
		p         Plan
		res       *result.Result
		err       error
		firstSeen time.Time // the first snapshot, ramp or measure, on the same clock
	)
	for lead := 1500 * time.Millisecond; ; lead *= 2 {
		p = plan(Group{Spec: s, Targets: []string{filepath.Join(t.TempDir(), "t.dat")}})
		p.StartAt = time.Now().Add(lead)
		firstSeen = time.Time{}
		p.Observers = []Observer{ObserverFunc(func(*Snapshot) {
			if firstSeen.IsZero() {
				firstSeen = time.Now()
			}
		})}
		res, err = Run(context.Background(), p)
		var fe *workload.FieldError
		if !errors.As(err, &fe) || fe.Field != "--start-at" || lead >= time.Minute {
			break
		}
		t.Logf("preparation overran a lead of %s: %v", lead, err)
	}
	require.NoError(t, err)
	require.Equal(t, result.StatusOK, res.Status)
	require.True(t, res.StartAt.Equal(p.StartAt), "start_at records the request")
	require.False(t, res.StartedAt.Before(p.StartAt), "the ramp began before the requested instant: %s < %s", res.StartedAt, p.StartAt)
	require.False(t, firstSeen.Before(p.StartAt), "I/O was observed before the requested instant")
	require.Positive(t, res.Summary.Ops)
	require.True(t, res.Targets[0].Created)
}

func TestStartAtOverrunByPreparationIsBadInput(t *testing.T) {
	tgt := filepath.Join(t.TempDir(), "t.dat")
	p := plan(Group{Spec: spec(t, "4k", 100, 100, 2, time.Hour), Targets: []string{tgt}})
	p.StartAt = time.Now() // past by the time preparation is done
	observed := false
	p.Observers = []Observer{ObserverFunc(func(*Snapshot) { observed = true })}
	res, err := Run(context.Background(), p)
	require.Nil(t, res, "nothing measured")
	var fe *workload.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "--start-at", fe.Field)
	require.Contains(t, err.Error(), "after it")
	require.False(t, observed, "an overrun start still ran")
}

func TestStartAtCancelWhileWaiting(t *testing.T) {
	tgt := filepath.Join(t.TempDir(), "t.dat")
	p := plan(Group{Spec: spec(t, "4k", 100, 100, 2, time.Hour), Targets: []string{tgt}})
	p.StartAt = time.Now().Add(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel right after the last chunk of the fill: preparation is over
	// (nothing after the fill looks at the cancel), the wait is next.
	filled := false
	p.Progress = func(_ string, done, total int64) {
		if done == total {
			filled = true
			cancel()
		}
	}
	res, err := Run(ctx, p)
	require.Nil(t, res)
	require.ErrorIs(t, err, ErrStartAtInterrupted)
	require.True(t, filled)
}
