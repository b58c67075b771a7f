package check

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// WriteText writes a report for a terminal: what was measured, each
// stream's figures and verdict, what to look at next, and a last line
// "Check     NAME: PASS|FAIL|INCONCLUSIVE: …" — or, for a check that
// did not run to its end, "Check     NAME: interrupted|failed, no
// verdict".
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	where := r.Target.Resolved
	var on []string
	if r.Target.Filesystem != "" {
		on = append(on, r.Target.Filesystem)
	}
	if r.Target.Device != "" {
		on = append(on, "on "+r.Target.Device)
	}
	if len(on) > 0 {
		where += " (" + strings.Join(on, " ") + ")"
	}
	what := "the WAL and the backend at once"
	if !r.Settings.Backend {
		what = "the WAL alone"
	}
	pace := "closed loop"
	if r.Settings.Rate > 0 {
		pace = fmt.Sprintf("at most %g appends a second", r.Settings.Rate)
	}
	reps := ""
	if r.Settings.Repeat > 1 {
		reps = fmt.Sprintf(", %d repeats", r.Settings.Repeat)
	}
	fmt.Fprintf(&b, "Check     %s on %s: %gs%s, %s, %s\n", r.Check, where, r.Settings.DurationSeconds, reps, what, pace)
	for i, l := range report.StorageLines(r.Target.AsResultTarget()) {
		label := "Storage"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(&b, "%-9s %s\n", label, textsafe.Escape(l))
	}
	for _, s := range r.Streams {
		switch s.Name {
		case EtcdWAL.Stream:
			fmt.Fprintf(&b, "WAL       %d fdatasyncs: %s   (%s)\n", s.Samples, latencyLine(s.Samples, s.Latency), s.Metric)
			if s.WriteLatency != nil {
				fmt.Fprintf(&b, "          write(2) before each: %s\n", latencyLine(s.Samples, *s.WriteLatency))
			}
			fmt.Fprintf(&b, "          %d records of %d bytes, %d segment(s) of %d bytes (%s)\n",
				s.Records, r.Settings.FrameBytes, s.Segments, r.Settings.SegmentBytes, orDash(r.Settings.Preallocation))
		case EtcdBackend.Stream:
			fmt.Fprintf(&b, "Backend   %d commits: %s   (%s)\n", s.Samples, latencyLine(s.Samples, s.Latency), s.Metric)
			fmt.Fprintf(&b, "          %d pages written, %d fdatasyncs, a commit every %gs after the last\n",
				s.Pages, s.Fdatasyncs, r.Settings.BatchIntervalSeconds)
		}
	}
	if k := r.Kernel; k != nil {
		fmt.Fprintf(&b, "Kernel    %s: %.2f flushes and %.1f KiB written per fdatasync (%d flushes, %d fdatasync and fsync calls)\n",
			k.Device, k.FlushesPerFdatasync, k.WriteKiBPerFdatasync, k.Flushes, k.Fdatasyncs)
		if k.FlushDevice != "" {
			fmt.Fprintf(&b, "          flushes counted on the whole disk %s: a flush is the disk's request\n", k.FlushDevice)
		}
	}
	if o := r.HostOthers; o != nil {
		fmt.Fprintf(&b, "Others    %s\n", othersLine(o, r.Target.Device))
	}
	for _, s := range r.Streams {
		if len(s.RepeatFigures) > 1 {
			parts := make([]string, len(s.RepeatFigures))
			for i, f := range s.RepeatFigures {
				parts[i] = "none (timed nothing)"
				if f != nil {
					parts[i] = fmt.Sprintf("%.3f ms", *f*1e3)
				}
			}
			spread := ""
			if fs := s.measuredFigures(); len(fs) > 1 {
				spread = fmt.Sprintf(" (spread %.3f ms)", (slices.Max(fs)-slices.Min(fs))*1e3)
			}
			fmt.Fprintf(&b, "Repeats   %s p99: %s%s\n", s.Name, strings.Join(parts, ", "), spread)
		}
	}
	if r.Verdict != nil {
		for _, s := range r.Streams {
			if s.Verdict != nil {
				fmt.Fprintf(&b, "Verdict   %s: %s\n", s.Name, s.Verdict.Reason)
			}
		}
	}
	for _, l := range r.Left {
		fmt.Fprintf(&b, "Left      %s: no longer the file the check created (something else took its name)\n", l)
	}
	for _, n := range r.Next {
		fmt.Fprintf(&b, "Next      %s\n", n)
	}
	switch {
	case r.Verdict != nil:
		fmt.Fprintf(&b, "Check     %s: %s\n", r.Check, r.Verdict.Reason)
	case r.Status == result.StatusInterrupted:
		fmt.Fprintf(&b, "Check     %s: interrupted, no verdict\n", r.Check)
	default:
		fmt.Fprintf(&b, "Check     %s: failed, no verdict: %s\n", r.Check, r.Message)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// latencyLine is a stream's percentiles, or says there were none: no
// sample is no figure, not 0 ms.
func latencyLine(n uint64, l result.Latency) string {
	if n == 0 {
		return "none timed"
	}
	p := l.Percentiles
	return fmt.Sprintf("p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms",
		p["50"]*1e3, p["90"]*1e3, p["99"]*1e3, p["99.9"]*1e3, l.MaxSeconds*1e3)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// othersLine is what other processes did while the check measured, in
// figures: "0.12 of 2 CPUs (6.0% of the host's CPU); on vda 12 of the
// 3,456 I/Os and 0.05 of the 14.20 MB".
func othersLine(o *Others, dev string) string {
	s := fmt.Sprintf("%.2f of %d CPUs (%.1f%% of the host's CPU)", o.CPUFraction*float64(o.LogicalCPUs), o.LogicalCPUs, 100*o.CPUFraction)
	switch {
	case o.DeviceOps != nil && o.DeviceBytes != nil:
		s += fmt.Sprintf("; on %s %d of the %d I/Os and %.2f of the %.2f MB", dev, *o.DeviceOps, o.ServedOps, float64(*o.DeviceBytes)/1e6, float64(o.ServedBytes)/1e6)
	case o.DeviceUnknown != "":
		s += "; " + o.DeviceUnknown
	}
	return s
}
