package result

// Job is one job of a point that ran several at once (a fio job file's
// jobs without stonewall between them, the business suite's mixed run),
// or the one job of a fio job file's point: its access specification and
// its own figures. Its counts, bytes and latency are its workers' own;
// its rates are the run's in proportion to its I/Os (its bytes for
// throughput), so that jobs add up to the run; its CPU is the process's
// in proportion to its I/Os (ioprobe measures its process's CPU, not each
// worker's). Device figures are the run's only.
type Job struct {
	Name     string   `json:"name"`
	Workload Workload `json:"workload"`
	// Fio is the job's fio options as written, for a job of a fio job
	// file (fio-json's "job options" and "global options").
	Fio *FioOptions `json:"fio,omitempty"`
	Summary
	// EndedAfterSeconds, when set, is when the job ended on its own, in
	// seconds from the measured window's start: its budget spent (size,
	// io_size, number_ios) or its own run time over, while other jobs of
	// the point ran on (fio ends each job on its own). Its
	// elapsed_seconds is then this, and its rates are its own counts over
	// it, as fio's runtime of the job; its CPU stays its share of the
	// run's. Absent: it ran to the window's end, and its rates are the
	// run's in proportion to its I/Os.
	EndedAfterSeconds float64    `json:"ended_after_seconds,omitempty"`
	Histogram         Histograms `json:"histogram"`
	IODepth           *Depth     `json:"iodepth,omitempty"`
	// Clones are the job's workers one by one (fio's job clones,
	// numjobs), for a job of a fio job file: fio reports each clone on
	// its own without group_reporting.
	Clones []Clone `json:"clones,omitempty"`
}

// Clone is one worker of a job: fio's job clone.
type Clone struct {
	Worker int `json:"worker"`
	Summary
	// EndedAfterSeconds: as Job's, for the clone on its own.
	EndedAfterSeconds float64    `json:"ended_after_seconds,omitempty"`
	Histogram         Histograms `json:"histogram"`
	IODepth           *Depth     `json:"iodepth,omitempty"`
}

// FioOptions are a fio job's options as the user wrote them: the job
// section's own and the file's [global] ones, in file order.
type FioOptions struct {
	Job    []FioOption `json:"job"`
	Global []FioOption `json:"global,omitempty"`
}

// FioOption is one option line: its key, its value as written, and Bare
// for a line without '=' (fio prints no value for those).
type FioOption struct {
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
	Bare  bool   `json:"bare,omitempty"`
}

// SetJobFigures derives each job's and clone's rates and CPU from its
// counts and the run's figures (which must be set): a job's share of the
// run's I/Os (of its bytes for throughput) of the run's rates and CPU.
func (s *Summary) SetJobFigures() {
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.Summary.shareOf(s, j.EndedAfterSeconds)
		for k := range j.Clones {
			j.Clones[k].Summary.shareOf(s, j.Clones[k].EndedAfterSeconds)
		}
	}
}

// shareOf sets s's window, rates and CPU as its share of run's; ended,
// when above 0, is its own end (EndedAfterSeconds): its window and its
// rates are then its own.
func (s *Summary) shareOf(run *Summary, ended float64) {
	s.ElapsedSeconds = run.ElapsedSeconds
	ops := div(float64(s.Ops), float64(run.Ops))
	bytes := div(float64(s.Bytes), float64(run.Bytes))
	s.IOPS = run.IOPS * ops
	s.ReadIOPS = run.IOPS * div(float64(s.ReadOps), float64(run.Ops))
	s.WriteIOPS = run.IOPS * div(float64(s.WriteOps), float64(run.Ops))
	s.ThroughputBytesPerSecond = run.ThroughputBytesPerSecond * bytes
	s.MBPerSecond = run.MBPerSecond * bytes
	if ended > 0 {
		s.ElapsedSeconds = ended
		s.SetRates()
	}
	c := &run.CPU
	s.CPU = DeriveCPU(CPUWork{Ops: s.Ops, IOPS: s.IOPS, MBPerSecond: s.MBPerSecond, ElapsedSeconds: s.ElapsedSeconds,
		BusyCores: c.HostBusyCores * ops, UtilizationPct: c.HostUtilizationPct * ops,
		BusyHz:      c.CyclesPerIO * float64(s.Ops) / max(s.ElapsedSeconds, 1e-300),
		ProcessUser: c.ProcessUserSeconds * ops, ProcessSystem: c.ProcessSystemSeconds * ops,
		ProcessCPU: (c.ProcessUserSeconds + c.ProcessSystemSeconds) * ops})
}

// mergeJobs adds b's jobs into a's, job by job and clone by clone (merged
// runs ran the same point: sameShape checks the groups): histograms and
// counts added. Figures are set afterwards (SetFromHistograms of each,
// then SetJobFigures).
func mergeJobs(a, b []Job) []Job {
	if a == nil {
		out := make([]Job, len(b))
		for i := range b {
			out[i] = b[i].clone()
		}
		return out
	}
	for i := range a {
		if i >= len(b) {
			break
		}
		x, y := &a[i], &b[i]
		x.Summary.addCounts(&y.Summary)
		x.Histogram.Add(y.Histogram)
		x.IODepth = addDepth(x.IODepth, y.IODepth)
		// Merged runs ran at once (a fleet) or one after the other: a
		// job's own end is no longer one window's; its rates are then
		// the merged run's share.
		x.EndedAfterSeconds = 0
		for k := range x.Clones {
			if k >= len(y.Clones) {
				break
			}
			xc, yc := &x.Clones[k], &y.Clones[k]
			xc.EndedAfterSeconds = 0
			xc.Summary.addCounts(&yc.Summary)
			xc.Histogram.Add(yc.Histogram)
			xc.IODepth = addDepth(xc.IODepth, yc.IODepth)
		}
	}
	return a
}

// clone copies a job deeply enough that merging into it leaves the
// original alone.
func (j Job) clone() Job {
	j.Histogram = j.Histogram.copy()
	if j.IODepth != nil {
		d := *j.IODepth
		j.IODepth = &d
	}
	j.Clones = append([]Clone(nil), j.Clones...)
	for k := range j.Clones {
		c := &j.Clones[k]
		c.Histogram = c.Histogram.copy()
		if c.IODepth != nil {
			d := *c.IODepth
			c.IODepth = &d
		}
	}
	return j
}

// copy returns histograms that share nothing with h.
func (h Histograms) copy() Histograms {
	out := Histograms{}
	cp := func(x *Histogram) *Histogram {
		if x == nil {
			return nil
		}
		y := NewHistogram()
		y.Merge(x)
		return y
	}
	out.Read, out.Write, out.Sync, out.Intended = cp(h.Read), cp(h.Write), cp(h.Sync), cp(h.Intended)
	return out
}

// addCounts adds the counts that histograms do not hold.
func (s *Summary) addCounts(o *Summary) {
	s.ReadBytes += o.ReadBytes
	s.WriteBytes += o.WriteBytes
	s.Errors += o.Errors
}

func addDepth(a, b *Depth) *Depth {
	if b == nil {
		return a
	}
	if a == nil {
		a = &Depth{}
	}
	a.Add(b)
	return a
}

// setJobHistograms recomputes each job's and clone's counts and
// latencies from its histograms.
func (s *Summary) setJobHistograms() {
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.Summary.SetFromHistograms(j.Histogram)
		for k := range j.Clones {
			c := &j.Clones[k]
			c.Summary.SetFromHistograms(c.Histogram)
		}
	}
}
