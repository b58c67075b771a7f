package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

func TestWriteTextGolden(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, WriteText(&b, f.result()))
			golden(t, "text_"+f.name+".golden", b.Bytes())

			out := b.String()
			require.NotContains(t, out, "NaN")
			require.NotContains(t, out, "Inf")
			require.NotContains(t, out, "\x1b", "no colours")
		})
	}
}

func TestWriteTextShape(t *testing.T) {
	text := func(r *result.Result) string {
		var b bytes.Buffer
		require.NoError(t, WriteText(&b, r))
		return b.String()
	}

	mixed := text(mixedResult())
	require.Regexp(t, `(?m)^ +total +read +write$`, mixed)
	require.Contains(t, mixed, "Status    ERRORS: 3 I/O errors")
	require.Regexp(t, `(?m)^Errors +3  eio 2, short 1$`, mixed)
	require.Contains(t, mixed, "Percentiles (µs)")
	require.Regexp(t, `(?m)^  reads +496,300  \(100\.0% of ioprobe's\)`, mixed)

	read := text(readResult())
	require.NotContains(t, read, "Status")
	require.Regexp(t, `(?m)^ +read$`, read)
	require.NotRegexp(t, `(?m)^ .*\bwrite\b`, strings.Split(read, "Kernel counted")[0])
	require.Contains(t, read, "Percentiles (ms)")
	require.Regexp(t, `(?m)^  reads +43,170  \(50\.0% of ioprobe's\)`, read)
	require.Regexp(t, `(?m)^  writes +12  \(ioprobe: none\)`, read, "writes by someone else are shown")

	write := text(writeResult())
	require.Contains(t, write, "Status    INTERRUPTED: interrupted by SIGINT")
	require.Regexp(t, `(?m)^ +write$`, write)
	require.NotContains(t, write, "Kernel counted")
	require.Regexp(t, `(?m)^  host utilization +- % +not measured$`, write)

	empty := text(emptyResult())
	require.Regexp(t, `(?m)^ +total +read +write$`, empty, "a 70% read spec with nothing counted shows both")
}

func TestWriteTextErrors(t *testing.T) {
	require.Error(t, WriteText(&bytes.Buffer{}, nil))
	boom := errors.New("disk full")
	require.ErrorIs(t, WriteText(failingWriter{boom}, mixedResult()), boom)
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

// TestWriteTextFlushes: a run that flushed shows fio's sync line and the
// kernel's flush count beside it; one that did not shows neither.
func TestWriteTextFlushes(t *testing.T) {
	r := writeResult()
	r.Workload.Fdatasync = 1
	r.Workload.Sync = "dsync"
	r.Histogram.Sync = result.NewHistogram()
	for i := int64(1); i <= 1000; i++ {
		r.Histogram.Sync.Record(i * 10_000) // 10 µs .. 10 ms
	}
	r.Summary.SetFromHistograms(r.Histogram)
	r.Summary.Device = &result.DeviceStats{Devices: []string{"vda"}, WriteOps: 1000, FlushOps: 1010, FlushSeconds: 1.5}
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, r))
	out := b.String()
	require.Contains(t, out, "fdatasync every 1 write, O_DSYNC")
	require.Regexp(t, `(?m)^Flushes \(fdatasync\) +1,000  at `, out)
	require.Regexp(t, `(?m)^  latency \(ms\) +mean 5\.00\d +p50 (4\.99|5\.00)\d +p99 9\.9\d\d +p99\.9 (9\.99|10\.00)\d +max 10\.000$`, out)
	require.Regexp(t, `(?m)^  flushes +1,010  \(101\.0% of ioprobe's\) +1,500 ms  flushing$`, out)
	require.Less(t, strings.Index(out, "Flushes"), strings.Index(out, "Errors"), "the flush line follows the response times")

	plain := writeResult()
	b.Reset()
	require.NoError(t, WriteText(&b, plain))
	require.NotContains(t, b.String(), "Flushes")
	require.NotContains(t, b.String(), "flushes")
}

