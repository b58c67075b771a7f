package fiojob

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Directions of fio's per-direction options.
const (
	ddirRead = iota
	ddirWrite
	ddirTrim
)

// job is the state of one job while its options are applied: fio's
// thread_options for what ioprobe runs, each value with the option line
// that set it (refusals name that line).
type job struct {
	name        string // fio's name= (its report's name)
	sectionName string // the section: fio names the job's file after it
	at          pos    // the section header
	rw          string
	rwAt        option
	rwmix       [2]int // % of reads, % of writes (fio's rwmix[])
	rwmixAt     option
	percRand    [3]int
	percRandAt  option
	bs          [3]int64
	bsAt        option
	minBS       [3]int64 // set by bsrange and bssplit (fio's min_bs, max_bs)
	maxBS       [3]int64
	rangeAt     option // the option that last set min/max: bsrange or bssplit
	split       [3][]splitEntry
	splitAt     option
	iodepth     int
	iodepthAt   option
	numjobs     int
	numjobsAt   option
	nrfiles     int
	nrfilesAt   option
	size        int64
	sizePct     int // size=N% (0: none)
	sizeAt      option
	fileSize    [2]int64 // filesize low, high
	fileSizeAt  option
	filenames   []string
	filenameAt  option
	directory   string
	directoryAt option
	format      string
	formatAt    option
	runtime     time.Duration
	runtimeAt   option
	ramp        time.Duration
	timeBased   bool
	direct      bool
	directAt    option
	invalidate  bool
	fsyncClose  bool
	engine      workload.EngineName
	engineName  string
	engineAt    option
	rate        [3]int64
	rateIOPS    [3]int64
	rateAt      option
	process     string
	processAt   option
	barrier     bool
	seed        uint64
	norandommap bool
	kbBase      int64
	fsync       int
	fdatasync   int
	fsyncAt     option
	fdatasyncAt option
	sync        string
	verify      string
	verifyAt    option
	doVerify    bool
	offsetAt    option
	// fio's offset and offset_increment: bytes, or (pct above 0) a
	// share of the file's size.
	offset, offsetIncr       int64
	offsetPct, offsetIncrPct int
	offsetIncrAt             option
	// fio's file_service_type: I/Os to each file before the next
	// (roundrobin:N; 1 by default), or the refused type's name.
	serviceNr   int
	serviceType string
	serviceAt   option
	ba          [3]int64
	baAt        option
	notes       []string
	last        map[string]option // the last line of each option, for refusals
	// fio's iodepth_batch_submit, iodepth_batch_complete_min and
	// iodepth_batch_complete_max as given (-1: not given).
	batchSubmit, completeMin, completeMax int
	// ioscheduler is fio's ioscheduler: the I/O scheduler fio switches
	// the device of each of the job's files to before the job.
	ioscheduler   string
	ioschedulerAt option
	limits
	random
	buffers
}

// splitEntry is one size of a bssplit and its percent (-1: none given).
type splitEntry struct {
	bs   int64
	perc int
}

func newJob(s *section) *job {
	return &job{
		name: s.name, sectionName: s.name, at: s.at, rw: "read", rwmix: [2]int{50, 50}, percRand: [3]int{100, 100, 100},
		bs: [3]int64{4096, 4096, 4096}, iodepth: 1, numjobs: 1, nrfiles: 1,
		engine: workload.EngineSync, engineName: "psync", kbBase: 1024, invalidate: true, doVerify: true, serviceNr: 1,
		batchSubmit: -1, completeMin: -1, completeMax: -1,
	}
}

// note records something the user must know about how fio reads o.
func (j *job) note(o option, format string, args ...any) {
	n := fmt.Sprintf("%s (line %d): ", o.key, o.at.line) + fmt.Sprintf(format, args...)
	if o.written != o.value {
		// Notes reach the result: a value from the environment is not
		// quoted in them.
		n = fmt.Sprintf("%s (line %d): fio reads %s (as written) with a note this value's words would show; it comes from the environment and is not recorded", o.key, o.at.line, strings.TrimSpace(o.written))
	}
	for _, have := range j.notes {
		if have == n {
			return
		}
	}
	j.notes = append(j.notes, n)
}

