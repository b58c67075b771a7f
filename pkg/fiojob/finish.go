package fiojob

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// finish turns the job's options into its access specification and file,
// with fio's meaning, or refuses naming the option.
func (j *job) finish(o Options, fail func(option, string) error) (workload.Spec, []string, error) {
	header := func(key string) option { return option{key: key, at: j.at} }
	spec := workload.Spec{Name: j.name, QueueDepth: j.iodepth, Workers: j.numjobs, Ramp: j.ramp, Duration: j.runtime, Seed: j.seed,
		// fio keeps a sequential position per direction (io_u.c,
		// last_pos[ddir]): a sequential read follows the job's previous
		// read on the file, a write its previous write.
		SequentialStreams: workload.StreamsDirection}
	// Direction: fio's rwmix[] for a mix.
	var dirs []int
	switch j.rw {
	case "read", "randread":
		spec.ReadPct, dirs = 100, []int{ddirRead}
	case "write", "randwrite":
		spec.ReadPct, dirs = 0, []int{ddirWrite}
	default:
		spec.ReadPct = j.rwmix[ddirRead]
		switch spec.ReadPct {
		case 100:
			dirs = []int{ddirRead}
		case 0:
			dirs = []int{ddirWrite}
		default:
			dirs = []int{ddirRead, ddirWrite}
		}
	}
	random := strings.HasPrefix(j.rw, "rand")
	if random {
		// percentage_random, per direction; the random patterns only.
		spec.RandomPct = j.percRand[dirs[0]]
		for _, d := range dirs[1:] {
			if j.percRand[d] != spec.RandomPct {
				return spec, nil, fail(j.percRandAt, fmt.Sprintf("%d%% random reads, %d%% random writes: ioprobe has one %% random for reads and writes", j.percRand[ddirRead], j.percRand[ddirWrite]))
			}
		}
	}
	// Engine: fio's sync engines keep one I/O in flight whatever iodepth
	// says; libaio without O_DIRECT submits synchronously, so one too.
	spec.Engine = j.engine
	if j.engine == workload.EngineSync {
		spec.QueueDepth = 1
	} else if j.engineName == "libaio" && !j.direct && spec.QueueDepth > 1 {
		spec.Engine, spec.QueueDepth = workload.EngineSync, 1
		j.note(j.engineAt, "libaio without direct=1 runs each I/O within io_submit, one at a time (fio warns of it too): ioprobe runs the job with one I/O in flight")
	}
	j.submission(&spec)
	bs, err := j.blockSizes(dirs)
	if err != nil {
		return spec, nil, fail(j.sizeOption(), err.Error())
	}
	spec.BlockSizes = bs
	if err := j.blockAlign(&spec, dirs, random, fail); err != nil {
		return spec, nil, err
	}
	// fio's random map: on for a random job unless norandommap (its
	// blockalign turns it off).
	spec.RandomMap = random && spec.RandomPct > 0 && !j.norandommap && spec.Align == 0
	if err := j.applyRandom(&spec, random, fail); err != nil {
		return spec, nil, err
	}
	if err := j.rates(&spec, dirs); err != nil {
		return spec, nil, err
	}
	if j.timeBased && j.runtime == 0 {
		return spec, nil, fail(header("runtime"), "missing: time_based without runtime runs until fio is killed")
	}
	if spec.WritesData() {
		if spec.Buffer, err = j.bufferContent(&spec, fail); err != nil {
			return spec, nil, err
		}
	}
	spec.Buffered, spec.KeepCache = !j.direct, !j.invalidate
	spec.FsyncOnClose = j.fsyncClose && spec.ReadPct < 100
	if j.verify != "" && j.verify != "0" && j.verify != "null" && j.verify != "none" {
		return spec, nil, fail(j.verifyAt, "fio's verification is not ioprobe's (use ioprobe's --verify)")
	}
	// The files, and each clone's region on them.
	targets, sizeBudget, err := j.place(&spec, o, fail)
	if err != nil {
		return spec, nil, err
	}
	spec.Sync = j.sync
	if err := j.flushes(&spec, fail); err != nil {
		return spec, nil, err
	}
	if j.timeBased {
		if err := j.applyLimits(&spec, spec.RegionBytes, fail); err != nil {
			return spec, nil, err
		}
	} else if err := j.budget(&spec, fail); err != nil {
		return spec, nil, err
	}
	if sizeBudget > 0 && spec.Budgeted() && spec.IOBytes == 0 {
		spec.IOBytes = sizeBudget
	}
	if j.startDelay > 0 {
		j.notes = append(j.notes, fmt.Sprintf("startdelay=%v: fio starts this job that much later; ioprobe starts it at once (every job it runs with waits alike, so nothing measured changes)", j.startDelay))
	}
	if err := spec.Validate(); err != nil {
		var fe *workload.FieldError
		at := header("")
		if errors.As(err, &fe) {
			at = j.optionOf(fe.Field)
		}
		return spec, nil, fail(at, err.Error())
	}
	return spec, targets, nil
}

