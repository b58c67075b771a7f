package fiojob

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// A job's file and region, as fio sets them up (init.c: add_job,
// make_filename; filesetup.c: add_file, setup_files).

func (j *job) setSize(o option) error {
	if strings.HasSuffix(strings.TrimSpace(o.value), "z") {
		return errors.New("a size in zones is for zoned devices (zonemode), which ioprobe does not run")
	}
	n, err := j.num(o)
	if err != nil {
		return err
	}
	j.size, j.sizePct, j.sizeAt = 0, 0, o
	switch {
	case n.percent && n.val != 100:
		j.sizePct = int(n.val) // 0 and 100: the whole file, as no size
	case !n.percent:
		j.size = n.val
	}
	return nil
}

func (j *job) setFileSize(o option) error {
	if o.bare {
		return errors.New("needs a value")
	}
	parts, ok := splitDirections(o.value)
	lo, err := parseNumber(parts[0], j.kbBase)
	if err != nil {
		return err
	}
	hi := lo
	if ok[1] && parts[1] != parts[0] {
		if hi, err = parseNumber(parts[1], j.kbBase); err != nil {
			return err
		}
	}
	if lo.percent || hi.percent || lo.val < 1 {
		return errors.New("want a size of at least 1 byte")
	}
	j.fileSize, j.fileSizeAt = [2]int64{lo.val, hi.val}, o
	return nil
}

// setOffset is fio's offset: bytes, or N% of the file's size (options.c:
// str_offset_cb).
func (j *job) setOffset(o option) error {
	j.offsetAt = o
	return j.setOffsetValue(o, &j.offset, &j.offsetPct)
}

// setOffsetIncrement is fio's offset_increment: each clone's region starts
// its number × this after offset (filesetup.c: get_start_offset).
func (j *job) setOffsetIncrement(o option) error {
	j.offsetIncrAt = o
	return j.setOffsetValue(o, &j.offsetIncr, &j.offsetIncrPct)
}

// setOffsetValue reads an offset in bytes or % into bytes or pct (the
// other set to 0); in zones refused, as a size in zones is.
func (j *job) setOffsetValue(o option, bytes *int64, pct *int) error {
	if strings.HasSuffix(strings.TrimSpace(o.value), "z") {
		return errors.New("an offset in zones is for zoned devices (zonemode), which ioprobe does not run")
	}
	n, err := j.num(o)
	if err != nil {
		return err
	}
	*bytes, *pct = 0, 0
	if n.percent {
		*pct = int(n.val)
	} else {
		*bytes = n.val
	}
	return nil
}

// setFileService is fio's file_service_type (options.c: str_fst_cb):
// roundrobin (its default) or roundrobin:N, N I/Os to a file before the
// next. The others are kept to be refused when the job has several files
// (with one file they change nothing).
func (j *job) setFileService(o option) error {
	if o.bare {
		return errors.New("needs a value")
	}
	kind, nr, hasNr := strings.Cut(o.value, ":")
	switch kind {
	case "roundrobin", "sequential", "random", "zipf", "pareto", "normal", "gauss":
	default:
		return fmt.Errorf("%q: fio's types are roundrobin, sequential, random, zipf, pareto, normal and gauss", o.value)
	}
	j.serviceType, j.serviceNr, j.serviceAt = kind, 1, o
	if hasNr && (kind == "roundrobin" || kind == "sequential" || kind == "random") {
		// fio's atoi: the leading digits (none: 0, refused below).
		v := 0
		for _, c := range strings.TrimSpace(nr) {
			if c < '0' || c > '9' || v > workload.MaxFilesInTurn {
				break
			}
			v = v*10 + int(c-'0')
		}
		if v == 0 {
			return fmt.Errorf("%q: fio reads %q as 0 I/Os per file, which it counts down from 2^32 (one file for good)", o.value, nr)
		}
		j.serviceNr = min(v, workload.MaxFilesInTurn)
	}
	return nil
}