// accepted are fio options that change only fio's naming, reporting,
// logging, process model, timing or random sequence, not the I/O ioprobe
// issues: accepted (and echoed in fio-json's job options), with a note
// where the user could expect something ioprobe does not do. The value
// is that note ("" for none).
var accepted = map[string]string{
	"description": "", "group_reporting": "", "new_group": "", "thread": "", "randrepeat": "",
	"use_os_rand": "", "gtod_reduce": "", "disable_lat": "", "disable_clat": "",
	"disable_slat": "", "disable_bw_measurement": "", "disable_bw": "", "clat_percentiles": "", "lat_percentiles": "",
	"slat_percentiles": "", "percentile_list": "", "significant_figures": "", "clocksource": "", "gtod_cpu": "",
	"per_job_logs": "", "log_avg_msec": "", "log_hist_msec": "", "log_hist_coarseness": "", "log_max_value": "",
	"log_offset": "", "log_prio": "", "log_compression": "", "log_store_compressed": "", "log_unix_epoch": "",
	"log_alternate_epoch": "", "log_alternate_epoch_clock_id": "", "disk_util": "", "fadvise_hint": "",
	"unlink": "", "unlink_each_loop": "", "allrandrepeat": "",
	"stats": "", "steadystate_check_interval": "", "write_bw_log": "not written: ioprobe keeps its samples in its own result (intervals, histograms)",
	"write_lat_log":  "not written: ioprobe keeps its samples in its own result (intervals, histograms)",
	"write_iops_log": "not written: ioprobe keeps its samples in its own result (intervals, histograms)",
	"write_hist_log": "not written: ioprobe keeps its samples in its own result (intervals, histograms)",
	"exitall":        "", "exitall_on_error": "", "allow_mounted_write": "", "overwrite": "", "create_on_open": "",
	"create_serialize": "", "create_fsync": "", "create_only": "", "pre_read": "", "fallocate": "",
	"cpus_allowed": "not applied: ioprobe does not pin its workers", "cpumask": "not applied: ioprobe does not pin its workers",
	"cpus_allowed_policy": "", "nice": "not applied: ioprobe runs at its own priority", "prio": "not applied: ioprobe runs at its own priority",
	"prioclass": "not applied: ioprobe runs at its own priority", "iomem": "", "mem": "", "hugepage-size": "",
	"iomem_align": "", "mem_align": "", "lockmem": "", "unit_base": "", "continue_on_error": "", "max_latency": "",
	"ignore_error": "", "error_dump": "", "unified_rw_reporting": "", "kb_base": "", "name": "",
	"numa_cpu_nodes": "not applied: ioprobe does not pin its workers", "numa_mem_policy": "not applied: ioprobe does not pin its memory",
	"allow_file_create": "", "exit_what": "",
	// A profile's option without profile= (fio registers profile options
	// globally: "threads" is tiobench's).
	"threads": "fio's tiobench profile option: no effect without profile=tiobench",
	// Options of fio's verification: they change nothing unless verify=
	// is set, which is refused where it is.
	"verify_fatal": "", "verify_dump": "", "verify_backlog": "", "verify_backlog_batch": "", "verify_interval": "",
	"verify_offset": "", "verify_pattern": "", "verify_async": "", "verify_async_cpus": "", "verify_state_save": "",
	"verify_state_load": "", "verify_write_sequence": "", "verify_header_seed": "", "experimental_verify": "",
}