// optionOf is the option line a spec field came from, for a refusal.
func (j *job) optionOf(field string) option {
	pick := func(opts ...option) option {
		for _, o := range opts {
			if o.key != "" {
				return o
			}
		}
		return option{key: field, at: j.at}
	}
	switch {
	case field == "--bs" || strings.HasPrefix(field, "--line"):
		return pick(j.sizeOption())
	case field == "--size":
		return pick(j.sizeAt, j.fileSizeAt)
	case field == "--qd":
		return pick(j.iodepthAt)
	case field == "--workers":
		return pick(j.numjobsAt)
	case field == "--duration":
		return pick(j.runtimeAt)
	case field == "rate" || field == "rate_process":
		return pick(j.rateAt, j.processAt)
	case field == "--align":
		return pick(j.baAt)
	case field == "random_map":
		return pick(j.rwAt, j.iodepthAt)
	case field == "random_distribution":
		return pick(j.distAt)
	case field == "random_generator":
		return pick(j.genAt)
	}
	return option{key: field, at: j.at}
}

// blockAlign is fio's blockalign: random offsets are multiples of it
// (sequential jobs ignore it); any value but the smallest size turns the
// random map off, as in fio.
func (j *job) blockAlign(spec *workload.Spec, dirs []int, random bool, fail func(option, string) error) error {
	if j.baAt.key == "" || !random {
		return nil
	}
	ba := j.ba[dirs[0]]
	for _, d := range dirs[1:] {
		if j.ba[d] != ba {
			return fail(j.baAt, "an alignment per direction: ioprobe's random offsets have one alignment")
		}
	}
	if ba > 0 && ba != spec.MinBlock() {
		spec.Align = ba
	}
	return nil
}

// rates sets fio's rate per direction: rate= in bytes per second, else
// rate_iops times the direction's smallest size (init.c: __setup_rate),
// per job clone; only the directions the job issues.
func (j *job) rates(spec *workload.Spec, dirs []int) error {
	var bps [2]int64
	for _, d := range dirs {
		switch {
		case j.rate[d] > 0:
			bps[d] = j.rate[d]
		case j.rateIOPS[d] > 0:
			bps[d] = j.rateIOPS[d] * spec.MinBlock()
		}
		bps[d] *= int64(spec.Workers)
	}
	spec.RateReadBPS, spec.RateWriteBPS = bps[ddirRead], bps[ddirWrite]
	if spec.RatedByDirection() {
		spec.RateProcess = j.process
	}
	return nil
}

// flushes sets the spec's periodic flush from fsync=/fdatasync=. fio
// counts a job's writes (io_issues[DDIR_WRITE]) and flushes after every
// Nth; a job that does not write never flushes.
func (j *job) flushes(spec *workload.Spec, fail func(option, string) error) error {
	if j.fsync > 0 && j.fdatasync > 0 {
		return fail(j.fdatasyncAt, fmt.Sprintf("with fsync=%d: fio then issues whichever falls due first; ioprobe flushes one way (give one of them)", j.fsync))
	}
	if (j.fsync == 0 && j.fdatasync == 0) || spec.ReadPct >= 100 {
		return nil
	}
	spec.Fsync, spec.Fdatasync = j.fsync, j.fdatasync
	return nil
}