func (j *job) setFilename(o option) error {
	if o.bare || strings.TrimSpace(o.value) == "" {
		return errors.New("needs a value")
	}
	j.filenames = nil
	// get_next_str: names up to the first empty one.
	for _, n := range splitFilename(strings.TrimSpace(o.value)) {
		if n == "" {
			break
		}
		j.filenames = append(j.filenames, n)
	}
	j.filenameAt = o
	return nil
}

func (j *job) setDirectory(o option) error {
	if o.bare || o.value == "" {
		return errors.New("needs a value")
	}
	j.directory, j.directoryAt = o.value, o
	return nil
}

func (j *job) setFormat(o option) error {
	if o.bare {
		return errors.New("needs a value")
	}
	j.format, j.formatAt = o.value, o
	return nil
}

// MaxFiles bounds the files of one job (its clones' together): each is a
// target ioprobe opens, checks and keeps a queue's buffers for.
const MaxFiles = 4096

// files are the job's files as fio names them: filename's list (each
// behind directory's first entry and a '/', whatever it is: fio's
// set_name_idx), shared by the job's clones; else nrfiles names made from
// filename_format (default $jobname.$jobnum.$filenum, the job being its
// section and $jobnum the clone's number: each clone its own files, clone
// after clone in the list, and clones says so), behind directory the
// same way; a job section named after an existing device or other file
// that is not a regular one is that file.
func (j *job) files(o Options) (names []string, clones bool, at option, err error) {
	if len(o.Targets) > 0 {
		return append([]string{}, o.Targets...), false, option{}, nil
	}
	dir := ""
	if j.directory != "" {
		dir = splitFilename(j.directory)[0] + "/"
	}
	if len(j.filenames) > 0 {
		out := make([]string, len(j.filenames))
		for i, n := range j.filenames {
			out[i] = dir + n
		}
		return out, false, j.filenameAt, nil
	}
	if j.nrfiles == 1 && o.Stat != nil {
		if fi, err := o.Stat(j.section()); err == nil && fi.Exists && !fi.Regular {
			return []string{j.section()}, false, option{}, nil
		}
	}
	if n := j.numjobs * j.nrfiles; n > MaxFiles {
		at := j.nrfilesAt
		if at.key == "" {
			at = j.numjobsAt
		}
		return nil, false, at, fmt.Errorf("%d clones × %d files is %d files: ioprobe opens at most %d for a job", j.numjobs, j.nrfiles, n, MaxFiles)
	}
	var first []string
	for k := 0; k < j.numjobs; k++ {
		var own []string
		for i := 0; i < j.nrfiles; i++ {
			name, err := j.makeFilename(k, i)
			if err != nil {
				return nil, false, j.formatAt, err
			}
			own = append(own, dir+name)
		}
		switch {
		case k == 0:
			first = own
			names = own
		case slices.Equal(own, first):
			// A format without $jobnum: every clone the same files.
		case slices.ContainsFunc(own, func(n string) bool { return slices.Contains(names, n) }):
			return nil, false, j.formatAt, fmt.Errorf("%q gives clone %d some of another clone's files and some of its own: fio's clones then share part of their files, ioprobe's workers all or none", j.format, k)
		default:
			names, clones = append(names, own...), true
		}
	}
	at = j.nrfilesAt
	if at.key == "" {
		at = j.formatAt
	}
	return names, clones, at, nil
}

// makeFilename is fio's make_filename for clone jobnum's file filenum:
// the keywords replaced wherever they appear, matched without regard to
// case.
func (j *job) makeFilename(jobnum, filenum int) (string, error) {
	if j.format == "" {
		return j.section() + "." + strconv.Itoa(jobnum) + "." + strconv.Itoa(filenum), nil
	}
	out := j.format
	for _, kw := range []struct{ word, val string }{
		{"$jobname", j.section()}, {"$jobnum", strconv.Itoa(jobnum)}, {"$filenum", strconv.Itoa(filenum)}, {"$clientuid", ""},
	} {
		for {
			i := strings.Index(strings.ToLower(out), kw.word)
			if i < 0 {
				break
			}
			if kw.word == "$clientuid" {
				return "", errors.New("$clientuid: fio's client/server names, which ioprobe does not run")
			}
			out = out[:i] + kw.val + out[i+len(kw.word):]
		}
	}
	return out, nil
}

