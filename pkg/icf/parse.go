package icf

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Line is one line of an access specification, as Iometer keeps it.
type Line struct {
	Bytes     int64 // transfer size
	Share     int   // % of the specification's I/Os ("% of size")
	ReadPct   int
	RandomPct int
	DelayMs   int   // ms to wait before each burst
	Burst     int   // I/Os per burst
	Align     int64 // offset alignment in bytes; 0: sector boundaries
	At        int   // the file line
}

// AccessSpec is one named access specification.
type AccessSpec struct {
	Name string
	// Assignment is Iometer's default assignment (NONE, ALL, DISK, NET):
	// the specifications a worker without an 'Assigned access specs list
	// runs.
	Assignment string
	Lines      []Line
	At         int
}

// Cycling is one of the test setup's cycling settings. End is used by
// queue-depth cycling only.
type Cycling struct {
	Start, Step, End int
	Exponential      bool
	At               int
}

// Test types (the test setup's 'Test Type), Iometer's names.
const (
	Normal                  = "NORMAL"
	CycleTargets            = "CYCLE_TARGETS"
	CycleWorkers            = "CYCLE_WORKERS"
	IncrementTargetsPar     = "INCREMENT_TARGETS_PARALLEL"
	IncrementTargetsSerial  = "INCREMENT_TARGETS_SERIAL"
	CycleWorkersAndTargets  = "CYCLE_WORKERS_AND_TARGETS"
	CycleOutstanding        = "CYCLE_OUTSTANDING_IOS"
	CycleOutstandingTargets = "CYCLE_OUTSTANDING_IOS_AND_TARGETS"
)

// testTypes is Iometer's numbering (an old file may store the number).
var testTypes = []string{Normal, CycleTargets, CycleWorkers, IncrementTargetsPar, IncrementTargetsSerial,
	CycleWorkersAndTargets, CycleOutstanding, CycleOutstandingTargets}

// Worker is one disk worker of the manager.
type Worker struct {
	Name       string
	QueueDepth int   // outstanding I/Os per target
	MaxSectors int64 // 'Disk maximum size: the access region in sectors; 0: the whole target
	// DataPattern is Iometer's write data: 0 repeating bytes, 1 pseudo
	// random, 2 full random; -1 when the file does not say.
	DataPattern int
	Seed        uint64 // a fixed seed, 0: none
	// Specs are the names of the assigned access specifications in
	// order, "" for Idle.
	Specs   []string
	Targets []string // disk target names as written ("C: \"System\"", "PHYSICALDRIVE:1")
	At      int
}

// Config is what an ICF file says, in Iometer's terms.
type Config struct {
	File        string
	Version     string // as written after "Version"
	Description string
	RunTime     time.Duration
	RampUp      time.Duration
	// Cycling of the workers, targets ("Disk Cycling") and queue depth.
	Workers, Targets, Queue Cycling
	TestType                string
	TestTypeAt              int
	Specs                   []AccessSpec
	Manager                 string
	Disk                    []Worker
	// HasTestSetup and HasManagers: Iometer saves the test setup, the
	// access specifications and the manager list each only when asked
	// to; Options stand in for the sections a file lacks.
	HasTestSetup, HasManagers bool
}

// Options supply what a file saved without some of its sections leaves
// out.
type Options struct {
	// RunTime and RampUp stand in for a file without 'TEST SETUP (one
	// without it and without RunTime is refused).
	RunTime, RampUp time.Duration
	// QueueDepth is the outstanding I/Os of the one worker that runs a
	// file without 'MANAGER LIST (0: Iometer's default, 1); that worker
	// runs every access specification of the file in turn.
	QueueDepth int
}

// firstNamedSpecs is the first version with named access specifications
// assigned per worker (AccessSpecList::LoadConfig); earlier files are
// refused.
const firstNamedSpecs = 19980521

// strictSetup is the first version whose test setup ends with 'END test
// setup; in older files an unknown key ends the section.
const strictSetup = 19990217

