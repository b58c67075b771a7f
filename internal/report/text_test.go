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
