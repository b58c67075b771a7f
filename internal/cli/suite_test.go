package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func TestRunSuiteBadInputTouchesNothing(t *testing.T) {
	var out, errb bytes.Buffer
	g := &globalOptions{stdout: &out, stderr: &errb, engines: newEngines()}
	o := &suiteOptions{runOptions: runOptions{output: "text", duration: time.Second, interval: time.Second, qd: 16, workers: 1, engine: "auto"}, repeat: 1}
	o.targets = []string{t.TempDir() + "/x"}
	o.changed = func(name string) bool { return name == "read-pct" }
	err := runSuite(context.Background(), g, o, "characterize")
	require.ErrorContains(t, err, "--read-pct applies to 'ioprobe suite custom' only")
	require.Equal(t, ExitBadInput, exitCode(err))

	o.changed = func(string) bool { return false }
	o.cycles = []string{"qd=1..4"}
	err = runSuite(context.Background(), g, o, "characterize")
	require.ErrorContains(t, err, "needs a step")
	require.Equal(t, ExitBadInput, exitCode(err))
	require.Empty(t, out.String())
}

// TestRunSuiteReportsASharedMeasurementUnderBothPoints runs peak-iops for
// real (short points: long enough that each completes I/Os under the race
// detector on a loaded machine, since a point that measured nothing is an
// error and ends the suite) and checks the suite JSON: every point is there, the
// repeated specification says whose measurement it reports.
func TestRunSuiteReportsASharedMeasurementUnderBothPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a suite") //hygiene:skip -short leaves out the tests that run I/O
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	g := &globalOptions{stdout: &stdout, stderr: &stderr, engines: newEngines()}
	code := execute(context.Background(), g, []string{"suite", "peak-iops", "--target", dir + "/a.dat", "--size", "16MiB",
		"--duration", "300ms", "--ramp", "0s", "--cycle", "bs=512,8k", "--output", "json"})
	require.Equal(t, 0, code, stderr.String())
	var doc result.Suite
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &doc))
	byName := map[string]*result.Result{}
	for _, r := range doc.Results {
		byName[r.Point.Name] = r
	}
	require.Len(t, byName, len(doc.Results))
	w1, rr := byName["workers-8k-qd32-w1"], byName["random-read-8k-qd32"]
	require.NotNil(t, w1)
	require.Equal(t, "random-read-8k-qd32", w1.Point.SameAs)
	require.Equal(t, workload.SectionPeakWorkers, w1.Point.Section)
	require.Equal(t, rr.Summary, w1.Summary)
	require.Empty(t, rr.Point.SameAs)
	require.Contains(t, stderr.String(), "point workers-8k-qd32-w1 on "+dir+"/a.dat has the specification of random-read-8k-qd32 on "+dir+"/a.dat")
}
