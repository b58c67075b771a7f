package fiojob

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Options say how to read a job file.
type Options struct {
	// Section runs only this job section (fio's --section); "" all.
	Section string
	// Targets replace every job's filename/directory (--target).
	Targets []string
	// Env looks up ${VAR}; nil: every variable is unset.
	Env func(string) (string, bool)
	// Include reads an include file by its path (relative ones are
	// joined to the including file's directory); nil refuses includes.
	Include func(name string) ([]byte, error)
}

// Job is one job section as ioprobe runs it.
type Job struct {
	Name    string
	Spec    workload.Spec
	Targets []string
	// Notes say where ioprobe's run differs from fio's in a way the user
	// must know (fio's buffered default run with O_DIRECT).
	Notes []string
	// StartDelay is fio's startdelay: every job of a point has the same.
	StartDelay time.Duration
	at         pos
}

// Point is jobs that fio runs at once: one access specification each, on
// the same targets, for the same time.
type Point struct {
	Name    string
	Jobs    []Job
	Targets []string
}

// Specs are the point's access specifications, one per job.
func (p Point) Specs() []workload.Spec {
	out := make([]workload.Spec, len(p.Jobs))
	for i, j := range p.Jobs {
		out[i] = j.Spec
	}
	return out
}

// Parse reads the job file name (its bytes data) into points, in the
// order fio would run them.
func Parse(name string, data []byte, o Options) ([]Point, error) {
	l := &lexer{env: o.Env, include: o.Include}
	if err := l.file(name, data, 0, false); err != nil {
		return nil, err
	}
	var (
		global  []option
		points  []Point
		found   bool
		sawJobs bool
	)
	for _, s := range l.sections {
		if strings.EqualFold(s.name, "global") {
			global = append(global, s.opts...)
			continue
		}
		sawJobs = true
		if o.Section != "" && s.name != o.Section {
			continue
		}
		found = true
		opts := append(append([]option{}, global...), s.opts...)
		j, barrier, err := resolve(s, opts, o.Targets)
		if err != nil {
			return nil, err
		}
		if barrier || len(points) == 0 {
			points = append(points, Point{Name: j.Name, Targets: j.Targets})
		}
		p := &points[len(points)-1]
		if len(p.Jobs) > 0 {
			if err := sameRun(p.Jobs[0], j, p.Targets); err != nil {
				return nil, err
			}
			p.Name += "+" + j.Name
		}
		p.Jobs = append(p.Jobs, j)
	}
	switch {
	case !sawJobs:
		return nil, &Error{File: name, Reason: "no job section (only [global])"}
	case !found:
		return nil, &Error{File: name, Reason: fmt.Sprintf("no job section [%s]", o.Section)}
	}
	return points, nil
}

// sameRun checks that a job fio would run at once with first can run as
// another group of workers of the same ioprobe run.
func sameRun(first, j Job, targets []string) error {
	e := &Error{File: j.at.file, Line: j.at.line, Section: j.Name}
	switch {
	case strings.Join(j.Targets, ":") != strings.Join(targets, ":"):
		e.Reason = fmt.Sprintf("runs at once with [%s] on other files (%s, not %s): ioprobe runs jobs at once only on the same targets (add stonewall, or give --target)",
			first.Name, strings.Join(j.Targets, ":"), strings.Join(targets, ":"))
	case j.Spec.Duration != first.Spec.Duration || j.Spec.Ramp != first.Spec.Ramp:
		e.Reason = fmt.Sprintf("runs at once with [%s] for another runtime or ramp_time: ioprobe runs jobs at once for one time (add stonewall)", first.Name)
	case j.Spec.Loops != first.Spec.Loops || j.Spec.IOBytes != first.Spec.IOBytes || j.Spec.IOCount != first.Spec.IOCount:
		e.Reason = fmt.Sprintf("runs at once with [%s] with another io_size, number_ios, loops or time_based: fio ends each job on its own, ioprobe measures jobs run at once over one window (add stonewall)", first.Name)
	case j.StartDelay != first.StartDelay:
		e.Reason = fmt.Sprintf("runs at once with [%s] with another startdelay (%v, not %v): ioprobe starts a run's workers together (add stonewall)", first.Name, j.StartDelay, first.StartDelay)
	case j.Spec.RegionBytes != first.Spec.RegionBytes:
		e.Reason = fmt.Sprintf("runs at once with [%s] with another size on the same files: ioprobe has one region per target (add stonewall)", first.Name)
	default:
		return nil
	}
	return e
}