// section is the job's section name: fio names files after it, not
// after name=.
func (j *job) section() string { return j.sectionName }

// region is the job's access region on each of its n files as fio sets
// it up (setup_files): filesize, else size over the files (fio's
// size / nr_files), else size=N% of the file, else the whole file; fio
// refuses a new file without a size. info is what Stat said about the
// files. 0: the whole target.
func (j *job) region(info FileInfo, n int, fail func(option, string) error) (int64, error) {
	switch {
	case j.fileSize[0] > 0:
		if j.fileSize[0] != j.fileSize[1] {
			return 0, fail(j.fileSizeAt, "a range: fio gives each file a random size in it; give one size")
		}
		return j.fileSize[0], nil
	case j.size > 0:
		if r := j.size / int64(n); r > 0 {
			return r, nil
		}
		return 0, fail(j.sizeAt, fmt.Sprintf("%d bytes over %d files is less than a byte each", j.size, n))
	case !info.Exists:
		at := j.sizeAt
		if at.key == "" {
			at = option{key: "size", at: j.at}
		}
		return 0, fail(at, "you need to specify size= (fio's words: the file does not exist, and fio does not know how large to make it)")
	case j.sizePct > 0:
		if info.Size <= 0 {
			return 0, fail(j.sizeAt, "a size in % of the file, whose size ioprobe does not know here")
		}
		n := info.Size * int64(j.sizePct) / 100
		m := j.minSize()
		return n - n%m, nil
	}
	return 0, nil
}

// minSize is fio's td_min_bs: the smallest transfer of any direction.
func (j *job) minSize() int64 {
	m := int64(0)
	for d := range 3 {
		lo := j.minBS[d]
		if lo == 0 {
			lo = j.bs[d]
		}
		if m == 0 || lo < m {
			m = lo
		}
	}
	return m
}

// fitRegion applies fio's rule for a region that is not a multiple of the
// transfer size (io_u.c): random offsets are whole blocks inside it;
// sequential I/Os start before its end and the last may pass it, if the
// file holds that much (a file fio creates is the region's size, so its
// last I/O does not fit and is not issued). It returns the region ioprobe
// runs and, when it differs from fio's byte budget, that budget.
func (j *job) fitRegion(r int64, info FileInfo, sizes int, randomPct int, fail func(option, string) error) (region, budget int64, err error) {
	m := j.minSize()
	if r == 0 || r%m == 0 {
		return r, 0, nil
	}
	at := j.sizeAt
	if j.fileSize[0] > 0 {
		at = j.fileSizeAt
	}
	switch {
	case sizes > 1:
		return 0, 0, fail(at, fmt.Sprintf("%d is not a multiple of the smallest transfer size %d: with a size mix fio then draws only sizes that fit before the region's end; give a multiple", r, m))
	case randomPct > 0 && randomPct < 100:
		return 0, 0, fail(at, fmt.Sprintf("%d is not a multiple of the transfer size %d: fio's random I/O then stays within whole blocks while its sequential I/O reaches past the end; give a multiple", r, m))
	case randomPct == 100:
		floor := r - r%m
		if j.norandommap {
			// fio issues I/Os at the whole blocks until it has done
			// size bytes.
			return floor, r, nil
		}
		return floor, 0, nil // the map fills at the last whole block: the pass ends
	}
	ceil := r - r%m + m
	if info.Exists && info.Size >= ceil {
		return ceil, 0, nil
	}
	return r - r%m, 0, nil
}
