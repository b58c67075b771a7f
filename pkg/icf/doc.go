// Package icf reads Iometer's configuration files (.icf, the files
// Iometer's "Save Test Configuration" writes) and turns them into
// ioprobe's terms: the access specifications with every line, the run
// and ramp-up times, the workers of the manager with their outstanding
// I/Os, assigned specifications and targets, and the test type's cycling
// of workers, targets and queue depth, unrolled into points in the order
// Iometer runs them (Config.Points).
//
// The grammar is Iometer's own loader's: a line that starts with a quote
// is a key (compared without regard to case), the next line that does
// not is its value, and further quoted lines between them are column
// headings; sections start with 'TEST SETUP, 'RESULTS DISPLAY, 'ACCESS
// SPECIFICATIONS and 'MANAGER LIST and end with 'END …. Files of version
// 1998.05.21 (the first with named, per-worker access specifications) and
// later are read; CRLF or LF line ends.
//
// Whatever has no meaning for ioprobe (network workers and targets,
// several managers, Iometer's reply size, connection-rate testing, a
// starting sector) is refused with an *Error naming the file, line,
// section and key: never a silent change of meaning.
//
// It is pure code: the caller supplies the file's bytes.
package icf
