package config

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Problem is one thing wrong with a config file: where (file, line of the
// key, dotted path) and what.
type Problem struct {
	File string
	Line int    // 0 when the problem has no single place
	Path string // dotted key path, "" for the whole file
	Msg  string
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error is every problem found in a config file, in the order of the file.
type Error struct {
	Problems []Problem
}

// Error lists the problems one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// problems collects problems while a file is checked.
type problems struct {
	file  string
	lines map[string]int // dotted path → line of its key
	list  []Problem
}

// add records a problem at path; the line is that of the nearest key on the
// path that the file has (a missing key is reported where its parent is).
func (ps *problems) add(path, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: ps.lineOf(path), Path: path, Msg: fmt.Sprintf(format, args...)})
}

// addAt records a problem at an explicit line (an unknown key is reported
// on its own line, under its parent's path).
func (ps *problems) addAt(line int, path, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (ps *problems) lineOf(path string) int {
	for p := path; p != ""; {
		if l, ok := ps.lines[p]; ok {
			return l
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	out := append([]Problem(nil), ps.list...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	if len(out) > maxProblems {
		more := len(out) - maxProblems
		out = append(out[:maxProblems], Problem{File: ps.file, Msg: fmt.Sprintf("%d more problems not shown", more)})
	}
	return &Error{Problems: out}
}

// maxProblems is how many problems an error lists, as compilers stop
// after so many errors: past it, the rest are noise (or an attack).
const maxProblems = 100

// syntaxError reports a file that is not YAML. The parser's own text is
// kept as it is: its "line N" counts from 0 for some errors and from 1 for
// others, so it cannot become a FILE:LINE prefix.
func syntaxError(file string, err error) *Error {
	return &Error{Problems: []Problem{{File: file, Msg: unquote(err.Error())}}}
}

// quoted is what a YAML parser's message quotes of the file: an anchor's
// name ("unknown anchor 'x' referenced"). Its other messages are its own
// words (and one-character tokens: "did not find expected ',' or '}'").
var quoted = regexp.MustCompile(`anchor '[^']*'`)

// unquote drops the file's text that a parser's message quotes: the
// message and its line stay, the content (perhaps a secret behind a
// symlink) does not.
func unquote(msg string) string {
	return quoted.ReplaceAllString(msg, "anchor (its name is not shown)")
}

// human writes a duration without trailing zero units: 1m, 1h30m, 1m10s.
func human(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