// apply sets one option on the job with fio's meaning, or says why
// ioprobe cannot run it.
func (j *job) apply(o option) error {
	if j.last == nil {
		j.last = map[string]option{}
	}
	j.last[o.key] = o
	if low := strings.ToLower(o.key); low != o.key {
		_, known := handlers[low]
		if _, ok := accepted[low]; ok || known {
			return errors.New("fio's option names are lower case (fio: \"Bad option\")")
		}
		return errors.New("not an option ioprobe can run with fio's meaning")
	}
	if h, ok := handlers[o.key]; ok {
		return h(j, o)
	}
	if n, ok := accepted[o.key]; ok {
		switch o.key {
		case "kb_base":
			return j.setKBBase(o)
		case "name":
			if o.bare || strings.TrimSpace(o.value) == "" {
				return errors.New("needs a value")
			}
			// fio's report name; the file is named after the section. A
			// job takes its section's name before its own options, so
			// [global]'s name= renames no job.
			if !o.global {
				j.name = o.written // as written: ${VAR} stays out of the result
			}
		}
		if n != "" {
			j.note(o, "%s", n)
		}
		return nil
	}
	if handled, err := j.applyLimit(o); handled {
		return err
	}
	return errors.New("not an option ioprobe can run with fio's meaning")
}

// handlers are the options that shape the I/O.
var handlers = map[string]func(*job, option) error{
	"rw":                (*job).setRW,
	"readwrite":         (*job).setRW,
	"rwmixread":         func(j *job, o option) error { return j.setRWMix(o, ddirRead) },
	"rwmixwrite":        func(j *job, o option) error { return j.setRWMix(o, ddirWrite) },
	"percentage_random": (*job).setPercRand,
	"bs":                (*job).setBS,
	"blocksize":         (*job).setBS,
	"bssplit":           (*job).setSplit,
	"bsrange":           (*job).setRange,
	"blocksize_range":   (*job).setRange,
	"iodepth":           func(j *job, o option) error { return j.setInt(o, &j.iodepth, &j.iodepthAt, 1, workload.MaxQueueDepth) },
	// fio's submission (see job.submission).
	"iodepth_batch":              func(j *job, o option) error { return j.setInt(o, &j.batchSubmit, nil, 0, workload.MaxQueueDepth) },
	"iodepth_batch_submit":       func(j *job, o option) error { return j.setInt(o, &j.batchSubmit, nil, 0, workload.MaxQueueDepth) },
	"iodepth_batch_complete_min": func(j *job, o option) error { return j.setInt(o, &j.completeMin, nil, 0, workload.MaxQueueDepth) },
	"iodepth_batch_complete":     func(j *job, o option) error { return j.setInt(o, &j.completeMin, nil, 0, workload.MaxQueueDepth) },
	"iodepth_batch_complete_max": func(j *job, o option) error { return j.setInt(o, &j.completeMax, nil, 0, workload.MaxQueueDepth) },
	"numjobs":                    func(j *job, o option) error { return j.setInt(o, &j.numjobs, &j.numjobsAt, 1, workload.MaxWorkers) },
	"nrfiles":                    func(j *job, o option) error { return j.setInt(o, &j.nrfiles, &j.nrfilesAt, 1, 1<<20) },
	"nr_files":                   func(j *job, o option) error { return j.setInt(o, &j.nrfiles, &j.nrfilesAt, 1, 1<<20) },
	"size":                       (*job).setSize,
	"filesize":                   (*job).setFileSize,
	"offset":                     (*job).setOffset,
	"fileoffset":                 (*job).setOffset,
	"offset_increment":           (*job).setOffsetIncrement,
	"file_service_type":          (*job).setFileService,
	"filename":                   (*job).setFilename,
	"directory":                  (*job).setDirectory,
	"filename_format":            (*job).setFormat,
	"runtime":                    func(j *job, o option) error { return j.setTime(o, &j.runtime, &j.runtimeAt) },
	"timeout":                    func(j *job, o option) error { return j.setTime(o, &j.runtime, &j.runtimeAt) },
	"ramp_time":                  func(j *job, o option) error { var at option; return j.setTime(o, &j.ramp, &at) },
	"time_based":                 func(j *job, o option) error { return setFlag(o, &j.timeBased) },
	"direct":                     func(j *job, o option) error { j.directAt = o; return setBool(o, &j.direct) },
	"buffered":                   (*job).setBuffered,
	"invalidate":                 func(j *job, o option) error { return setBool(o, &j.invalidate) },
	"fsync_on_close":             func(j *job, o option) error { return j.setFsyncClose(o) },
	"end_fsync":                  func(j *job, o option) error { return j.setFsyncClose(o) },
	"ioengine":                   (*job).setEngine,
	"rate":                       func(j *job, o option) error { return j.setRate(o, &j.rate, true) },
	"rate_iops":                  func(j *job, o option) error { return j.setRate(o, &j.rateIOPS, false) },
	"rate_process":               (*job).setProcess,
	"stonewall":                  func(j *job, o option) error { return setFlag(o, &j.barrier) },
	"wait_for_previous":          func(j *job, o option) error { return setFlag(o, &j.barrier) },
	"norandommap":                func(j *job, o option) error { return setFlag(o, &j.norandommap) },
	"randseed":                   (*job).setSeed,
	"fsync": func(j *job, o option) error {
		j.fsyncAt = o
		return j.setInt(o, &j.fsync, nil, 0, workload.MaxFlushEvery)
	},
	"fdatasync": func(j *job, o option) error {
		j.fdatasyncAt = o
		return j.setInt(o, &j.fdatasync, nil, 0, workload.MaxFlushEvery)
	},
	"sync":        (*job).setSync,
	"verify":      func(j *job, o option) error { j.verify, j.verifyAt = strings.TrimSpace(o.value), o; return nil },
	"do_verify":   func(j *job, o option) error { return setBool(o, &j.doVerify) },
	"ioscheduler": (*job).setIOScheduler,
	"ba":          (*job).setBlockAlign,
	"blockalign":  (*job).setBlockAlign,
}

