package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// measure runs plan on this host, showing its progress on pr (nil: no
// terminal, no progress line).
func measure(ctx context.Context, plan runner.Plan, pr *progress) (*result.Result, error) {
	if pr != nil {
		plan.Observers = append(plan.Observers, pr)
		plan.Progress = pr.preparing
		if note := plan.Note; note != nil {
			// A note on a line of its own, not after the progress line.
			plan.Note = func(s string) { pr.clear(); note(s) }
		}
	}
	return runner.Run(ctx, plan)
}

// progress is the one-line live display on a terminal's stderr.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	last  time.Time
	width int
	// prefix, when set, starts every line (a suite's "[3/20 …]").
	prefix func() string
}

func newProgress(w io.Writer) *progress { return &progress{w: w} }

func (p *progress) line(s string) {
	if p.prefix != nil {
		s = p.prefix() + s
	}
	s = textsafe.Escape(s) // it names jobs and points: their \r would forge the line
	p.mu.Lock()
	defer p.mu.Unlock()
	pad := ""
	if n := p.width - len(s); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(p.w, "\r%s%s", s, pad)
	p.width = len(s)
}

func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
		p.width = 0
	}
}

// preparing reports the filling of a new file target, at most 4 times a second.
func (p *progress) preparing(path string, done, total int64) {
	if time.Since(p.last) < 250*time.Millisecond && done < total {
		return
	}
	p.last = time.Now()
	p.line(fmt.Sprintf("preparing %s: %d%% of %s", path, done*100/max(total, 1), humanBytes(total)))
}

// Observe implements runner.Observer.
func (p *progress) Observe(s *runner.Snapshot) {
	iv := s.Interval
	switch s.Phase {
	case runner.PhaseRamp:
		p.line(fmt.Sprintf("ramp-up %s: %s IOPS (not counted)", s.Ramp, group(iv.IOPS)))
	case runner.PhaseMeasure:
		left := (s.Duration - s.Elapsed).Round(time.Second)
		p.line(fmt.Sprintf("%s left: %s IOPS  %.1f MB/s  mean %s  p99 %s  errors %d",
			left, group(iv.IOPS), iv.BytesPerSecond/1e6, ms(iv.LatencyMeanSeconds), ms(iv.LatencyP99Seconds), iv.Errors))
	case runner.PhaseDone:
		p.clear()
	}
}

func ms(sec float64) string {
	if sec < 1e-3 {
		return fmt.Sprintf("%.0fµs", sec*1e6)
	}
	return fmt.Sprintf("%.2fms", sec*1e3)
}

func group(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%dB", n)
}
