package safefile

import (
	"errors"
	"fmt"
)

// Kind is one kind of input file: what it is called in errors and the
// largest ioprobe reads.
type Kind struct {
	What string // "job file", "result file", ...
	Max  int64  // bytes
}

// The kinds of input ioprobe reads, with their bounds. Each is far above
// what real use makes (docs/reliability.md "Bounds" gives the figures
// measured) and far below what would strain a host's memory: a document
// is held whole while it is decoded, a few times its size.
var (
	// JobFile is a fio job file and each file it includes: fio job files
	// are a few hundred bytes; a generated one with hundreds of jobs a few
	// tens of KiB.
	JobFile = Kind{What: "job file", Max: 1 << 20}
	// ICF is an Iometer configuration file: tens of KiB with hundreds of
	// access specifications.
	ICF = Kind{What: "Iometer configuration file", Max: 4 << 20}
	// Result is a result, suite or fleet document read by report and
	// compare. Measured (docs/reliability.md, "Bounds"): a 21-point suite
	// of 2 s points is 4.5 MB as written (histograms dominate, ~0.3 MB a
	// point; each hour of 1 s intervals adds ~1.4 MB a point), so a
	// fleet of 100 hosts each measuring an hour is ~170 MB.
	Result = Kind{What: "result file", Max: 512 << 20}
	// HostList is fleet's --hosts @FILE: one HOST:PORT per line.
	HostList = Kind{What: "host list", Max: 1 << 20}
	// Config is the daemon's config: a few KiB; a thousand jobs fit.
	Config = Kind{What: "config file", Max: 4 << 20}
	// WebConfig is exporter-toolkit's web config and fleet's client
	// config (TLS and basic auth): a few KiB.
	WebConfig = Kind{What: "web config file", Max: 1 << 20}
)

// Error is an input or output file ioprobe refuses: bad input, nothing
// was touched (the CLI's exit status 2).
type Error struct {
	What string // "job file", "--out", ...
	Path string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	s := e.What + " " + e.Path + " " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// IsBadInput says whether err is (or wraps) a file safefile refused.
func IsBadInput(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Size writes a byte count as the bounds are given: 1 MiB, 256 MiB.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func (k Kind) tooLarge(path string) error {
	return &Error{What: k.What, Path: path, Msg: fmt.Sprintf("is larger than %s: ioprobe reads at most %s of a %s", Size(k.Max), Size(k.Max), k.What)}
}