// job is the state of one job while its options are applied.
type job struct {
	name                       string
	rw                         string
	rwAt                       option
	readPct                    int
	randomPct                  int
	explicitRandom             bool
	bs, bssplit, bsrange       string
	bsAt, bssplitAt, bsrangeAt option
	iodepth, numjobs           int
	size                       int64
	filename, directory        string
	runtime, ramp              time.Duration
	timeBased, direct          bool
	engine                     string
	rateIOPS                   int
	barrier                    bool
	seed                       uint64
	norandommap                bool
	kbBase                     int64
	fsync, fdatasync           int
	fsyncAt, fdatasyncAt       option
	sync                       string
	limits
}

// ignored are fio options that change only the random sequence, fio's
// process model or its reporting: accepted, with no effect on what ioprobe
// measures.
var ignored = map[string]string{
	"description":      "",
	"group_reporting":  "",
	"new_group":        "",
	"thread":           "",
	"randrepeat":       "",
	"random_generator": "",
}

// resolve applies a job's options (the globals before it, then its own)
// and returns the job and whether it waits for the jobs before it.
func resolve(s *section, opts []option, targets []string) (Job, bool, error) {
	j := &job{name: s.name, rw: "read", readPct: 50, iodepth: 1, numjobs: 1, engine: "psync", kbBase: 1024}
	fail := func(o option, reason string) error {
		return &Error{File: o.at.file, Line: o.at.line, Section: s.name, Option: o.key, Reason: reason}
	}
	// kb_base first: it changes how every size before it reads.
	for _, o := range opts {
		if o.key == "kb_base" {
			switch o.value {
			case "1024":
				j.kbBase = 1024
			case "1000":
				j.kbBase = 1000
			default:
				return Job{}, false, fail(o, "want 1000 or 1024")
			}
		}
	}
	for _, o := range opts {
		if err := j.apply(o); err != nil {
			return Job{}, false, fail(o, err.Error())
		}
	}
	return j.finish(s, targets, fail)
}

func (j *job) apply(o option) error {
	if _, ok := ignored[o.key]; ok || o.key == "kb_base" {
		return nil
	}
	need := func() error {
		if o.bare || o.value == "" {
			return errors.New("needs a value")
		}
		return nil
	}
	num := func(min, max int) (int, error) {
		if err := need(); err != nil {
			return 0, err
		}
		n, err := parseInt(o.value, j.kbBase)
		if err != nil {
			return 0, err
		}
		if n < int64(min) || n > int64(max) {
			return 0, fmt.Errorf("must be between %d and %d", min, max)
		}
		return int(n), nil
	}
	var err error
	switch o.key {
	case "name":
		if err = need(); err == nil {
			j.name = o.value
		}
	case "rw", "readwrite":
		err = j.setRW(o)
		j.rwAt = o
	case "rwmixread":
		j.readPct, err = num(0, 100)
	case "rwmixwrite":
		var w int
		w, err = num(0, 100)
		j.readPct = 100 - w
	case "percentage_random":
		if strings.Contains(o.value, ",") {
			return errors.New("a percentage per direction: ioprobe has one % random for reads and writes")
		}
		j.randomPct, err = num(0, 100)
		j.explicitRandom = true
	case "bs", "blocksize":
		j.bs, j.bsAt = o.value, o
		err = need()
	case "bssplit":
		j.bssplit, j.bssplitAt = o.value, o
		err = need()
	case "bsrange", "blocksize_range":
		j.bsrange, j.bsrangeAt = o.value, o
		err = need()
	case "iodepth":
		j.iodepth, err = num(1, workload.MaxQueueDepth)
	case "numjobs":
		j.numjobs, err = num(1, workload.MaxWorkers)
	case "size":
		if strings.HasSuffix(o.value, "%") {
			return errors.New("a size in % of the file: give it in bytes")
		}
		if err = need(); err == nil {
			j.size, err = parseInt(o.value, j.kbBase)
		}
	case "offset":
		var n int64
		if err = need(); err == nil {
			if n, err = parseInt(o.value, j.kbBase); err == nil && n != 0 {
				err = errors.New("ioprobe's access region starts at the target's offset 0")
			}
		}
	case "filename":
		j.filename = o.value
		err = need()
	case "directory":
		j.directory = o.value
		err = need()
	case "runtime", "timeout":
		if err = need(); err == nil {
			j.runtime, err = parseTime(o.value)
		}
	case "ramp_time":
		if err = need(); err == nil {
			j.ramp, err = parseTime(o.value)
		}
	case "time_based":
		j.timeBased, err = parseBool(o)
	case "direct":
		j.direct, err = parseBool(o)
	case "buffered":
		var b bool
		b, err = parseBool(o)
		j.direct = !b
	case "ioengine":
		err = j.setEngine(o.value)
	case "rate_iops":
		if strings.Contains(o.value, ",") {
			return errors.New("a rate per direction: ioprobe caps reads and writes together")
		}
		j.rateIOPS, err = num(1, 1<<30)
	case "stonewall", "wait_for_previous":
		j.barrier, err = parseBool(o)
	case "norandommap":
		j.norandommap, err = parseBool(o)
	case "randseed":
		var n int64
		if err = need(); err == nil {
			if n, err = parseInt(o.value, j.kbBase); err == nil {
				j.seed = uint64(n)
			}
		}
	case "fsync":
		j.fsync, err = num(0, workload.MaxFlushEvery)
		j.fsyncAt = o
	case "fdatasync":
		j.fdatasync, err = num(0, workload.MaxFlushEvery)
		j.fdatasyncAt = o
	case "sync":
		err = j.setSync(o)
	case "verify":
		if o.value != "0" && o.value != "null" {
			return errors.New("fio's verification is not ioprobe's (use ioprobe's --verify)")
		}
	default:
		if handled, err := j.applyLimit(o, need, num); handled {
			return err
		}
		return errors.New("not an option ioprobe can run with fio's meaning")
	}
	return err
}

