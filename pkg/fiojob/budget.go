package fiojob

import (
	"fmt"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// budget maps a job without time_based onto ioprobe's stop-after budget,
// as fio runs it (backend.c: thread_main runs do_io loops times; do_io
// stops once io_size bytes, by default size, or number_ios I/Os were
// issued; runtime, when given, ends the job first): each worker (fio's
// job clone) issues loops × number_ios I/Os or loops × io_size bytes,
// whichever comes first, its ramp_time I/O included, as fio counts it.
// runtime becomes the cap; without one the run is uncapped (the budget
// is always finite: io_size defaults to the region).
func (j *job) budget(spec *workload.Spec, fail func(option, string) error) error {
	spec.Loops = max(j.loops, 1)
	spec.IOBytes, spec.IOCount = j.ioSize, j.numberIOs
	if j.runtime == 0 {
		spec.Duration = workload.MaxDuration
	}
	// fio starts every loop at the region's start; ioprobe's sequential
	// stream runs on and wraps at the region's end. The two agree only
	// when each loop ends where the stream wraps.
	if spec.Loops > 1 && spec.RandomPct < 100 {
		region := j.size // the job's size over all its files (0: unknown here)
		switch {
		case spec.ReadPct > 0 && spec.ReadPct < 100:
			return fail(j.loopsAt, fmt.Sprintf("%d with sequential reads and writes: fio starts both streams at the region's start again each loop, each having covered only its share of it; ioprobe's streams run on", spec.Loops))
		case j.numberIOs > 0:
			return fail(j.numberAt, fmt.Sprintf("with loops=%d and sequential I/O: fio starts each loop's %d I/Os at the region's start again; ioprobe's sequential stream runs on (give the whole pass as number_ios, or loops=1)", spec.Loops, j.numberIOs))
		case j.ioSize > 0 && (region == 0 || j.ioSize%region != 0):
			return fail(j.ioSizeAt, fmt.Sprintf("with loops=%d and sequential I/O: fio starts each loop's %d bytes at the region's start again; ioprobe's sequential stream runs on (make io_size a multiple of size, or loops=1)", spec.Loops, j.ioSize))
		}
	}
	return j.thinkTime(spec, fail)
}
