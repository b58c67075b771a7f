package fiojob

import (
	"fmt"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// place sets the job's files and where on them each clone's I/O goes, as
// fio's add_job, setup_files and get_start_offset do: the files (each
// clone its own, or shared), the region of each file (size over the
// files, filesize, size=N%, capped at a device's end), each clone's
// offset, and the files taken in turn. It returns the job's targets and,
// when fio's byte budget is not the regions' sum, that budget (per
// clone; 0: the sum).
func (j *job) place(spec *workload.Spec, o Options, fail func(option, string) error) ([]string, int64, error) {
	header := func(key string) option { return option{key: key, at: j.at} }
	targets, clones, filesAt, err := j.files(o)
	if err != nil {
		return nil, 0, fail(filesAt, err.Error())
	}
	if filesAt.key == "" {
		filesAt = header("filename")
	}
	own := targets // one clone's files
	if clones {
		own = targets[:len(targets)/j.numjobs]
	}
	spec.CloneFiles = clones
	if len(own) > 1 {
		if err := j.inTurn(spec, len(own), filesAt, fail); err != nil {
			return nil, 0, err
		}
	}
	// What fio finds at the files (every clone's are named and made
	// alike: the first clone's stand for all).
	infos := make([]FileInfo, len(own))
	for i, t := range own {
		infos[i] = FileInfo{Exists: true}
		if o.Stat != nil {
			if infos[i], err = o.Stat(t); err != nil {
				return nil, 0, fail(filesAt, err.Error())
			}
		}
	}
	info, alike := infos[0], true
	for _, fi := range infos[1:] {
		alike = alike && fi == info
		if !fi.Exists {
			info.Exists = false // fio: a file to make needs a size
		}
	}
	region, err := j.region(info, len(own), fail)
	if err != nil {
		return nil, 0, err
	}
	if region == 0 && !alike && !j.timeBased {
		return nil, 0, fail(filesAt, "files of different sizes, and no size=: fio ends each file's pass at its own end and goes on with the others; ioprobe takes its files in turn to the end (give size=, or filesize=)")
	}
	if err := j.offsets(spec, info, alike, &region); err != nil {
		return nil, 0, err
	}
	budget := int64(0)
	if region > 0 && !info.Regular && info.Size > 0 && spec.Offset+spec.OffsetIncrement*int64(j.numjobs-1)+region > info.Size {
		if spec.Offset > 0 || spec.OffsetIncrement > 0 {
			k := j.numjobs - 1
			end := spec.Offset + spec.OffsetIncrement*int64(k) + region
			at := j.offsetIncrAt
			if spec.OffsetIncrement == 0 || at.key == "" {
				at = j.offsetAt
			}
			return nil, 0, fail(at, fmt.Sprintf("clone %d's region ends at byte %d, past the end of %s (%d bytes): fio would issue I/O beyond it (give a smaller size, offset or offset_increment)", k, end, own[0], info.Size))
		}
		// fio's setup_files sizes a device's region by size=, and its
		// I/O stops at what the device holds (last_block: the smaller of
		// io_size and the device's size): the job runs on the whole
		// device. Its byte budget stays size= where no pass ends it
		// first (random I/O without the map, or partly random).
		if !spec.RandomMap || spec.RandomPct < 100 {
			if spec.RandomPct > 0 {
				budget = region * int64(len(own))
			}
		}
		j.note(j.regionOption(), "%d bytes per file is more than %s holds (%d bytes): capped to its size, as fio caps it", region, own[0], info.Size)
		region = info.Size
	}
	region, fit, err := j.fitRegion(region, info, len(spec.BlockSizes), spec.RandomPct, fail)
	if err != nil {
		return nil, 0, err
	}
	if fit > 0 {
		budget = max(budget, fit*int64(len(own)))
	}
	spec.RegionBytes = region
	return targets, budget, nil
}

// regionOption is the option that set the job's region: filesize, else
// size.
func (j *job) regionOption() option {
	if j.fileSize[0] > 0 {
		return j.fileSizeAt
	}
	return j.sizeAt
}

// inTurn sets how a job with n files per clone issues to them: fio's
// file_service_type, roundrobin by default (io_u.c: __get_next_file,
// get_next_file_rr: file_service_nr I/Os to a file, then the next), its
// iodepth over all of them. It refuses what ioprobe would run
// differently with several files.
func (j *job) inTurn(spec *workload.Spec, n int, filesAt option, fail func(option, string) error) error {
	switch j.serviceType {
	case "", "roundrobin":
	case "sequential":
		return fail(j.serviceAt, "sequential: fio then stays on a file until its pass is done, then takes the next; ioprobe takes a job's files in turn (roundrobin, fio's default)")
	default:
		return fail(j.serviceAt, fmt.Sprintf("%s: fio then picks each I/O's file at random (%s); ioprobe takes a job's files in turn (roundrobin, fio's default)", j.serviceType, map[bool]string{true: "uniformly", false: "by a " + j.serviceType + " distribution"}[j.serviceType == "random"]))
	}
	why := ""
	var at option
	switch {
	case j.fsync > 0 || j.fdatasync > 0:
		at, why = j.fsyncAt, "fio counts the writes over all of a job's files and flushes the file its next I/O goes to; ioprobe flushes each file after every N writes to it"
		if j.fdatasync > 0 {
			at = j.fdatasyncAt
		}
	case j.think > 0:
		at, why = j.thinkAt, "fio counts thinktime_blocks over all of a job's files; ioprobe's burst is per file"
	case j.loops > 1 && !passes(spec, j):
		// Each loop of fio's is one pass of every file (a file whose
		// pass is done waits for the loop's end), then every file at its
		// start again: ioprobe's loops over targets in turn are so where
		// a pass ends by itself (engine.Turn), and each loop's budget is
		// the passes' bytes.
		at, why = j.loopsAt, "fio starts every file at its start again each loop; ioprobe's loops over files in turn end by passes only for sequential I/O, or random I/O with the map, and without io_size or number_ios"
	}
	if why != "" {
		return fail(at, fmt.Sprintf("with %d files (%s): %s", n, filesAt.key, why))
	}
	spec.FilesInTurn = j.serviceNr
	return nil
}

// offsets sets each clone's offset as fio's get_start_offset computes it:
// offset (bytes, or N% of the file's size), plus the clone's number ×
// offset_increment (bytes, or N% of the size); an offset from a
// percentage is rounded up to the smallest transfer, clone by clone. A
// region to the file's end (0) stays so; size=N% is capped to what is
// left after the offset, as fio caps it.
func (j *job) offsets(spec *workload.Spec, info FileInfo, alike bool, region *int64) error {
	pct := j.offsetPct > 0 || j.offsetIncrPct > 0
	at := j.offsetAt
	if j.offsetIncrPct > 0 || at.key == "" {
		at = j.offsetIncrAt
	}
	if at.key == "" {
		return nil
	}
	if pct {
		switch {
		case !alike:
			return j.failAt(at, "a % of the file's size, with files of different sizes: give it in bytes")
		case info.Size <= 0:
			return j.failAt(at, "a % of the file's size, whose size ioprobe does not know here (give it in bytes)")
		}
	}
	incr := j.offsetIncr
	if j.offsetIncrPct > 0 {
		incr = int64(j.offsetIncrPct) * info.Size / 100
	}
	spec.Offset, spec.OffsetIncrement = j.offset, incr
	if j.offsetPct > 0 {
		spec.Offset = info.Size * int64(j.offsetPct) / 100
	}
	if j.numjobs == 1 {
		spec.OffsetIncrement = 0
	}
	if pct {
		// fio rounds each clone's offset up to the smallest transfer.
		spec.OffsetAlign = j.minSize()
	}
	if !spec.Buffered {
		a := spec.Alignment()
		vs := []int64{spec.Offset, spec.OffsetIncrement}
		if pct {
			vs = []int64{spec.OffsetAlign}
		}
		for _, v := range vs {
			if v%512 != 0 || v%a != 0 {
				return j.failAt(at, fmt.Sprintf("%d is not a multiple of the transfer size %d: fio's direct I/O at it fails (EINVAL)", v, a))
			}
		}
	}
	m := j.minSize()
	if j.sizePct > 0 && *region > 0 {
		// io_size = size% of the file, at most what is left after the
		// clone's offset (filesetup.c), in whole transfers: one size for
		// every clone, or refused.
		want := *region
		for k := 0; k < j.numjobs; k++ {
			left := info.Size - spec.WorkerRegion(k)
			r := min(want, left-left%m)
			if k > 0 && r != *region {
				return j.failAt(j.sizeAt, fmt.Sprintf("%d%% of the file is more than is left after clone %d's offset: fio gives such clones what is left, ioprobe's clones have one size", j.sizePct, k))
			}
			*region = r
		}
	}
	return nil
}

// failAt is a refusal of option at: the *Error the job's fail makes.
func (j *job) failAt(at option, reason string) error {
	return &Error{File: at.at.file, Line: at.at.line, Section: j.sectionName, Option: at.key, Reason: reason}
}

// passes reports whether each loop of the job is one pass of each of its
// files: sequential I/O (each file's pass ends at its region's end) or
// random I/O with the map (it ends when the map is full), the loop's
// budget the regions' bytes (no io_size, no number_ios).
func passes(spec *workload.Spec, j *job) bool {
	return j.ioSize == 0 && j.numberIOs == 0 && (spec.RandomPct == 0 || (spec.RandomPct == 100 && spec.RandomMap))
}