// setRW reads rw=: read, write, randread, randwrite, rw/readwrite, randrw,
// each with an optional :N that is a no-op only (":0" after a sequential
// pattern, ":1" after a random one).
func (j *job) setRW(o option) error {
	v, mod, hasMod := strings.Cut(strings.ToLower(o.value), ":")
	switch v {
	case "read", "randread", "write", "randwrite", "rw", "readwrite", "randrw":
	case "":
		return errors.New("needs a value")
	default:
		return fmt.Errorf("%q: ioprobe runs read, write, randread, randwrite, rw/readwrite and randrw", o.value)
	}
	j.rw = v
	if hasMod {
		n, err := parseInt(mod, j.kbBase)
		random := strings.HasPrefix(v, "rand")
		switch {
		case err != nil:
			return fmt.Errorf(":%s: %v", mod, err)
		case random && n > 1:
			return fmt.Errorf(":%d: fio then makes %d sequential I/Os per random offset; ioprobe's %% random has no runs of that length", n, n)
		case !random && n > 0:
			return fmt.Errorf(":%d: fio then skips %d bytes after each I/O; ioprobe's sequential I/O has no holes", n, n)
		}
	}
	return nil
}

// setSync reads sync=: fio's none/0, sync/1 (O_SYNC) and dsync (O_DSYNC).
func (j *job) setSync(o option) error {
	switch strings.ToLower(o.value) {
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

// flushes sets the spec's periodic flush from fsync=/fdatasync=. fio
// counts a job's writes (io_issues[DDIR_WRITE]) and flushes after every
// Nth; a job that does not write never flushes.
func (j *job) flushes(spec *workload.Spec, targets int, fail func(option, string) error) error {
	if j.fsync > 0 && j.fdatasync > 0 {
		return fail(j.fdatasyncAt, fmt.Sprintf("with fsync=%d: fio then issues whichever falls due first; ioprobe flushes one way (give one of them)", j.fsync))
	}
	at, every := j.fsyncAt, j.fsync
	if j.fdatasync > 0 {
		at, every = j.fdatasyncAt, j.fdatasync
	}
	if every == 0 || spec.ReadPct >= 100 {
		return nil
	}
	if targets > 1 {
		return fail(at, fmt.Sprintf("with %d files: fio counts a job's writes across all its files, ioprobe flushes each file after every %d writes to it (run one file per job)", targets, every))
	}
	spec.Fsync, spec.Fdatasync = j.fsync, j.fdatasync
	return nil
}

// setEngine maps fio's ioengine to ioprobe's engine.
func (j *job) setEngine(v string) error {
	switch strings.ToLower(v) {
	case "sync", "psync", "vsync", "pvsync", "pvsync2":
		j.engine = "psync"
	case "io_uring", "libaio":
		j.engine = "io_uring"
	default:
		return fmt.Errorf("%q: ioprobe runs the sync family (sync, psync, vsync, pvsync, pvsync2) and io_uring/libaio", v)
	}
	return nil
}

func (j *job) finish(s *section, targets []string, fail func(option, string) error) (Job, bool, error) {
	at := option{key: "", at: s.at}
	out := Job{Name: j.name, at: s.at}
	spec := workload.Spec{Name: j.name, QueueDepth: j.iodepth, Workers: j.numjobs, Ramp: j.ramp, Duration: j.runtime, Seed: j.seed}
	// Direction and randomness.
	switch j.rw {
	case "read", "randread":
		spec.ReadPct = 100
	case "write", "randwrite":
		spec.ReadPct = 0
	default:
		spec.ReadPct = j.readPct
	}
	if strings.HasPrefix(j.rw, "rand") {
		spec.RandomPct = 100
		if j.explicitRandom {
			spec.RandomPct = j.randomPct
		}
	} else if j.explicitRandom {
		// fio: percentage_random applies to the random patterns only.
		spec.RandomPct = 0
	}
	// fio keeps a sequential position per direction (io_u.c, last_pos[ddir]):
	// a sequential read follows the job's previous read on the file, a
	// write its previous write.
	spec.SequentialStreams = workload.StreamsDirection
	// Engine: fio's sync engines keep one I/O in flight whatever iodepth
	// says.
	if j.engine == "psync" {
		spec.Engine, spec.QueueDepth = "sync", 1
	} else {
		spec.Engine = "uring"
	}
	if j.rateIOPS > 0 {
		spec.RateIOPS = j.rateIOPS * j.numjobs // fio's rate is per job clone
	}
	bs, err := j.blockSizes(fail)
	if err != nil {
		return out, false, err
	}
	spec.BlockSizes = bs
	if len(bs) > 1 && spec.RandomPct > 0 && !j.norandommap {
		at.key = "norandommap"
		return out, false, fail(at, "missing: with a size mix at random offsets fio's random map (the default) shortens I/Os to fit the blocks left in each pass, so fio's sizes are not the mix asked for; add norandommap=1 to run the mix itself")
	}
	if j.timeBased && j.runtime == 0 {
		at.key = "runtime"
		return out, false, fail(at, "missing: time_based without runtime runs until fio is killed")
	}
	// Targets.
	switch {
	case len(targets) > 0:
		out.Targets = append([]string{}, targets...)
	case j.filename != "":
		out.Targets = splitFilename(j.filename)
	default:
		if j.numjobs > 1 {
			at.key = "numjobs"
			return out, false, fail(at, "without filename fio gives each clone its own file; ioprobe's workers share their targets (give filename or --target)")
		}
		dir := j.directory
		if dir == "" {
			dir = "."
		}
		out.Targets = []string{path.Join(dir, j.name+".0.0")}
	}
	spec.Sync = j.sync
	if err := j.flushes(&spec, len(out.Targets), fail); err != nil {
		return out, false, err
	}
	if j.size > 0 {
		// fio divides a job's size between its files.
		spec.RegionBytes = j.size / int64(len(out.Targets))
	}
	if j.timeBased {
		if err := j.applyLimits(&spec, spec.RegionBytes, fail); err != nil {
			return out, false, err
		}
	} else if err := j.budget(&spec, fail); err != nil {
		return out, false, err
	}
	if j.startDelay > 0 {
		out.StartDelay = j.startDelay
		out.Notes = append(out.Notes, fmt.Sprintf("startdelay=%v: fio starts this job that much later; ioprobe starts it at once (every job it runs with waits alike, so nothing measured changes)", j.startDelay))
	}
	if !j.direct {
		out.Notes = append(out.Notes, "fio's default is buffered I/O (direct=0): ioprobe runs this job with O_DIRECT")
	}
	if err := spec.Validate(); err != nil {
		var fe *workload.FieldError
		if errors.As(err, &fe) {
			at.key = fe.Field
		}
		return out, false, fail(at, err.Error())
	}
	out.Spec = spec
	return out, j.barrier, nil
}

// splitFilename splits fio's filename list (':' between names, "\:" for a
// colon in a name).
func splitFilename(v string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == ':':
			cur.WriteByte(':')
			i++
		case v[i] == ':':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(v[i])
		}
	}
	return append(out, cur.String())
}

