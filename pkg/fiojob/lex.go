package fiojob

import (
	"fmt"
	"path"
	"strings"
)

// Error is a job file that ioprobe refuses: where, which option, why.
type Error struct {
	File    string
	Line    int
	Section string
	Option  string
	Reason  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		fmt.Fprintf(&b, "%s:", e.File)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Section != "" {
		fmt.Fprintf(&b, "[%s] ", e.Section)
	}
	if e.Option != "" {
		fmt.Fprintf(&b, "%s: ", e.Option)
	}
	b.WriteString(e.Reason)
	return b.String()
}

// pos is where a line came from.
type pos struct {
	file string
	line int
}

// option is one "key=value" (or bare "key") line.
type option struct {
	key, value string
	bare       bool
	at         pos
}

// section is one [name] with its options in file order.
type section struct {
	name string
	at   pos
	opts []option
}

// maxIncludeDepth bounds include chains (and include loops).
const maxIncludeDepth = 16

// lexer splits job files into sections, following include directives.
type lexer struct {
	env      func(string) (string, bool)
	include  func(name string) ([]byte, error)
	sections []*section
}

func (l *lexer) file(name string, data []byte, depth int, inInclude bool) error {
	if depth > maxIncludeDepth {
		return &Error{File: name, Reason: fmt.Sprintf("includes nested more than %d deep (a loop?)", maxIncludeDepth)}
	}
	for i, raw := range strings.Split(string(data), "\n") {
		at := pos{file: name, line: i + 1}
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "include "); ok {
			inc := strings.TrimSpace(rest)
			if !path.IsAbs(inc) {
				inc = path.Join(path.Dir(name), inc)
			}
			if l.include == nil {
				return &Error{File: name, Line: at.line, Reason: "include " + inc + ": no include files can be read here"}
			}
			body, err := l.include(inc)
			if err != nil {
				return &Error{File: name, Line: at.line, Reason: "include " + inc + ": " + err.Error()}
			}
			if err := l.file(inc, body, depth+1, true); err != nil {
				return err
			}
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 || strings.TrimSpace(line[end+1:]) != "" {
				return &Error{File: name, Line: at.line, Reason: fmt.Sprintf("%q: a section header is [name]", line)}
			}
			if inInclude {
				return &Error{File: name, Line: at.line, Reason: "an include file may not contain [] sections (fio's rule)"}
			}
			n := strings.TrimSpace(line[1:end])
			if n == "" {
				return &Error{File: name, Line: at.line, Reason: "a section needs a name"}
			}
			l.sections = append(l.sections, &section{name: n, at: at})
			continue
		}
		// fio ends an option line at the first ';' or '#'.
		if i := strings.IndexAny(line, ";#"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		o := option{at: at}
		if k, v, ok := strings.Cut(line, "="); ok {
			o.key, o.value = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
			o.value = l.expand(o.value)
		} else {
			o.key, o.bare = strings.ToLower(line), true
		}
		if len(l.sections) == 0 {
			if inInclude {
				// fio's include files hold options for the section that
				// includes them.
				return &Error{File: name, Line: at.line, Option: o.key, Reason: "an included option outside any section"}
			}
			return &Error{File: name, Line: at.line, Option: o.key, Reason: "option before the first [section]"}
		}
		s := l.sections[len(l.sections)-1]
		s.opts = append(s.opts, o)
	}
	return nil
}

// expand replaces ${VAR} with the environment's value ("" when unset, as
// fio does).
func (l *lexer) expand(v string) string {
	var b strings.Builder
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String()
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			b.WriteString(v)
			return b.String()
		}
		b.WriteString(v[:i])
		if l.env != nil {
			val, _ := l.env(v[i+2 : i+j])
			b.WriteString(val)
		}
		v = v[i+j+1:]
	}
}
