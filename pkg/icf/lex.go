package icf

import (
	"fmt"
	"strings"
)

// Error is a refusal: the file, line, section and key it is about, and
// why. The CLI maps it to exit status 2.
type Error struct {
	File    string
	Line    int
	Section string // "ACCESS SPECIFICATIONS", "TEST SETUP", …
	Key     string // the key line as written, without its quote
	Reason  string
}

// Error reads "FILE:LINE: [SECTION] 'KEY: REASON", leaving out what is
// not known.
func (e *Error) Error() string {
	msg := e.Reason
	if e.Key != "" {
		msg = "'" + e.Key + ": " + msg
	}
	if e.Section != "" {
		msg = "[" + e.Section + "] " + msg
	}
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if where != "" {
		msg = where + ": " + msg
	}
	return msg
}

// Section names as the file spells them (upper case).
const (
	secTestSetup = "TEST SETUP"
	secDisplay   = "RESULTS DISPLAY"
	secSpecs     = "ACCESS SPECIFICATIONS"
	secManagers  = "MANAGER LIST"
)

var sections = []string{secTestSetup, secDisplay, secSpecs, secManagers}

// line is one trimmed line of the file and its number (from 1).
type line struct {
	text string
	n    int
}

// isKey: Iometer's keys and comments start with a single quote.
func (l line) isKey() bool { return strings.HasPrefix(l.text, "'") }

// key is the key without its quote.
func (l line) key() string { return strings.TrimSpace(strings.TrimPrefix(l.text, "'")) }

// is reports whether the key line starts with want, without regard to
// case (Iometer compares this way, and ignores the rest of a section
// header's line).
func (l line) is(want string) bool {
	k := l.key()
	return len(k) >= len(want) && strings.EqualFold(k[:len(want)], want)
}

// equals reports whether the key is exactly want, without regard to case.
func (l line) equals(want string) bool { return strings.EqualFold(l.key(), want) }

// section returns the section a header line opens, or "".
func (l line) section() string {
	if !l.isKey() {
		return ""
	}
	for _, s := range sections {
		if l.is(s) {
			return s
		}
	}
	return ""
}

// reader walks the lines of a file.
type reader struct {
	file  string
	lines []line
	i     int
	sec   string // the section being read, for errors
	// What the checks after parsing need to know of where things were:
	// the run time's line and whether it was given, the access
	// specifications' section's line.
	runTimeAt, specsAt int
	sawRunTime         bool
}

func newReader(file string, data []byte) *reader {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	raw := strings.Split(text, "\n")
	r := &reader{file: file, lines: make([]line, len(raw))}
	for i, s := range raw {
		r.lines[i] = line{text: strings.TrimSpace(s), n: i + 1}
	}
	return r
}

func (r *reader) eof() bool { return r.i >= len(r.lines) }

// next returns the next line (blank ones too: a value may be empty).
func (r *reader) next() (line, bool) {
	if r.eof() {
		return line{n: r.lastLine()}, false
	}
	l := r.lines[r.i]
	r.i++
	return l, true
}

// peek returns the next line without consuming it.
func (r *reader) peek() (line, bool) {
	if r.eof() {
		return line{n: r.lastLine()}, false
	}
	return r.lines[r.i], true
}

// skipBlank consumes blank lines.
func (r *reader) skipBlank() {
	for !r.eof() && r.lines[r.i].text == "" {
		r.i++
	}
}

func (r *reader) lastLine() int { return len(r.lines) }

// nextKey returns the next key line, skipping blank lines; a value line
// where a key is expected is an error.
func (r *reader) nextKey(expect string) (line, error) {
	r.skipBlank()
	l, ok := r.next()
	if !ok {
		return l, r.errf(l, "", "the file ends where %s was expected", expect)
	}
	if !l.isKey() {
		return l, r.errf(l, "", "a line that is not a key (its text is not shown) where %s was expected", expect)
	}
	return l, nil
}

// pair reads the next key, which must be want, and its value.
func (r *reader) pair(want, where string) (line, line, error) {
	k, err := r.nextKey("'" + want)
	if err != nil {
		return k, k, err
	}
	if !k.equals(want) {
		return k, k, r.errf(k, k.key(), "want '%s %s", want, where)
	}
	v, err := r.value(k)
	return k, v, err
}

// value returns the value of key k, as Iometer's GetPair finds it: quoted
// lines after the key are column headings and skipped, then the next line
// is the value. An END line (or a section header) means the key has no
// value: it is left for the caller and "" returned.
func (r *reader) value(k line) (line, error) {
	for {
		l, ok := r.peek()
		if !ok {
			return l, r.errf(k, k.key(), "the file ends before the value")
		}
		if !l.isKey() {
			r.i++
			return l, nil
		}
		if l.is("End") || l.is("Version") || l.section() != "" {
			return line{n: k.n}, nil
		}
		r.i++
	}
}

func (r *reader) errf(l line, key, format string, args ...any) error {
	return &Error{File: r.file, Line: l.n, Section: r.sec, Key: key, Reason: fmt.Sprintf(format, args...)}
}