// blockSizes is the job's transfer size mix from bs, bssplit or bsrange.
func (j *job) blockSizes(fail func(option, string) error) ([]workload.BlockSize, error) {
	read := func(raw string, at option, parse func(string, int64) ([]workload.BlockSize, error)) ([]workload.BlockSize, error) {
		v, err := oneForAll(raw)
		if err == nil {
			var bs []workload.BlockSize
			if bs, err = parse(v, j.kbBase); err == nil {
				return bs, nil
			}
		}
		return nil, fail(at, err.Error())
	}
	switch {
	case j.bssplit != "" && j.bsrange != "":
		return nil, fail(j.bsrangeAt, "with bssplit: give one of them")
	case j.bssplit != "":
		return read(j.bssplit, j.bssplitAt, parseSplit)
	case j.bsrange != "":
		return read(j.bsrange, j.bsrangeAt, parseRange)
	case j.bs != "":
		return read(j.bs, j.bsAt, func(v string, kb int64) ([]workload.BlockSize, error) {
			n, err := parseInt(v, kb)
			return []workload.BlockSize{{Bytes: n, Weight: 1}}, err
		})
	}
	return []workload.BlockSize{{Bytes: 4096, Weight: 1}}, nil
}

// oneForAll reads fio's "read,write,trim" form when every direction given
// has the same value.
func oneForAll(v string) (string, error) {
	parts := strings.Split(v, ",")
	first := ""
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if first == "" {
			first = p
		} else if p != first {
			return "", fmt.Errorf("%q: a value per direction; ioprobe's transfer sizes are the same for reads and writes", v)
		}
	}
	if first == "" {
		return "", errors.New("needs a value")
	}
	return first, nil
}