// A partition's flushes are its whole disk's, and ioprobe's own check
// reads are set apart: the kernel's block says both.
func TestWriteTextOwnReadsAndDiskFlushes(t *testing.T) {
	r := writeResult()
	r.Workload.Fdatasync = 1
	r.Histogram.Sync = result.NewHistogram()
	r.Histogram.Sync.Record(1_000_000)
	r.Summary.SetFromHistograms(r.Histogram)
	r.Summary.Device = &result.DeviceStats{Devices: []string{"vda1"}, WriteOps: 1000, FlushOps: 1, FlushDevices: []string{"vda"},
		OwnReadOps: 25, OwnReadBytes: 25 << 16, OwnInLatency: "not marked here"}
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, r))
	out := b.String()
	require.Regexp(t, `(?m)^  own reads +25  \(ioprobe's safety checks: not in the reads above\) +1\.64 MB$`, out)
	require.Contains(t, out, "  flushes counted on the whole disk (vda): a flush is the disk's request, whichever partition asked")
	require.NotRegexp(t, `(?m)^  reads `, out, "no reads of the workload's: no line")
}

// A rate-limited run shows its latency from the intended start right after
// the response times (the service time); an unpaced one does not.
func TestWriteTextIntendedLatency(t *testing.T) {
	r := readResult()
	r.Workload.RateIOPS = 20
	r.Histogram.Intended = result.NewHistogram()
	for i := int64(1); i <= 1000; i++ {
		r.Histogram.Intended.Record(i * 1_000_000) // 1 ms .. 1 s
	}
	r.Summary.SetFromHistograms(r.Histogram)
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, r))
	out := b.String()
	require.Regexp(t, `(?m)^Latency from intended start \(ms\) +mean 50\d\.\d{3} +p50 50\d\.\d{3} +p99 99\d\.\d{3} +p99\.9 (99\d\.\d{3}|1,000\.000) +max 1,000\.000$`, out)
	require.Less(t, strings.Index(out, "Percentiles ("), strings.Index(out, "Latency from intended start"), "beside the service time")
	require.Less(t, strings.Index(out, "Latency from intended start"), strings.Index(out, "Errors"))

	b.Reset()
	require.NoError(t, WriteText(&b, readResult()))
	require.NotContains(t, b.String(), "intended start")
}

// A run stopped during its ramp-up measured nothing and says so; it does
// not claim the whole ramp-up ran.
func TestTimeLineAfterAStopDuringRampUp(t *testing.T) {
	r := &result.Result{Schema: result.Schema, Status: result.StatusInterrupted,
		Workload: result.Workload{RampSeconds: 10, DurationSeconds: 60}}
	require.Equal(t, "nothing measured: stopped during the 10 s ramp-up, before the 60 s run time", timeLine(r))
	r.Status = result.StatusErrors
	require.Equal(t, "nothing measured: stopped during the 10 s ramp-up, before the 60 s run time", timeLine(r))
	// Stopped while measuring: the ramp-up was over.
	r.Summary.ElapsedSeconds = 12.5
	require.Equal(t, "12.50 s measured (of 60 s), after 10 s ramp-up", timeLine(r))
}

// TestTimeLineSaysWhyABudgetRunEnded: a run with a stop-after budget
// says that the budget, or the cap, ended it, not "of a year".
func TestTimeLineSaysWhyABudgetRunEnded(t *testing.T) {
	r := &result.Result{Workload: result.Workload{DurationSeconds: 31536000, Loops: 1}, Summary: result.Summary{ElapsedSeconds: 1.5, Ended: result.EndedBudget}}
	require.Equal(t, "1.50 s measured (ended by its stop-after budget), no ramp-up", timeLine(r))
	r.Workload.DurationSeconds, r.Summary.Ended = 60, result.EndedDuration
	require.Equal(t, "1.50 s measured (the budget cut short at 60 s), no ramp-up", timeLine(r))
}
