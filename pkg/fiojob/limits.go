package fiojob

import (
	"errors"
	"fmt"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// limits are fio's options that end or pace a job: io_size/io_limit,
// number_ios, loops, startdelay and thinktime with its companions.
// ioprobe runs for a time (time_based is required), so they are accepted
// where, under time_based, fio gives them a meaning ioprobe runs
// exactly, and refused elsewhere.
type limits struct {
	ioSize, numberIOs    int64
	ioSizeAt, numberAt   option
	loops                int
	loopsAt              option
	startDelay           time.Duration
	startAt              option
	think, thinkSpin     time.Duration
	thinkIOTime          time.Duration
	thinkBlocks          int
	thinkType            string
	thinkAt, thinkSpinAt option
	thinkIOTimeAt        option
	thinkBlocksAt        option
	thinkTypeAt          option
}

// applyLimit reads one of the options limits holds; handled says whether
// o was one.
func (j *job) applyLimit(o option) (handled bool, err error) {
	timeIn := func(isSeconds bool) (time.Duration, error) {
		v, err := value(o)
		if err != nil {
			return 0, err
		}
		us, note, err := parseTimeUs(v, isSeconds)
		if note != "" {
			j.note(o, "%s, and so does ioprobe", note)
		}
		return usToDuration(us), err
	}
	count := func() (int64, error) {
		n, err := j.num(o)
		if err == nil && n.percent {
			err = errors.New("an amount in % of size: give it in bytes")
		}
		return n.val, err
	}
	switch o.key {
	case "io_size", "io_limit":
		j.ioSize, err = count()
		j.ioSizeAt = o
	case "number_ios":
		j.numberIOs, err = count()
		j.numberAt = o
	case "loops":
		err = j.setInt(o, &j.loops, &j.loopsAt, 1, 1<<31-1)
	case "startdelay":
		if parts, ok := splitDirections(o.value); ok[1] && parts[1] != parts[0] {
			return true, fmt.Errorf("%q: a range: fio starts each clone at a random time in it; ioprobe starts a point's workers together (give one value)", o.value)
		}
		j.startDelay, err = timeIn(true)
		j.startAt = o
	case "thinktime":
		j.think, err = timeIn(false)
		j.thinkAt = o
	case "thinktime_spin":
		j.thinkSpin, err = timeIn(false)
		j.thinkSpinAt = o
	case "thinktime_iotime":
		j.thinkIOTime, err = timeIn(true)
		j.thinkIOTimeAt = o
	case "thinktime_blocks":
		err = j.setInt(o, &j.thinkBlocks, &j.thinkBlocksAt, 1, workload.MaxBurst)
	case "thinktime_blocks_type":
		switch v := o.value; v {
		case "complete", "issue":
			j.thinkType = v
		default:
			err = fmt.Errorf("%q: fio's values are complete and issue", o.value)
		}
		j.thinkTypeAt = o
	default:
		return false, nil
	}
	return true, err
}

// applyLimits gives spec what the limits mean under time_based (checked
// before): fio then restarts its pass over the region every io_size bytes
// or number_ios I/Os (backend.c: do_io stops at io_bytes_exceeded,
// keep_running says yes, clear_io_state puts every file back at its
// start) and loops changes nothing. perFile is the region of each file
// (0: the whole file, unknown here).
func (j *job) applyLimits(spec *workload.Spec, perFile int64, fail func(option, string) error) error {
	// A restarted pass changes only the random sequence of a job whose
	// every I/O is at a random offset; a sequential stream would start
	// again at the region's start before reaching its end.
	restarts := func(at option, what string, every int64) error {
		if spec.RandomPct == 100 {
			return nil
		}
		if what == "io_size" && perFile > 0 && every%perFile == 0 && len(spec.BlockSizes) == 1 && perFile%spec.BlockSizes[0].Bytes == 0 {
			return nil // the restart falls where the sequential pass wraps anyway
		}
		return fail(at, fmt.Sprintf("with time_based fio starts its sequential pass again at the region's start every %d %s; ioprobe's sequential I/O runs on to the region's end (use size for the region instead)", every, map[string]string{"io_size": "bytes", "number_ios": "I/Os"}[what]))
	}
	if j.ioSize > 0 {
		if err := restarts(j.ioSizeAt, "io_size", j.ioSize); err != nil {
			return err
		}
	}
	if j.numberIOs > 0 {
		if err := restarts(j.numberAt, "number_ios", j.numberIOs); err != nil {
			return err
		}
	}
	return j.thinkTime(spec, fail)
}

// thinkTime maps fio's thinktime onto the access specification's line as
// Iometer's transfer delay and burst length, where the two mean the same:
// fio stalls thinktime after every thinktime_blocks completed I/Os, with
// one I/O in flight at a time; Iometer waits delay before each burst of
// burst I/Os. With more I/Os in flight, several sizes, a spin or an
// I/O-time trigger they differ, and the job is refused.
func (j *job) thinkTime(spec *workload.Spec, fail func(option, string) error) error {
	if j.think == 0 {
		for _, o := range []option{j.thinkSpinAt, j.thinkIOTimeAt, j.thinkBlocksAt, j.thinkTypeAt} {
			if o.key != "" {
				return fail(o, "only has a meaning with thinktime")
			}
		}
		return nil
	}
	switch {
	case j.thinkSpin > 0:
		return fail(j.thinkSpinAt, "fio spins the CPU for part of the think time; ioprobe's delay sleeps")
	case j.thinkIOTime > 0:
		return fail(j.thinkIOTimeAt, "a think time after a period of I/O: ioprobe's delay comes after a number of I/Os")
	case j.think%time.Millisecond != 0:
		return fail(j.thinkAt, fmt.Sprintf("%v: ioprobe's delay between bursts is in whole milliseconds (Iometer's unit)", j.think))
	case spec.QueueDepth > 1:
		return fail(j.thinkAt, fmt.Sprintf("with iodepth=%d: fio stalls after thinktime_blocks completions while others are in flight; ioprobe's delay matches it with one I/O in flight (iodepth=1 or a sync engine)", spec.QueueDepth))
	case len(spec.BlockSizes) > 1:
		return fail(j.thinkAt, "with several transfer sizes: fio counts the blocks of every size towards one stall, Iometer's burst is per line")
	case spec.RateIOPS > 0 || spec.RatedByDirection():
		return fail(j.thinkAt, "with a rate (rate, rate_iops): ioprobe paces by a rate or by delays, not both")
	case j.thinkType == "issue" && spec.Engine != "sync":
		return fail(j.thinkTypeAt, "issue: fio then stalls after issuing, not completing, thinktime_blocks I/Os; with one I/O in flight the same only for a sync engine")
	}
	ms := j.think / time.Millisecond
	if ms > workload.MaxDelayMs {
		return fail(j.thinkAt, fmt.Sprintf("at most %d ms", workload.MaxDelayMs))
	}
	lines := spec.Normalized()
	lines[0].Share, lines[0].DelayMs, lines[0].Burst = workload.TotalShare, int(ms), j.thinkBlocks
	spec.Lines, spec.BlockSizes, spec.ReadPct, spec.RandomPct, spec.Align = lines, nil, 0, 0, 0
	return nil
}