// parseSplit reads bssplit: size/percent entries separated by ':'; the
// entries without a percent share what the others leave of 100.
func parseSplit(v string, kbBase int64) ([]workload.BlockSize, error) {
	var out []workload.BlockSize
	var open []int
	total := 0
	for _, e := range strings.Split(v, ":") {
		size, pct, hasPct := strings.Cut(strings.TrimSpace(e), "/")
		n, err := parseInt(size, kbBase)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", e, err)
		}
		w := 0
		if hasPct && strings.TrimSpace(pct) != "" {
			w, err = strconv.Atoi(strings.TrimSpace(pct))
			if err != nil || w < 0 || w > 100 {
				return nil, fmt.Errorf("%q: the percent must be 0 to 100", e)
			}
			total += w
		} else {
			open = append(open, len(out))
		}
		out = append(out, workload.BlockSize{Bytes: n, Weight: w})
	}
	if total > 100 {
		return nil, fmt.Errorf("the percents add up to %d, over 100", total)
	}
	if len(open) > 0 {
		// fio hands the rest out equally, the last entry taking what the
		// division leaves.
		left := 100 - total
		for i, k := range open {
			out[k].Weight = left / len(open)
			if i == len(open)-1 {
				out[k].Weight = left - (left/len(open))*(len(open)-1)
			}
		}
	} else if total != 100 {
		return nil, fmt.Errorf("the percents add up to %d, not 100", total)
	}
	kept := out[:0]
	for _, b := range out {
		if b.Weight > 0 {
			kept = append(kept, b)
		}
	}
	if len(kept) == 0 {
		return nil, errors.New("no size has a share")
	}
	return kept, nil
}

// parseRange reads bsrange=min-max. fio draws a length uniformly from
// [min, min+max), rounds it down to a multiple of min and caps it at max
// (io_u.c, get_next_buflen): with max a multiple of min, every multiple of
// min from min to max comes up equally often.
func parseRange(v string, kbBase int64) ([]workload.BlockSize, error) {
	lo, hi, ok := strings.Cut(v, "-")
	if !ok {
		lo, hi, ok = strings.Cut(v, ":")
	}
	if !ok {
		return nil, fmt.Errorf("%q: want min-max", v)
	}
	a, err := parseInt(lo, kbBase)
	if err != nil {
		return nil, err
	}
	b, err := parseInt(hi, kbBase)
	if err != nil {
		return nil, err
	}
	switch {
	case a <= 0 || b < a:
		return nil, fmt.Errorf("%q: want 0 < min <= max", v)
	case a == b:
		return []workload.BlockSize{{Bytes: a, Weight: 1}}, nil
	case b%a != 0:
		return nil, fmt.Errorf("%q: max is not a multiple of min (fio's lengths are multiples of min, max taking the rest of the draws)", v)
	case b/a > 64:
		return nil, fmt.Errorf("%q: more than 64 sizes in the range", v)
	}
	var out []workload.BlockSize
	for n := a; n <= b; n += a {
		out = append(out, workload.BlockSize{Bytes: n, Weight: 1})
	}
	return out, nil
}
