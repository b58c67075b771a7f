package check

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestAssembleRepeatThatTimedNothing: a repeat whose backend made no
// commit (the WAL saved nothing before its window closed: a stalled
// fdatasync, or a window shorter than the batch interval) has no figure.
// Its empty histogram's "0 ms" must not stand for one: the other repeats'
// failing figures alone do not straddle the threshold, so the verdict is
// not borderline.
func TestAssembleRepeatThatTimedNothing(t *testing.T) {
	ms := time.Millisecond
	run := func(commits int) repeatStats {
		wal := samples(1000, 0, 2*ms, 2*ms)
		st := repeatStats{wal: wal, walWrite: samples(1000, 0, ms/100, ms/100), records: 1000, bytes: 1000 * FrameBytes,
			segments: 1, walFdatasyncs: 1000, backend: result.NewHistogram(), elapsed: time.Minute}
		if commits > 0 {
			st.backend = samples(commits, 0, 40*ms, 40*ms)
			st.commits, st.pages, st.backendFdatasyncs = uint64(commits), uint64(commits*6), uint64(2*commits+1)
		}
		return st
	}
	rep := &Report{Status: result.StatusOK}
	assemble(rep, Options{Duration: time.Minute, Repeat: 3, Backend: true}, []repeatStats{run(200), run(0), run(200)}, "")
	require.Len(t, rep.Streams, 2)
	backend := rep.Streams[1]
	require.Equal(t, uint64(400), backend.Commits)
	require.Equal(t, uint64(802), backend.Fdatasyncs, "what happened: two a commit and a growth in each repeat that committed")
	require.NotNil(t, backend.Verdict)
	require.Equal(t, Fail, backend.Verdict.Verdict)
	require.False(t, backend.Verdict.Borderline, "an empty repeat's 0 ms is no figure: %s", backend.Verdict.Reason)
	require.False(t, rep.Verdict.Borderline, rep.Verdict.Reason)
	require.Contains(t, backend.Verdict.Reason, "repeat 2 timed no commits")
	// Each repeat as it was: the samples it timed, no figure where none.
	require.Equal(t, []uint64{200, 0, 200}, backend.RepeatSamples)
	require.Len(t, backend.RepeatFigures, 3)
	require.Nil(t, backend.RepeatFigures[1])
	for _, i := range []int{0, 2} {
		require.NotNil(t, backend.RepeatFigures[i])
		require.InDelta(t, 0.040, *backend.RepeatFigures[i], 0.004)
	}
	require.Equal(t, []uint64{1000, 1000, 1000}, rep.Streams[0].RepeatSamples)
	require.NotContains(t, rep.Streams[0].Verdict.Reason, "timed no")
	js, err := json.Marshal(backend)
	require.NoError(t, err)
	require.Regexp(t, `"repeat_figures":\[0\.04[0-9]*,null,0\.04[0-9]*\],"repeat_samples":\[200,0,200\]`, string(js))
	var text strings.Builder
	require.NoError(t, WriteText(&text, rep))
	require.Regexp(t, `Repeats   backend p99: 40\.[0-9]+ ms, none \(timed nothing\), 40\.[0-9]+ ms \(spread 0\.000 ms\)`, text.String())
	require.NotContains(t, text.String(), "0 ms to", "no empty repeat in a spread")

	// No repeat committed: no figure anywhere, not a line of 0 ms.
	rep = &Report{Status: result.StatusOK}
	assemble(rep, Options{Duration: time.Minute, Repeat: 2, Backend: true}, []repeatStats{run(0), run(0)}, "")
	backend = rep.Streams[1]
	require.Equal(t, []*float64{nil, nil}, backend.RepeatFigures)
	require.Zero(t, backend.Fdatasyncs)
	require.Equal(t, Inconclusive, backend.Verdict.Verdict)
	require.Contains(t, backend.Verdict.Reason, "repeats 1 and 2 timed no commits")
	text.Reset()
	require.NoError(t, WriteText(&text, rep))
	require.Contains(t, text.String(), "Backend   0 commits: none timed ")
	require.Contains(t, text.String(), "Repeats   backend p99: none (timed nothing), none (timed nothing)\n")
}

// TestEmptyRepeats names the repeats that timed nothing, and leaves
// them out of the figures the spread is judged on.
func TestEmptyRepeats(t *testing.T) {
	f := 0.001
	for _, c := range []struct {
		figures  []*float64
		want     string
		measured int
	}{
		{[]*float64{&f, &f}, "", 2},
		{[]*float64{nil, &f}, "repeat 1", 1},
		{[]*float64{nil, &f, nil}, "repeats 1 and 3", 1},
		{[]*float64{nil, nil, &f, nil}, "repeats 1, 2 and 4", 1},
	} {
		s := Stream{RepeatFigures: c.figures}
		require.Equal(t, c.want, s.emptyRepeats())
		require.Len(t, s.measuredFigures(), c.measured)
	}
}
