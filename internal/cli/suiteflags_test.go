package cli

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// suiteOwnFlags are the flags runSuite reads itself, for the command as a
// whole: neither the points nor the run settings, so the walk below
// cannot see them in the plan.
var suiteOwnFlags = map[string]string{
	"output":  "the output format of the whole suite",
	"out":     "where the whole suite's output goes",
	"dry-run": "prints the plan instead of running it",
	"repeat":  "runs each unit this many times (suiterun.Executor.Repeat)",
}

// suiteFlagValues are a value, not the default, for each string flag; the
// walk gives numbers, durations and booleans a value of its own.
var suiteFlagValues = map[string]string{
	"target":  "other.dat",
	"size":    "64MiB",
	"bs":      "8k",
	"line":    "4k,share=100,read=67,random=100",
	"engine":  "sync",
	"profile": "oltp",
	"align":   "8k",
	"sync":    "dsync",
	"io-size": "1MiB",
	"cycle":   "qd=1,2",
}

// suitePlan is what a suite command line leads to, short of running:
// the units (points, their specifications, their targets) and the
// settings every run shares.
type suitePlan struct {
	Units    []suiterun.Unit
	Settings suiterun.Settings
}

// planSuite parses args as `ioprobe suite name` does and builds its plan.
func planSuite(t *testing.T, name string, args ...string) (suitePlan, error) {
	t.Helper()
	o := &suiteOptions{}
	fs := pflag.NewFlagSet("suite", pflag.ContinueOnError)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse(args))
	o.changed = fs.Changed
	targets := targetsOr(o.targets)
	s, err := o.suite(name, len(targets))
	if err != nil {
		return suitePlan{}, err
	}
	g := &globalOptions{stdout: io.Discard, stderr: io.Discard}
	settings := o.settings(g)
	settings.Note = nil // a func: compared by what it is set from, not by value
	return suitePlan{Units: suiterun.Units(s, targets), Settings: settings}, nil
}

// valueFor is a value of flag f other than its default.
func valueFor(t *testing.T, f *pflag.Flag) string {
	t.Helper()
	if v, ok := suiteFlagValues[f.Name]; ok {
		return v
	}
	switch f.Value.Type() {
	case "bool":
		if f.DefValue == "true" {
			return "false"
		}
		return "true"
	case "int", "int64", "uint64":
		if f.DefValue == "3" {
			return "4"
		}
		return "3"
	case "duration":
		return "7s"
	}
	t.Fatalf("--%s (%s) is new: give it a value in suiteFlagValues", f.Name, f.Value.Type())
	return ""
}

// TestSuiteFlagsAreCarriedOrRefused walks every flag `ioprobe suite`
// takes and, for each named suite, sets that flag alone: either the plan
// differs from the suite's without it (the flag reached the points or the
// run settings) or the command refuses it in one line, exit 2. Never
// neither: --verify, --fsync, --fdatasync, --sync, --batch-* and --line
// were once taken by a named suite and silently ignored.
func TestSuiteFlagsAreCarriedOrRefused(t *testing.T) {
	g := &globalOptions{stdout: io.Discard, stderr: io.Discard, engines: newEngines()}
	cmd := newSuiteCommand(g)
	// Every flag of the command is one AddFlags registers: the walk
	// below plans through AddFlags, so a flag registered elsewhere would
	// escape it.
	own := pflag.NewFlagSet("suite", pflag.ContinueOnError)
	(&suiteOptions{}).AddFlags(own)
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		names = append(names, f.Name)
		require.NotNil(t, own.Lookup(f.Name), "--%s is not registered by suiteOptions.AddFlags", f.Name)
	})
	for name := range suiteOwnFlags {
		require.NotNil(t, cmd.Flags().Lookup(name), "suiteOwnFlags names --%s, which suite does not take", name)
	}
	require.Contains(t, names, "verify") // the walk sees run's flags

	var ignored []string // every flag a named suite takes and ignores, all listed at once
	for _, suite := range workload.SuiteNames() {
		if strings.EqualFold(suite, workload.CustomSuite) {
			continue
		}
		base, err := planSuite(t, suite)
		require.NoError(t, err, suite)
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if _, ok := suiteOwnFlags[f.Name]; ok {
				return
			}
			arg := fmt.Sprintf("--%s=%s", f.Name, valueFor(t, f))
			got, err := planSuite(t, suite, arg)
			if err != nil {
				require.Equal(t, ExitBadInput, exitCode(err), "suite %s %s: %v", suite, arg, err)
				require.NotContains(t, err.Error(), "\n", "suite %s %s: one line", suite, arg)
				require.Contains(t, err.Error(), "--"+f.Name, "suite %s %s: the refusal names the flag", suite, arg)
				return
			}
			if f.Name == "read-only" && !writes(base.Units) {
				// Carried, and nothing to drop: every point reads.
				require.Equal(t, base, got)
				return
			}
			if reflect.DeepEqual(base, got) {
				ignored = append(ignored, "suite "+suite+" "+arg)
			}
		})
	}
	require.Empty(t, ignored, "taken, yet neither carried to the plan nor refused")
}

// writes reports whether any unit writes.
func writes(units []suiterun.Unit) bool {
	for _, u := range units {
		if u.Point.WritesData() {
			return true
		}
	}
	return false
}

// TestSuiteCarriesRunParametersToEveryPoint: what a named suite takes of
// run's flags, each point has, and the dry run says so; --batch-submit 0
// is each point's own queue depth, cycled or not.
func TestSuiteCarriesRunParametersToEveryPoint(t *testing.T) {
	p, err := planSuite(t, "characterize", "--verify", "--fdatasync=8", "--sync=dsync", "--batch-submit=0", "--batch-complete=2", "--cycle=qd=1,4", "--max-errors=0")
	require.NoError(t, err)
	require.Equal(t, 4*5*2, len(p.Units)) // 4 patterns × 5 sizes (4k–64k) × 2 queue depths
	for _, u := range p.Units {
		for _, s := range u.Point.Specs {
			require.True(t, s.Verify, u.Label())
			require.Equal(t, 8, s.Fdatasync, u.Label())
			require.Equal(t, workload.SyncDsync, s.Sync, u.Label())
			require.Equal(t, workload.SubmitFio, s.SubmitMode, u.Label())
			require.Equal(t, s.QueueDepth, s.SubmitBatch, u.Label())
			require.Equal(t, 2, s.CompleteMin, u.Label())
		}
	}
	require.Zero(t, p.Settings.MaxErrors)

	var out strings.Builder
	g := &globalOptions{stdout: &out, stderr: io.Discard, engines: newEngines()}
	code := execute(t.Context(), g, []string{"suite", "business", "--target", t.TempDir() + "/x.dat", "--size", "16MiB",
		"--verify", "--fsync", "4", "--dry-run"})
	require.Equal(t, 0, code, out.String())
	specs := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "   ") && strings.Contains(line, "% read") {
			specs++
			require.Contains(t, line, ", fsync every 4 writes")
			require.Contains(t, line, ", verify")
		}
	}
	require.Positive(t, specs, out.String())
	require.Contains(t, out.String(), "plan checked")

	g = &globalOptions{stdout: &out, stderr: io.Discard, engines: newEngines()}
	out.Reset()
	code = execute(t.Context(), g, []string{"suite", "characterize", "--line", "4k,share=100,read=67,random=100", "--dry-run"})
	require.Equal(t, ExitBadInput, code)
	require.Empty(t, out.String())
}
