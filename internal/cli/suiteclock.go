package cli

import (
	"fmt"
	"time"

	"github.com/ioprobe/ioprobe/internal/suiterun"
)

// suiteClock knows which run of how many is under way and estimates the
// time left from the planned ramp-up and run time of every run to come.
type suiteClock struct {
	total, started int
	remaining      time.Duration // planned time of the runs not yet started
	current        string
	start          time.Time
	planned        time.Duration
	now            func() time.Time
}

func newSuiteClock(units []suiterun.Unit, repeat int) *suiteClock {
	c := &suiteClock{total: len(units) * repeat, now: time.Now}
	for _, u := range units {
		c.remaining += time.Duration(repeat) * u.Planned()
	}
	return c
}

// begin marks the start of the next run.
func (c *suiteClock) begin(label string, planned time.Duration) {
	c.started++
	c.current, c.start, c.planned = label, c.now(), planned
	c.remaining -= planned
}

// prefix starts each progress line: "[3/20 random-write-16k on /dev/sdb,
// suite 12m5s left] ".
func (c *suiteClock) prefix() string {
	left := c.remaining + max(c.planned-c.now().Sub(c.start), 0)
	return fmt.Sprintf("[%d/%d %s, suite %s left] ", c.started, c.total, c.current, left.Round(time.Second))
}

// left is the planned time of the runs not yet started, once the current
// one is over.
func (c *suiteClock) left() time.Duration { return max(c.remaining, 0) }
