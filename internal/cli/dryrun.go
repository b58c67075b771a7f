package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// dryRunUsage is the --dry-run flag's help, the same for run and suite.
const dryRunUsage = "print the points, their access specifications and targets, check everything that can be checked without I/O, and exit (0: the plan is good, 2: it is not); nothing is created or written"

// dryRun prints the plan of units and checks it as a run would before
// its first I/O (runner.Check: input, engines, every target's safety
// rules), touching nothing. The error is the first refusal.
func dryRun(w io.Writer, title string, settings suiterun.Settings, units []suiterun.Unit) (suiterun.Unit, error) {
	// Names and paths come from job files, ICF files and the command
	// line: escaped, each in its place and whatever path they took.
	w = textsafe.NewWriter(w)
	fmt.Fprint(w, textsafe.Sprintf("%s: %d point(s), nothing run (--dry-run)\n", title, len(units)))
	for i, u := range units {
		fmt.Fprint(w, textsafe.Sprintf("%d. %s\n", i+1, u.Label()))
		for j, s := range u.Point.Specs {
			fmt.Fprintf(w, "   %s\n", describeSpec(s))
			if u.SpecTargets != nil {
				fmt.Fprint(w, textsafe.Sprintf("     on %s\n", strings.Join(u.SpecTargets[j], ", ")))
			}
		}
		fmt.Fprint(w, textsafe.Sprintf("   targets: %s\n", strings.Join(u.Targets, ", ")))
	}
	u, err := settings.Check(units)
	if err == nil {
		fmt.Fprintln(w, "plan checked: every point is accepted by its targets")
	}
	return u, err
}

// describeSpec is one access specification on one line.
func describeSpec(s workload.Spec) string {
	var b strings.Builder
	if s.Name != "" {
		b.WriteString(textsafe.Escape(s.Name) + ": ")
	}
	if len(s.Lines) > 0 {
		fmt.Fprintf(&b, "%d line(s), qd %d, workers %d, ramp %s, run %s, engine %s", len(s.Lines), s.QueueDepth, s.Workers, s.Ramp, s.Duration, s.Engine)
	} else {
		fmt.Fprintf(&b, "bs %s, %d%% read, %d%% random, qd %d, workers %d, ramp %s, run %s, engine %s",
			workload.FormatBlockSizes(s.BlockSizes), s.ReadPct, s.RandomPct, s.QueueDepth, s.Workers, s.Ramp, s.Duration, s.Engine)
	}
	if s.Budgeted() {
		b.WriteString(", " + describeBudget(s))
	}
	if s.RegionBytes > 0 {
		b.WriteString(", region " + workload.FormatSize(s.RegionBytes))
	} else {
		b.WriteString(", region: the whole target")
	}
	if s.Align > 0 {
		b.WriteString(", align " + workload.FormatSize(s.Align))
	}
	if s.RateIOPS > 0 {
		fmt.Fprintf(&b, ", rate %d IOPS", s.RateIOPS)
	}
	if n, datasync := s.FlushEvery(); n > 0 {
		flush := "fsync"
		if datasync {
			flush = "fdatasync"
		}
		fmt.Fprintf(&b, ", %s every %d writes", flush, n)
	}
	if s.Sync != workload.SyncNone {
		b.WriteString(", sync " + s.Sync)
	}
	if s.Verify {
		b.WriteString(", verify")
	}
	if s.RatedByDirection() {
		rate := func(bps int64) string {
			if bps == 0 {
				return "unlimited"
			}
			return workload.FormatSize(bps) + "/s"
		}
		fmt.Fprintf(&b, ", rate reads %s, writes %s", rate(s.RateReadBPS), rate(s.RateWriteBPS))
		if s.RateProcess != workload.RateLinear {
			b.WriteString(" " + s.RateProcess)
		}
	}
	if s.RandomMap {
		b.WriteString(", random map")
	}
	if s.RandomDistribution != "" {
		b.WriteString(", random offsets " + s.RandomDistribution)
	}
	if s.RandomGenerator != "" {
		b.WriteString(", every block once per pass (" + s.RandomGenerator + ")")
	}
	if s.Buffer != nil {
		b.WriteString(", fio's buffers (" + s.Buffer.String() + ")")
	}
	if s.Buffered {
		b.WriteString(", buffered")
		if s.KeepCache {
			b.WriteString(" (cache kept)")
		}
	}
	if s.FsyncOnClose {
		b.WriteString(", fsync on close")
	}
	if s.Offset > 0 || s.OffsetIncrement > 0 {
		fmt.Fprintf(&b, ", worker k's region from %s + k × %s", workload.FormatSize(s.Offset), workload.FormatSize(s.OffsetIncrement))
		if s.OffsetAlign > 0 {
			fmt.Fprintf(&b, " (up to a multiple of %s)", workload.FormatSize(s.OffsetAlign))
		}
	}
	if s.CloneFiles {
		b.WriteString(", each worker its own share of the targets")
	}
	if s.FilesInTurn > 0 {
		fmt.Fprintf(&b, ", targets in turn (%d I/O(s) each, qd over all)", s.FilesInTurn)
	}
	for i, l := range s.Lines {
		fmt.Fprintf(&b, "\n     line %d: %s", i+1, workload.FormatLine(l))
	}
	return b.String()
}

// describeBudget says after what each worker stops, and the cap.
func describeBudget(s workload.Spec) string {
	what := "the region"
	if s.IOBytes > 0 {
		what = workload.FormatSize(s.IOBytes)
	}
	if s.IOCount > 0 {
		what = fmt.Sprintf("%d I/Os or %s", s.IOCount, what)
	}
	limit := "uncapped"
	if s.Duration < workload.MaxDuration {
		limit = "capped at run"
	}
	return fmt.Sprintf("each worker stops after %s × %d loop(s) (%s)", what, s.Loops, limit)
}
