package result

import (
	"errors"
	"fmt"
	"time"
)

// FleetSchema names the document `ioprobe fleet run` writes.
const FleetSchema = "ioprobe.fleet/v1"

// RunState is where a run posted to a daemon's run API is: the daemon
// reports it, the fleet controller follows it, and a fleet document keeps
// each host's last one (RunUnreachable when the controller lost the host).
// One closed set on every side.
type RunState string

// Run states, in the order a run goes through them.
const (
	RunAccepted  RunState = "accepted"  // holds its device, not started yet
	RunPreparing RunState = "preparing" // opening, creating or filling its target
	RunWaiting   RunState = "waiting"   // prepared, waiting for start_at
	RunRunning   RunState = "running"   // ramp-up or measurement
	RunDone      RunState = "done"
	RunFailed    RunState = "failed"  // could not start (error says why); nothing measured
	RunStopped   RunState = "stopped" // DELETE, shutdown or reload: result partial, or none before its start
	// RunUnreachable: the fleet controller lost the host during the run
	// (no daemon says it).
	RunUnreachable RunState = "unreachable"
)

// RunStates lists every run state, in order.
func RunStates() []RunState {
	return []RunState{RunAccepted, RunPreparing, RunWaiting, RunRunning, RunDone, RunFailed, RunStopped, RunUnreachable}
}

// Terminal says whether a run in state s has ended.
// Answered: a state a daemon answers (every one but RunUnreachable,
// which only the controller gives).
func (s RunState) Answered() bool {
	switch s {
	case RunAccepted, RunPreparing, RunWaiting, RunRunning, RunDone, RunFailed, RunStopped:
		return true
	}
	return false
}

func (s RunState) Terminal() bool {
	return s == RunDone || s == RunFailed || s == RunStopped || s == RunUnreachable
}

// Fleet is one workload run on several hosts at once through their
// daemons (`ioprobe fleet run`): each host's own result with its identity,
// and the hosts' results merged exactly through the histograms.
type Fleet struct {
	Schema    string    `json:"schema"`
	Version   string    `json:"version"`
	StartedAt time.Time `json:"started_at"` // when the controller began
	// StartAt is the common instant every host was asked to start at.
	StartAt time.Time `json:"start_at,omitzero"`
	// Target is the name of the target configured on every daemon.
	Target string      `json:"target"`
	Hosts  []FleetHost `json:"hosts"`
	// Merged is every measured host's result merged (nil when no host
	// measured anything).
	Merged *Result `json:"merged"`
	// Partial says that some host did not complete: FailedHosts names
	// their addresses.
	Partial     bool     `json:"partial"`
	FailedHosts []string `json:"failed_hosts"`
}

// FleetHost is one host of a fleet run.
type FleetHost struct {
	// Address is host:port as the controller reached it.
	Address string `json:"address"`
	// Identity is the host as its daemon describes itself (hostname,
	// kernel, CPUs): what tells two pods behind one Service apart.
	Identity Host   `json:"identity"`
	RunID    string `json:"run_id,omitempty"`
	// ClockOffsetSeconds is the host's clock minus the controller's as
	// the pre-check measured it, exact within ClockUncertaintySeconds
	// (half the round trip).
	ClockOffsetSeconds      float64  `json:"clock_offset_seconds"`
	ClockUncertaintySeconds float64  `json:"clock_uncertainty_seconds"`
	State                   RunState `json:"state"`
	Error                   string   `json:"error,omitempty"`
	// Result is the host's own ioprobe.result/v1 (absent when it measured
	// nothing).
	Result *Result `json:"result,omitempty"`
}

// Failed says that the host did not complete its run.
func (h FleetHost) Failed() bool { return h.State != RunDone }

// Name is the host's hostname, or its address when it never answered
// with one.
func (h FleetHost) Name() string {
	if h.Identity.Hostname != "" {
		return h.Identity.Hostname
	}
	return h.Address
}

