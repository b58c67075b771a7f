// Package fiojob reads fio's job file language (fio's HOWTO, "Job file
// format") for what fio and ioprobe share, and turns a job file into
// ioprobe's access specifications: the jobs that fio would run at once
// become one point (a group of workers per job), and stonewall /
// wait_for_previous start the next point.
//
// Units and defaults are fio's, read as fio 3.x reads them (units.go:
// kb_base=1024: 4k and 4ki are 4096, 4KiB is 4000; rw=read, bs=4k,
// iodepth=1, numjobs=1, buffered I/O, the random map).
// An option ioprobe cannot honour with fio's meaning is refused with an
// *Error naming the file, line, section and option: never a silent change
// of meaning.
//
// It is pure code: the caller supplies the file's bytes, the environment
// and a reader for include files.
package fiojob
