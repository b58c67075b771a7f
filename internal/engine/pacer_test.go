package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// drain books every slot that is due at now and returns their intended
// starts, in the order the pacer handed them out.
func drain(p *engine.Pacer, now int64) []int64 {
	var due []int64
	for p.Delay(now) == 0 {
		due = append(due, p.Due())
	}
	return due
}

// On schedule, each I/O is due on its own slot and not before.
func TestPacerSlotsOnSchedule(t *testing.T) {
	const interval = int64(50 * time.Millisecond) // 20 IOPS
	p := engine.NewPacer(20)
	start := int64(1_000_000_000)
	require.Zero(t, p.Delay(start), "the first I/O is due at once")
	require.Equal(t, start, p.Due())
	for k := int64(1); k <= 10; k++ {
		slot := start + k*interval
		require.Equal(t, int64(3), p.Delay(slot-3), "I/O %d waits until its slot", k)
		require.Equal(t, start+(k-1)*interval, p.Due(), "a wait books nothing")
		require.Zero(t, p.Delay(slot))
		require.Equal(t, slot, p.Due(), "I/O %d's intended start is its slot", k)
	}
}

// A stall of 5 s at 20 IOPS: when the lane comes back, the 100 slots that
// passed meanwhile are all due at once, each keeping its own intended start
// (none dropped, none moved), and then the schedule goes on as before.
func TestPacerKeepsEverySlotThroughAStall(t *testing.T) {
	const interval = int64(50 * time.Millisecond)
	const stall = int64(5 * time.Second)
	p := engine.NewPacer(20)
	start := int64(7_000_000_000)
	require.Zero(t, p.Delay(start))
	// The I/O of slot 0 hangs for 5 s; the lane asks again when it is back.
	back := start + stall
	due := drain(&p, back)
	require.Len(t, due, int(stall/interval), "every slot of the stall (1..100) is due when the lane is back")
	for i, d := range due {
		require.Equal(t, start+int64(i+1)*interval, d, "late I/O %d keeps its slot", i+1)
		require.GreaterOrEqual(t, back-d, int64(0))
	}
	require.Equal(t, back, due[len(due)-1], "the last one came due just as the lane returned")
	// Back on schedule: the next slot is one interval on, not now.
	require.Equal(t, interval, p.Delay(back))
	require.Zero(t, p.Delay(back+interval))
	require.Equal(t, back+interval, p.Due())
}

// An unpaced pacer never waits and gives no intended start.
func TestPacerUnpaced(t *testing.T) {
	p := engine.NewPacer(0)
	require.False(t, p.Paced())
	require.Zero(t, p.Delay(123))
	require.Zero(t, p.Due())
	require.True(t, p.Wait(engine.NewControl(0, nil)))
}

// Complete records the latency from the intended start beside the service
// time, on paced lanes only, while measuring only, for completed I/Os only.
func TestCompleteRecordsIntendedLatency(t *testing.T) {
	ctl := engine.NewControl(0, nil)
	spec := &workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}}, ReadPct: 50}
	paced := &engine.Worker{Spec: spec, Targets: []engine.Target{{Path: "t"}}, Ctl: ctl, RateIOPS: 20}
	unpaced := &engine.Worker{Spec: spec, Targets: []engine.Target{{Path: "t"}}, Ctl: ctl}
	pl, ul := paced.NewLane(0), unpaced.NewLane(0)
	require.Nil(t, ul.Read.Intended, "an unpaced lane keeps no intended histogram")
	require.NotNil(t, pl.Read.Intended)

	read := &engine.IO{Op: workload.Op{Len: 4096}, Due: 1000}
	engine.Complete(ctl, pl, read, 4096, 5000, 7000)
	require.Zero(t, pl.Read.Latency.Count(), "ramp-up: nothing counts")
	require.Zero(t, pl.Read.Intended.Count())

	ctl.SetMeasuring(true)
	engine.Complete(ctl, pl, read, 4096, 5000, 7000)
	write := &engine.IO{Op: workload.Op{Len: 4096, Write: true}, Due: 2000}
	engine.Complete(ctl, pl, write, 4096, 2500, 3000)
	require.Equal(t, uint64(2000), pl.Read.Latency.Max(), "service time: completion - submission")
	require.Equal(t, uint64(6000), pl.Read.Intended.Max(), "completion - intended start")
	require.Equal(t, uint64(1000), pl.Write.Intended.Max())
	require.Equal(t, uint64(1), pl.Write.Intended.Count())

	engine.Complete(ctl, pl, read, -5, 5000, 7000)
	require.Equal(t, uint64(1), pl.Read.Intended.Count(), "a failed I/O has no latency of either kind")
	require.Equal(t, pl.Read.Latency.Count(), pl.Read.Intended.Count())

	engine.Complete(ctl, ul, &engine.IO{Op: workload.Op{Len: 4096}}, 4096, 1, 2)
	require.Equal(t, uint64(1), ul.Read.Latency.Count())
}
