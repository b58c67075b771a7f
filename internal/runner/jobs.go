package runner

import (
	"time"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// setJobs fills summary.jobs: for a run of several groups at once, or of
// a group whose workers are fio's job clones, each group's own figures
// (and each clone's), read from its workers' lanes, which count only
// while measuring. The run's summary must be complete: the jobs' rates
// and CPU are their share of it.
func (p *Plan) setJobs(res *result.Result, ws []*engine.Worker, ended []time.Time, t0 time.Time) {
	keep := len(p.Groups) > 1
	for _, g := range p.Groups {
		keep = keep || g.Clones
	}
	if !keep {
		return
	}
	// A group's workers share its *Spec (NewWorkers), and come in group
	// order.
	var specs []*workload.Spec
	var members [][]*engine.Worker
	endOf := map[*engine.Worker]float64{}
	window := res.Summary.ElapsedSeconds
	for i, w := range ws {
		if len(specs) == 0 || specs[len(specs)-1] != w.Spec {
			specs = append(specs, w.Spec)
			members = append(members, nil)
		}
		members[len(members)-1] = append(members[len(members)-1], w)
		if i < len(ended) && !ended[i].IsZero() && !t0.IsZero() {
			// Its own end, within the window (a budget spent in the
			// ramp-up ends at its start).
			endOf[w] = min(max(ended[i].Sub(t0).Seconds(), 0), window)
		}
	}
	s := &res.Summary
	for gi, group := range members {
		spec := specs[gi]
		j := result.Job{Name: spec.Name, Workload: res.Workload}
		if j.Name == "" {
			j.Name = spec.Describe()
		}
		if gi < len(res.Groups) {
			j.Workload = res.Groups[gi]
		}
		j.Workload.Name = j.Name
		j.Histogram = result.Histograms{Read: result.NewHistogram(), Write: result.NewHistogram()}
		// The job ended on its own when every worker of it did: at its
		// last one's end (fio's group runtime is its clones' longest).
		own := true
		for _, w := range group {
			c := cloneOf(w)
			if e, ok := endOf[w]; ok {
				c.EndedAfterSeconds = ownEnd(e)
				j.EndedAfterSeconds = max(j.EndedAfterSeconds, c.EndedAfterSeconds)
			} else {
				own = false
			}
			j.Histogram.Add(c.Histogram)
			j.ReadBytes += c.ReadBytes
			j.WriteBytes += c.WriteBytes
			j.Errors += c.Errors
			if c.IODepth != nil {
				if j.IODepth == nil {
					j.IODepth = &result.Depth{}
				}
				j.IODepth.Add(c.IODepth)
			}
			if gi < len(p.Groups) && p.Groups[gi].Clones {
				j.Clones = append(j.Clones, c)
			}
		}
		if !own {
			j.EndedAfterSeconds = 0
		}
		j.SetFromHistograms(j.Histogram)
		s.Jobs = append(s.Jobs, j)
	}
	s.SetJobFigures()
}

// cloneOf is one worker's own figures.
func cloneOf(w *engine.Worker) result.Clone {
	c := result.Clone{Worker: w.ID, Histogram: result.Histograms{Read: result.NewHistogram(), Write: result.NewHistogram()}}
	if w.Flushes() {
		c.Histogram.Sync = result.NewHistogram()
	}
	if w.Paced() {
		c.Histogram.Intended = result.NewHistogram()
	}
	for _, ln := range w.Lanes() {
		c.Histogram.Read.Merge(&ln.Read.Latency)
		c.Histogram.Write.Merge(&ln.Write.Latency)
		if c.Histogram.Sync != nil {
			c.Histogram.Sync.Merge(&ln.Sync.Latency)
		}
		if c.Histogram.Intended != nil {
			c.Histogram.Intended.Merge(ln.Read.Intended)
			c.Histogram.Intended.Merge(ln.Write.Intended)
		}
		c.ReadBytes += ln.Read.Bytes()
		c.WriteBytes += ln.Write.Bytes()
		for k := 0; k < engine.NumErrClasses; k++ {
			c.Errors += ln.Read.ErrorCount(k) + ln.Write.ErrorCount(k)
		}
	}
	var d result.Depth
	w.Depth.Add(&d)
	if d != (result.Depth{}) {
		c.IODepth = &d
	}
	c.SetFromHistograms(c.Histogram)
	return c
}

// ownEnd is a job's or clone's own end (seconds into the window) as the
// result says it: above 0, so that it reads as "ended on its own" (a
// job whose budget was spent in the ramp-up ran for no measured time;
// its figures are then over the shortest time the result can say).
func ownEnd(e float64) float64 { return max(e, 1e-9) }
