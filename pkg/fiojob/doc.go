// Package fiojob reads fio's job file language (fio's HOWTO, "Job file
// format") for what fio and ioprobe share, and turns a job file into
// ioprobe's access specifications: the jobs that fio would run at once
// become one point (a group of workers per job), and stonewall /
// wait_for_previous start the next point.
//
// Units and defaults are fio's (kb_base=1024: 4k is 4096, 4ki is 4000;
// times in seconds; rw=read, bs=4k, iodepth=1, numjobs=1, buffered I/O).
// An option ioprobe cannot honour with fio's meaning is refused with an
// *Error naming the file, line, section and option: never a silent change
// of meaning.
//
// It is pure code: the caller supplies the file's bytes, the environment
// and a reader for include files.
package fiojob