// Parse reads an ICF file (its name for messages, its bytes).
func Parse(name string, data []byte, o Options) (*Config, error) {
	r := newReader(name, data)
	c := &Config{File: name, TestType: Normal,
		Workers: Cycling{Start: 1, Step: 1}, Targets: Cycling{Start: 1, Step: 1}, Queue: Cycling{Start: 1, Step: 1, End: 1}}
	r.skipBlank()
	v, ok := r.next()
	if !ok || !strings.HasPrefix(strings.ToLower(v.text), "version") {
		return nil, r.errf(v, "", "not an Iometer configuration file: the first line must be \"Version …\"")
	}
	c.Version = strings.TrimSpace(v.text[len("version"):])
	num, err := versionNumber(c.Version)
	if err != nil {
		return nil, r.errf(v, "", "%v", err)
	}
	if num < firstNamedSpecs {
		return nil, r.errf(v, "", "version %s is older than 1998.05.21: its unnamed, global access specifications are not read (save the file again with a newer Iometer)", c.Version)
	}
	for {
		r.sec = ""
		r.skipBlank()
		l, ok := r.next()
		if !ok {
			break
		}
		var err error
		switch l.section() {
		case secTestSetup:
			c.HasTestSetup = true
			err = c.testSetup(r, num)
		case secDisplay:
			err = skipSection(r, secDisplay, "END results display")
		case secSpecs:
			r.specsAt = l.n
			err = c.accessSpecs(r)
		case secManagers:
			err = c.managers(r)
		default:
			if strings.HasPrefix(strings.ToLower(l.text), "version") {
				continue // Iometer writes the version again at the end
			}
			err = r.errf(l, "", "a line outside every section (its text is not shown; want 'TEST SETUP, 'RESULTS DISPLAY, 'ACCESS SPECIFICATIONS or 'MANAGER LIST)")
		}
		if err != nil {
			return nil, err
		}
	}
	return c, c.check(r, o)
}

// versionNumber is Iometer's encoding of a version (ICF_ifstream::
// GetVersion): a date 1998.10.08 is 19981008, a release 1.1.0 is
// 1*10^10+1*10^5+0, and the ancient "3.26.97" is 1998.01.05.
func versionNumber(s string) (uint64, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsDigit(r) })
	if len(fields) < 3 {
		return 0, fmt.Errorf("version %q: want three numbers (1998.10.08, 2006.07.27, 1.1.0)", s)
	}
	var n [3]uint64
	for i := range n {
		v, err := strconv.ParseUint(fields[i], 10, 32)
		if err != nil {
			return 0, fmt.Errorf("version %q: %q is not a number", s, fields[i])
		}
		n[i] = v
	}
	if n[0] > 1900 {
		v := n[0]*10000 + n[1]*100 + n[2]
		if v == 32697 {
			v = 19980105
		}
		return v, nil
	}
	if n[0] == 3 && n[1] == 26 && n[2] == 97 {
		return 19980105, nil
	}
	return n[0]*10000000000 + n[1]*100000 + n[2], nil
}

// skipSection consumes lines up to the section's END line (or the next
// section, which it leaves).
func skipSection(r *reader, sec, end string) error {
	r.sec = sec
	for {
		l, ok := r.peek()
		if !ok {
			return r.errf(l, "", "the file ends before '%s", end)
		}
		if l.section() != "" {
			return nil
		}
		r.i++
		if l.isKey() && l.equals(end) {
			return nil
		}
	}
}