func (j *job) setBlockAlign(o option) error {
	return j.perDirection(o, func(d int, n number) error {
		if n.percent || n.val < 1 {
			return errors.New("must be at least 1")
		}
		j.ba[d] = n.val
		return nil
	}, &j.baAt)
}

// value is the option's value as fio's number parsers get it: the first
// of its per-direction parts.
func value(o option) (string, error) {
	if o.bare {
		return "", errors.New("needs a value")
	}
	parts, _ := splitDirections(o.value)
	if parts[0] == "" && o.value != "" {
		return "", fmt.Errorf("%q: fio splits a value at ',', ':' or '-' and finds nothing before it (a negative number is not one here)", o.value)
	}
	return parts[0], nil
}

// num reads a single number of o with fio's rules, noting what fio's
// reading ignored.
func (j *job) num(o option) (number, error) {
	v, err := value(o)
	if err != nil {
		return number{}, err
	}
	n, err := parseNumber(v, j.kbBase)
	if err != nil {
		return number{}, err
	}
	if n.ignored != "" {
		j.note(o, "fio reads %q as %d (it ignores %q), and so does ioprobe", strings.TrimSpace(o.value), n.val, n.ignored)
	}
	return n, nil
}

func (j *job) setInt(o option, dst *int, at *option, lo, hi int64) error {
	n, err := j.num(o)
	if err != nil {
		return err
	}
	if n.percent {
		return errors.New("not a percentage")
	}
	if n.val < lo || n.val > hi {
		return fmt.Errorf("must be between %d and %d", lo, hi)
	}
	*dst = int(n.val)
	if at != nil {
		*at = o
	}
	return nil
}

// setFlag is fio's FIO_OPT_STR_SET: bare is 1, else an integer.
func setFlag(o option, dst *bool) error {
	if o.bare {
		*dst = true
		return nil
	}
	v, err := checkInt(o.value)
	if err != nil {
		return err
	}
	*dst = v != 0
	return nil
}

