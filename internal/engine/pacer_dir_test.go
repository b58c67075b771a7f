package engine_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// simulate runs one lane of a worker with fio's rate per direction on a
// clock of its own for seconds: each I/O is issued when the pacer lets it
// and takes service ns (one in flight). It returns the reads and writes
// issued, their bytes, and the intended starts in issue order.
func simulate(t *testing.T, spec workload.Spec, seconds int, service int64) (reads, writes, rbytes, wbytes int, dues []int64) {
	t.Helper()
	spec = spec.WithDefaults()
	require.NoError(t, spec.Validate())
	w := &engine.Worker{Spec: &spec, Seed: 3, RateBPS: [2]float64{float64(spec.RateReadBPS), float64(spec.RateWriteBPS)}}
	p := w.LanePacer(1, 0)
	require.True(t, p.Paced())
	g, err := workload.NewGenerator(&spec, workload.Region{Len: workload.GiB}, nil, 7)
	require.NoError(t, err)
	now := int64(1e9)
	end := now + int64(seconds)*1e9
	var op engine.IO
	for now < end {
		if d := p.Next(now, g, &op); d > 0 {
			now += d
			continue
		}
		if op.Write {
			writes++
			wbytes += int(op.Len)
		} else {
			reads++
			rbytes += int(op.Len)
		}
		dues = append(dues, op.Due)
		require.LessOrEqual(t, op.Due, now, "an I/O never starts before it is due")
		now += service
	}
	return
}

// TestRatePerDirectionOnAMix: fio's rate_iops=300 on randrw rwmixread=70
// caps each direction at 300/s, so the mix runs 50/50 at 600 I/Os a
// second on a device fast enough for both (fio 3.33: 300 reads/s and 300
// writes/s; issue 22 item 3).
func TestRatePerDirectionOnAMix(t *testing.T) {
	spec := workload.Spec{ReadPct: 70, RandomPct: 100, QueueDepth: 1, Duration: time.Second, RateReadBPS: 300 * 4096, RateWriteBPS: 300 * 4096}
	r, w, _, _, _ := simulate(t, spec, 20, int64(100*time.Microsecond))
	require.InDelta(t, 300*20, r, 2, "reads")
	require.InDelta(t, 300*20, w, 2, "writes")
}

// TestRateOneDirection: rate_iops=,300 caps the writes only; the reads of
// the mix take whatever the device leaves (fio's rate_ddir switches to
// the direction without a rate whenever the writes are ahead).
func TestRateOneDirection(t *testing.T) {
	spec := workload.Spec{ReadPct: 70, RandomPct: 100, QueueDepth: 1, Duration: time.Second, RateWriteBPS: 300 * 4096}
	r, w, _, _, _ := simulate(t, spec, 10, int64(100*time.Microsecond))
	require.InDelta(t, 300*10, w, 2, "writes at their cap")
	require.InDelta(t, 10000*10-300*10, r, 5, "reads fill the rest of the device's 10000 I/Os a second")
	// A direction is switched to only when the drawn one is ahead: on a
	// device that does 1000 I/Os a second the mix draws 300 writes a
	// second, and that many is all it gets to (fio's rate_ddir alike).
	_, w, _, _, _ = simulate(t, spec, 10, int64(time.Millisecond))
	require.LessOrEqual(t, w, 300*10+2)
}

// TestRateCountsBytes: fio turns rate_iops into bytes at the smallest
// transfer size (init.c: __setup_rate), so a 4k/16k mix at rate_iops=100
// moves 100 × 4 KiB a second, in fewer I/Os.
func TestRateCountsBytes(t *testing.T) {
	spec := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 50}, {Bytes: 16384, Weight: 50}}, ReadPct: 100, RandomPct: 100,
		QueueDepth: 1, Duration: time.Second, RateReadBPS: 100 * 4096, RateWriteBPS: 100 * 4096}
	r, w, rb, _, _ := simulate(t, spec, 30, int64(100*time.Microsecond))
	require.Zero(t, w)
	require.InDelta(t, 100*4096*30, rb, 16384, "bytes at the cap")
	require.InDelta(t, 100*30*4096/10240, r, 30, "I/Os: the bytes over the mean size")
}

// TestRatePoisson: rate_process=poisson keeps the mean rate and spreads
// the gaps exponentially (their spread is about their mean).
func TestRatePoisson(t *testing.T) {
	spec := workload.Spec{ReadPct: 100, RandomPct: 100, QueueDepth: 1, Duration: time.Second, RateReadBPS: 500 * 4096, RateProcess: workload.RatePoisson}
	r, _, _, _, dues := simulate(t, spec, 60, int64(10*time.Microsecond))
	require.InDelta(t, 500*60, r, 500*60*0.03)
	var sum, sq float64
	for i := 1; i < len(dues); i++ {
		g := float64(dues[i] - dues[i-1])
		sum += g
		sq += g * g
	}
	n := float64(len(dues) - 1)
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	require.InDelta(t, 1.0, cv, 0.1, "exponential gaps")
}

// TestRatePendingKeepsItsDirection: when both directions are ahead the
// pacer waits for the one due first and issues that one, not a new draw.
func TestRatePendingKeepsItsDirection(t *testing.T) {
	spec := workload.Spec{ReadPct: 50, RandomPct: 100, QueueDepth: 1, Duration: time.Second, RateReadBPS: 10 * 4096, RateWriteBPS: 1 * 4096}.WithDefaults()
	w := &engine.Worker{Spec: &spec, RateBPS: [2]float64{10 * 4096, 4096}}
	p := w.LanePacer(1, 0)
	g, err := workload.NewGenerator(&spec, workload.Region{Len: workload.GiB}, nil, 1)
	require.NoError(t, err)
	var op engine.IO
	now := int64(1e9)
	require.Zero(t, p.Next(now, g, &op))
	first := op.Write
	require.Zero(t, p.Next(now, g, &op), "the other direction is due at the start too")
	require.NotEqual(t, first, op.Write)
	// Both ahead now: reads are due in 100 ms, writes in 1 s.
	d := p.Next(now, g, &op)
	require.Equal(t, int64(100*time.Millisecond), d)
	require.Equal(t, d, p.Next(now, g, &op), "still waiting, nothing drawn")
	require.Zero(t, p.Next(now+d, g, &op))
	require.False(t, op.Write, "the read, due first")
	require.Equal(t, now+d, op.Due)
}