// fields splits a value at commas and white space (Iometer's
// ExtractFirstInt/Token accept either between numbers).
func fields(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// ints reads n whole numbers from the front of a value.
func (r *reader) ints(k, v line, n int, what string) ([]int, []string, error) {
	f := fields(v.text)
	if len(f) < n {
		return nil, nil, r.errf(v, k.key(), "%q: want %s", v.text, what)
	}
	out := make([]int, n)
	for i := range out {
		x, err := strconv.Atoi(f[i])
		if err != nil {
			return nil, nil, r.errf(v, k.key(), "%q: %q is not a whole number (want %s)", v.text, f[i], what)
		}
		out[i] = x
	}
	return out, f[n:], nil
}

// testSetup reads 'TEST SETUP (CPageSetup::LoadConfig).
func (c *Config) testSetup(r *reader, version uint64) error {
	r.sec = secTestSetup
	for {
		r.skipBlank()
		k, ok := r.peek()
		if !ok {
			return r.errf(k, "", "the file ends before 'END test setup")
		}
		if !k.isKey() {
			return r.errf(k, "", "a line that is not a key (its text is not shown) where a test setup key was expected")
		}
		if k.section() != "" {
			if version >= strictSetup {
				return r.errf(k, "", "'END test setup is missing before this section")
			}
			return nil
		}
		r.i++
		if k.equals("END test setup") {
			return nil
		}
		v, err := r.value(k)
		if err != nil {
			return err
		}
		switch {
		case k.equals("Test Description"):
			c.Description = v.text
		case k.equals("Run Time"):
			n, _, err := r.ints(k, v, 3, "hours, minutes and seconds")
			if err != nil {
				return err
			}
			for _, x := range n {
				if x < 0 {
					return r.errf(v, k.key(), "%q: a time must not be negative", v.text)
				}
			}
			c.RunTime = time.Duration(n[0])*time.Hour + time.Duration(n[1])*time.Minute + time.Duration(n[2])*time.Second
			r.runTimeAt, r.sawRunTime = v.n, true
		case k.is("Ramp Up Time"):
			n, _, err := r.ints(k, v, 1, "seconds")
			if err != nil {
				return err
			}
			if n[0] < 0 {
				return r.errf(v, k.key(), "%q: a time must not be negative", v.text)
			}
			c.RampUp = time.Duration(n[0]) * time.Second
		case k.equals("Default Workers to Spawn"), k.equals("Default Disk Workers to Spawn"),
			k.equals("Default Network Workers to Spawn"), k.equals("Record Results"):
			// Iometer's GUI defaults and result file content: the
			// manager list below names the workers that run.
		case k.equals("Worker Cycling"):
			err = c.cycling(r, k, v, &c.Workers, false)
		case k.equals("Disk Cycling"):
			err = c.cycling(r, k, v, &c.Targets, false)
		case k.equals("Queue Depth Cycling"):
			err = c.cycling(r, k, v, &c.Queue, true)
		case k.equals("Test Type"):
			err = c.testType(r, k, v)
		default:
			if version >= strictSetup {
				return r.errf(k, k.key(), "not a test setup key Iometer writes")
			}
			// Iometer 1998: an unknown key ends the section, and the
			// loaders look for the next section's header.
			for l, ok := r.peek(); ok && l.section() == ""; l, ok = r.peek() {
				r.i++
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// cycling reads "start [end] step type" (PageSetup's layout).
func (c *Config) cycling(r *reader, k, v line, dst *Cycling, withEnd bool) error {
	n, what := 2, "start, step and LINEAR or EXPONENTIAL"
	if withEnd {
		n, what = 3, "start, end, step and LINEAR or EXPONENTIAL"
	}
	vals, rest, err := r.ints(k, v, n, what)
	if err != nil {
		return err
	}
	for _, x := range vals {
		if x < 0 {
			return r.errf(v, k.key(), "%q: must not be negative", v.text)
		}
	}
	// Iometer's GUI turns a 0 into 1 before a test starts (CheckData).
	for i := range vals {
		vals[i] = max(vals[i], 1)
	}
	cy := Cycling{Start: vals[0], Step: vals[len(vals)-1], At: v.n}
	if withEnd {
		cy.End = vals[1]
	}
	if len(rest) != 1 {
		return r.errf(v, k.key(), "%q: want %s", v.text, what)
	}
	switch strings.ToUpper(rest[0]) {
	case "LINEAR", "0":
	case "EXPONENTIAL", "1":
		cy.Exponential = true
	default:
		return r.errf(v, k.key(), "step type %q: want LINEAR or EXPONENTIAL", rest[0])
	}
	*dst = cy
	return nil
}

func (c *Config) testType(r *reader, k, v line) error {
	t := strings.ToUpper(strings.TrimSpace(v.text))
	if n, err := strconv.Atoi(t); err == nil && n >= 0 && n < len(testTypes) {
		t = testTypes[n]
	}
	for _, known := range testTypes {
		if t == known {
			c.TestType, c.TestTypeAt = t, v.n
			return nil
		}
	}
	return r.errf(v, k.key(), "%q: want one of %s", v.text, strings.Join(testTypes, ", "))
}