// setBool is fio's FIO_OPT_BOOL: a value is required, 0 or 1.
func setBool(o option, dst *bool) error {
	if o.bare {
		return errors.New("needs a value (fio: \"requires an argument\")")
	}
	v, err := checkInt(o.value)
	if err != nil {
		return err
	}
	if v < 0 || v > 1 {
		return errors.New("want 0 or 1")
	}
	*dst = v == 1
	return nil
}

func (j *job) setKBBase(o option) error {
	switch strings.TrimRight(o.value, " \t") {
	case "1024":
		j.kbBase = 1024
	case "1000":
		j.kbBase = 1000
	default:
		return errors.New("want 1000 or 1024")
	}
	return nil
}

func (j *job) setBuffered(o option) error {
	var b bool
	if err := setBool(o, &b); err != nil {
		return err
	}
	j.direct, j.directAt = !b, o
	return nil
}

func (j *job) setFsyncClose(o option) error {
	var b bool
	if err := setBool(o, &b); err != nil {
		return err
	}
	j.fsyncClose = j.fsyncClose || b
	return nil
}

func (j *job) setTime(o option, dst *time.Duration, at *option) error {
	v, err := value(o)
	if err != nil {
		return err
	}
	us, note, err := parseTimeUs(v, true)
	if err != nil {
		return err
	}
	if note != "" {
		j.note(o, "%s, and so does ioprobe", note)
	}
	*dst, *at = usToDuration(us), o
	return nil
}

func (j *job) setSeed(o option) error {
	n, err := j.num(o)
	if err != nil {
		return err
	}
	j.seed = uint64(n.val)
	return nil
}

// setRW reads rw=: fio's names, matched as fio matches them (case and
// all, up to a ':'), with an optional :N that is a no-op only (":0"
// after a sequential pattern, ":1" after a random one).
func (j *job) setRW(o option) error {
	if o.bare || o.value == "" {
		return errors.New("needs a value (an unset ${VAR} is empty, as in fio)")
	}
	v, mod, hasMod := strings.Cut(o.value, ":")
	switch v {
	case "read", "randread", "write", "randwrite", "rw", "readwrite", "randrw":
	default:
		return fmt.Errorf("%q: ioprobe runs read, write, randread, randwrite, rw/readwrite and randrw (fio's names, lower case)", o.value)
	}
	j.rw, j.rwAt = v, o
	if v == "readwrite" {
		j.rw = "rw"
	}
	if hasMod {
		if strings.HasPrefix(strings.TrimSpace(mod), "-") {
			return fmt.Errorf(":%s: fio then reads backwards, that far before each I/O's end; ioprobe's sequential I/O goes forward", mod)
		}
		n, err := parseNumber(mod, j.kbBase)
		random := strings.HasPrefix(v, "rand")
		switch {
		case err != nil:
			return fmt.Errorf(":%s: %v", mod, err)
		case random && n.val > 1:
			return fmt.Errorf(":%d: fio then makes %d sequential I/Os per random offset; ioprobe's %% random has no runs of that length", n.val, n.val)
		case !random && n.val > 0:
			return fmt.Errorf(":%d: fio then skips %d bytes after each I/O; ioprobe's sequential I/O has no holes", n.val, n.val)
		}
	}
	return nil
}

// setRWMix is rwmixread and rwmixwrite: each sets both shares.
func (j *job) setRWMix(o option, d int) error {
	var v int
	if err := j.setInt(o, &v, &j.rwmixAt, 0, 100); err != nil {
		return err
	}
	j.rwmix[d], j.rwmix[d^1] = v, 100-v
	return nil
}

func (j *job) setPercRand(o option) error {
	return j.perDirection(o, func(d int, n number) error {
		if n.percent || n.val < 0 || n.val > 100 {
			return errors.New("must be between 0 and 100")
		}
		j.percRand[d] = int(n.val)
		return nil
	}, &j.percRandAt)
}

func (j *job) setBS(o option) error {
	return j.perDirection(o, func(d int, n number) error {
		if n.percent || n.val < 1 {
			return errors.New("must be at least 1")
		}
		j.bs[d] = n.val
		return nil
	}, &j.bsAt)
}

