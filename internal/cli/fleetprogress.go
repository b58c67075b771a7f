package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ioprobe/ioprobe/internal/fleet"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// fleetProgress is `fleet run`'s line on a terminal's stderr, as `run`
// shows its own: each host's state and the time to the common start, then
// to the planned end.
type fleetProgress struct {
	*progress
	mu      sync.Mutex
	names   []string
	states  []result.RunState
	startAt time.Time
	end     time.Time
}

// watch is fleet.Controller.Watch.
func (p *fleetProgress) watch(startAt, end time.Time, i int, state result.RunState) {
	p.mu.Lock()
	p.startAt, p.end = startAt, end
	if i < len(p.states) {
		p.states[i] = state
	}
	s := p.text(time.Now())
	p.mu.Unlock()
	p.line(s)
}

func (p *fleetProgress) redraw() {
	p.mu.Lock()
	s := p.text(time.Now())
	p.mu.Unlock()
	p.line(s)
}

// text is the line at now. Up to four hosts are named with their state;
// more are counted by state.
func (p *fleetProgress) text(now time.Time) string {
	var when string
	switch {
	case p.startAt.IsZero():
		when = "starting"
	case now.Before(p.startAt):
		when = "start in " + p.startAt.Sub(now).Round(time.Second).String()
	case now.Before(p.end):
		when = p.end.Sub(now).Round(time.Second).String() + " left"
	default:
		when = "collecting the results"
	}
	var parts []string
	if len(p.names) <= 4 {
		for i, n := range p.names {
			parts = append(parts, n+" "+string(p.states[i]))
		}
	} else {
		count := map[result.RunState]int{}
		var order []result.RunState
		for _, s := range p.states {
			if count[s] == 0 {
				order = append(order, s)
			}
			count[s]++
		}
		for _, s := range fleetStateOrder {
			if count[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
				count[s] = 0
			}
		}
		for _, s := range order {
			if count[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
			}
		}
	}
	return "fleet: " + when + ": " + strings.Join(parts, ", ")
}

// statePosting is a host's state on the progress line until its daemon
// has accepted the run (it has none of its own yet).
const statePosting result.RunState = "posting"

// fleetStateOrder is the order a run's states come in.
var fleetStateOrder = []result.RunState{result.RunAccepted, result.RunPreparing, result.RunWaiting, result.RunRunning,
	result.RunDone, result.RunStopped, result.RunFailed, result.RunUnreachable}

// runWithProgress is the controller's Run, with the progress line on a
// terminal's stderr (nothing otherwise, as `run`).
func (s *fleetSetup) runWithProgress(ctx context.Context, g *globalOptions, clients []*fleet.Client, req fleet.RunRequest) (time.Time, []result.FleetHost, error) {
	if !g.stderrTTY {
		return s.ctl.Run(ctx, clients, req)
	}
	p := &fleetProgress{progress: newProgress(g.terminal())}
	for _, c := range clients {
		p.names = append(p.names, c.Address)
		p.states = append(p.states, statePosting)
	}
	ctl := *s.ctl
	ctl.Watch = p.watch
	ctl.Log = func(format string, args ...any) {
		p.clear()
		fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: fleet: "+format+"\n", args...))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.redraw()
			}
		}
	}()
	startAt, hosts, err := ctl.Run(ctx, clients, req)
	close(done)
	wg.Wait()
	p.clear()
	return startAt, hosts, err
}