// MergeFleet merges the hosts' results (those that measured something)
// and returns the merged result with the hosts attached, plus the
// addresses of those that did not complete. With no result at all, the
// merged result is nil. A host's answer comes from outside: one whose
// result cannot be merged with the others' (another workload than most
// hosts ran, a run another host answered too, counts that wrap once
// added, no histogram) is made a failed host with the reason, in hosts,
// and the others are merged without it. One host must not throw away
// every host's measurement.
func MergeFleet(hosts []FleetHost) (*Result, []string, error) {
	excludeOddShapes(hosts)
	var m *Result
	for {
		var rs []*Result
		for _, h := range hosts {
			if h.Result != nil {
				rs = append(rs, h.Result)
			}
		}
		if len(rs) == 0 {
			break
		}
		var err error
		if m, err = Merge(rs...); err == nil {
			break
		}
		var (
			dup *DuplicateRunError
			sum *MergeSumError
		)
		switch {
		case errors.As(err, &dup):
			exclude(hosts, dup.Second, fmt.Sprintf("its result holds run %s, which %s's result holds too: a run is counted once", dup.Run.RunID, dup.First.Host.Hostname))
		case errors.As(err, &sum):
			exclude(hosts, sum.Result, "its result does not add up with the other hosts': "+sum.Err.Error())
		default:
			return nil, failedOf(hosts), err
		}
	}
	failed := failedOf(hosts)
	if m == nil {
		return nil, failed, nil
	}
	m.Hosts = hosts
	if len(failed) > 0 {
		msg := fmt.Sprintf("partial: %d of %d hosts did not complete (%s)", len(failed), len(hosts), joinUnique(failed, ", "))
		m.Message = joinUnique([]string{msg, m.Message}, "; ")
	}
	return m, failed, nil
}

// failedOf is the addresses of the hosts that did not complete.
func failedOf(hosts []FleetHost) []string {
	failed := []string{}
	for _, h := range hosts {
		if h.Failed() {
			failed = append(failed, h.Address)
		}
	}
	return failed
}

// exclude makes the host whose result r is a failed host, for why.
func exclude(hosts []FleetHost, r *Result, why string) {
	for i := range hosts {
		if hosts[i].Result == r {
			hosts[i].State, hosts[i].Error, hosts[i].Result = RunFailed, why, nil
			return
		}
	}
}

// excludeOddShapes excludes the hosts whose result cannot be merged with
// those of most hosts: no histogram for the ops it counts, or another
// workload (the one most hosts' results share is the fleet's; the first
// of the most common, when several are as common).
func excludeOddShapes(hosts []FleetHost) {
	var rs []*Result
	for _, h := range hosts {
		if h.Result == nil {
			continue
		}
		if !h.Result.Histogram.Covers(&h.Result.Summary) {
			exclude(hosts, h.Result, "its result has no latency histogram for the I/Os it counts: it cannot be merged exactly")
			continue
		}
		rs = append(rs, h.Result)
	}
	var ref *Result
	best := 0
	for _, a := range rs {
		n := 0
		for _, b := range rs {
			if sameShape(a, b) == nil {
				n++
			}
		}
		if n > best {
			ref, best = a, n
		}
	}
	for _, r := range rs {
		if err := sameShape(ref, r); err != nil {
			exclude(hosts, r, "its result cannot be merged with the other hosts': "+err.Error())
		}
	}
}

// MergedOf returns the fleet's merged result with its hosts attached, the
// form reports read (nil when nothing was measured).
func (f *Fleet) MergedOf() *Result {
	if f.Merged == nil {
		return nil
	}
	m := *f.Merged
	m.Hosts = f.Hosts
	return &m
}

// FleetPartial says which hosts a fleet point holds and which it lacks:
// held are the hosts whose results were merged into r, failed those that
// did not complete (a stopped host's partial result is both). A point
// with failed hosts is partial: its figures are those of the held hosts
// only, though it ran on len(r.Hosts).
func (r *Result) FleetPartial() (held, failed []FleetHost) {
	for _, h := range r.Hosts {
		if h.Result != nil {
			held = append(held, h)
		}
		if h.Failed() {
			failed = append(failed, h)
		}
	}
	return held, failed
}