// perDirection applies fio's per-direction number (read,write,trim) to
// set; a part fio cannot read leaves its direction as it was, and the
// option fails only when no part could be read.
func (j *job) perDirection(o option, set func(d int, n number) error, at *option) error {
	if o.bare {
		return errors.New("needs a value")
	}
	parts, ok := splitDirections(o.value)
	var firstErr error
	any := false
	for d := range 3 {
		if !ok[d] {
			continue
		}
		n, err := parseNumber(parts[d], j.kbBase)
		if err == nil {
			err = set(d, n)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%q: %v", parts[d], err)
			}
			continue
		}
		if n.ignored != "" {
			j.note(o, "fio reads %q as %d (it ignores %q), and so does ioprobe", parts[d], n.val, n.ignored)
		}
		any = true
	}
	if !any {
		return firstErr
	}
	*at = o
	return nil
}

// setRate is rate= (bytes per second) and rate_iops= per direction; 0
// leaves a direction unlimited.
func (j *job) setRate(o option, dst *[3]int64, bytes bool) error {
	return j.perDirection(o, func(d int, n number) error {
		if n.percent {
			return errors.New("not a percentage")
		}
		if !bytes && n.val > 1<<31-1 {
			return errors.New("too large")
		}
		dst[d] = n.val
		return nil
	}, &j.rateAt)
}

func (j *job) setProcess(o option) error {
	switch strings.TrimRight(o.value, " \t") {
	case "linear":
		j.process = workload.RateLinear
	case "poisson":
		j.process = workload.RatePoisson
	default:
		return fmt.Errorf("%q: fio's values are linear and poisson", o.value)
	}
	j.processAt = o
	return nil
}

// setSync reads sync=: fio's none/0, sync/1 (O_SYNC) and dsync (O_DSYNC).
func (j *job) setSync(o option) error {
	switch o.value {
	case "none", "0":
		j.sync = workload.SyncNone
	case "sync", "1":
		j.sync = workload.SyncSync
	case "dsync":
		j.sync = workload.SyncDsync
	case "":
		return errors.New("needs a value")
	default:
		return fmt.Errorf("%q: fio's values are none (0), sync (1) and dsync", o.value)
	}
	return nil
}

// setEngine maps fio's ioengine to ioprobe's engine.
func (j *job) setEngine(o option) error {
	switch v := o.value; v {
	case "sync", "psync", "vsync", "pvsync", "pvsync2":
		j.engine, j.engineName = workload.EngineSync, v
	case "io_uring", "libaio":
		j.engine, j.engineName = workload.EngineURing, v
	case "posixaio":
		// glibc's POSIX AIO: aio_read/aio_write handed to its helper
		// threads, iodepth of them outstanding, buffered or direct alike
		// (unlike libaio, which runs a buffered I/O within io_submit).
		j.engine, j.engineName = workload.EngineURing, v
		j.note(o, "fio's posixaio (glibc's aio_read/aio_write, iodepth of them in flight) runs on ioprobe's io_uring engine at the same iodepth, as libaio does")
	default:
		return fmt.Errorf("%q: ioprobe runs the sync family (sync, psync, vsync, pvsync, pvsync2), io_uring, libaio and posixaio", v)
	}
	j.engineAt = o
	return nil
}

// setIOScheduler reads ioscheduler=: a scheduler's name as the kernel lists
// it in /sys/block/DEV/queue/scheduler (fio writes it there as given).
func (j *job) setIOScheduler(o option) error {
	v := strings.TrimSpace(o.value)
	if o.bare || v == "" {
		return errors.New("needs a value (a scheduler's name: mq-deadline, bfq, kyber, none)")
	}
	if len(v) > 64 || strings.ContainsAny(v, "[] \t/") {
		return fmt.Errorf("%q: not a scheduler's name as the kernel lists them (mq-deadline, bfq, kyber, none)", v)
	}
	j.ioscheduler, j.ioschedulerAt = v, o
	return nil
}
