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

// option is one "key=value" (or bare "key") line. The key is as fio
// reads it (case-sensitive, trailing blanks cut); the value keeps what
// follows '=' as fio does, leading blanks included ("bs = 4k" is " 4k",
// which fio reads as 4).
type option struct {
	key, value string
	bare       bool
	at         pos
	global     bool // written in a [global] section
}

// section is one [name] with its options in file order.
type section struct {
	name   string
	global bool
	at     pos
	opts   []option
}

// maxIncludeDepth bounds include chains (and include loops).
const maxIncludeDepth = 16

// lexer splits job files into sections, following include directives.
type lexer struct {
	env      func(string) (string, bool)
	keywords map[string]string
	include  func(name string) ([]byte, error)
	sections []*section
}

// stripLine is fio's strip_blank_front and strip_blank_end: blanks cut at
// both ends, and everything from the first ';' and from the first '#'.
func stripLine(raw string) string {
	line := strings.TrimLeft(raw, " \t\r\v\f")
	if i := strings.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	return strings.TrimRightFunc(line, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

func (l *lexer) file(name string, data []byte, depth int, inInclude bool) error {
	if depth > maxIncludeDepth {
		return &Error{File: name, Reason: fmt.Sprintf("includes nested more than %d deep (a loop?)", maxIncludeDepth)}
	}
	for i, raw := range strings.Split(string(data), "\n") {
		at := pos{file: name, line: i + 1}
		line := stripLine(raw)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "include") && !strings.Contains(line, "=") {
			if err := l.includeFile(name, line, at, depth); err != nil {
				return err
			}
			continue
		}
		if line[0] == '[' {
			if inInclude {
				return &Error{File: name, Line: at.line, Reason: "an include file may not contain [] sections (fio's rule)"}
			}
			// fio takes what follows '[' and drops the line's last
			// character, whatever it is: "[job1]]" is the section "job1]".
			if len(line) < 3 || line[len(line)-1] != ']' {
				return &Error{File: name, Line: at.line, Reason: fmt.Sprintf("%q: a section header is [name] (fio drops the header's last character, whatever it is)", line)}
			}
			n := line[1 : len(line)-1]
			l.sections = append(l.sections, &section{name: n, global: strings.HasPrefix(n, "global"), at: at})
			continue
		}
		o := option{at: at}
		if k, v, ok := strings.Cut(l.substitute(line), "="); ok {
			o.key, o.value = strings.TrimRight(k, " \t"), v
		} else {
			o.key, o.bare = line, true
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
		o.global = s.global
		s.opts = append(s.opts, o)
	}
	return nil
}

// includeFile follows "include FILE": fio takes the name after
// "include" and one character, tries it as given and then next to the
// including file.
func (l *lexer) includeFile(name, line string, at pos, depth int) error {
	if len(l.sections) == 0 {
		return &Error{File: name, Line: at.line, Reason: "include before the first [section]: fio reads an include file's options into a section"}
	}
	inc := ""
	if len(line) > len("include ") {
		inc = line[len("include "):]
	}
	if l.include == nil {
		return &Error{File: name, Line: at.line, Reason: "include " + inc + ": no include files can be read here"}
	}
	body, err := l.include(inc)
	if err != nil && !path.IsAbs(inc) {
		joined := path.Join(path.Dir(name), inc)
		if b, jerr := l.include(joined); jerr == nil {
			body, err, inc = b, nil, joined
		} else {
			inc = joined
		}
	}
	if err != nil {
		return &Error{File: name, Line: at.line, Reason: "include " + inc + ": " + err.Error()}
	}
	return l.file(inc, body, depth+1, true)
}

// substitute is fio's option substitution: ${VAR} from the environment
// ("" when unset, as in fio), then the keywords $pagesize, $mb_memory
// and $ncpus.
func (l *lexer) substitute(v string) string {
	var b strings.Builder
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			break
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			b.WriteString(v)
			break
		}
		if j == 2 { // "${}" stays as it is
			b.WriteString(v[:i+3])
			v = v[i+3:]
			continue
		}
		b.WriteString(v[:i])
		if l.env != nil {
			val, _ := l.env(v[i+2 : i+j])
			b.WriteString(val)
		}
		v = v[i+j+1:]
	}
	out := b.String()
	for _, k := range []string{"$pagesize", "$mb_memory", "$ncpus"} {
		if r, ok := l.keywords[k]; ok {
			out = strings.ReplaceAll(out, k, r)
		}
	}
	return out
}
