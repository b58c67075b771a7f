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
	// written is the value as the file has it, before ${VAR} and the
	// keywords are replaced: what every output records, so that an
	// environment variable's value (a token, a password) never reaches
	// a shared result.
	written string
	bare    bool
	at      pos
	global  bool // written in a [global] section
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

// The include budget bounds the whole include tree, not just its depth:
// 4 includes per level over 15 levels are a billion files. A job file of
// hundreds of sections that each include a shared options file stays
// well inside it. Each file's own size is bounded by its reader (the
// CLI's: safefile.JobFile).
const (
	MaxIncludes     = 1024     // include directives followed, in the whole tree
	MaxIncludeBytes = 16 << 20 // bytes of the job file and every included file
)

// lexer splits job files into sections, following include directives.
type lexer struct {
	env      func(string) (string, bool)
	keywords map[string]string
	include  func(name string) ([]byte, error)
	sections []*section
	// includes and bytes are what the tree read so far (the budget).
	includes int
	bytes    int64
}

// optionErr is a refusal about the option key on line at: the key is
// named only when fio or ioprobe knows it, never the text of another
// line (an included file may be anything).
func optionErr(at pos, sect, key, reason string) *Error {
	e := &Error{File: at.file, Line: at.line, Section: sect, Reason: reason}
	if knownOption(key) || knownOption(strings.ToLower(key)) {
		e.Option = key
	} else {
		e.Reason += " (no option fio knows: the line's text is not shown)"
	}
	return e
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
	if l.bytes += int64(len(data)); l.bytes > MaxIncludeBytes {
		return &Error{File: name, Reason: fmt.Sprintf("the job file and its includes hold more than %d MiB: ioprobe reads at most that much of an include tree", MaxIncludeBytes>>20)}
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
				return &Error{File: name, Line: at.line, Reason: "not a section header: a section header is [name] (fio drops the header's last character, whatever it is)"}
			}
			n := line[1 : len(line)-1]
			l.sections = append(l.sections, &section{name: n, global: strings.HasPrefix(n, "global"), at: at})
			continue
		}
		o := option{at: at}
		if k, v, ok := strings.Cut(l.substitute(line), "="); ok {
			o.key, o.value, o.written = strings.TrimRight(k, " \t"), v, v
			if _, w, ok := strings.Cut(line, "="); ok {
				o.written = w
			}
		} else {
			o.key, o.bare = line, true
		}
		if len(l.sections) == 0 {
			if inInclude {
				// fio's include files hold options for the section that
				// includes them.
				return optionErr(at, "", o.key, "an included option outside any section")
			}
			return optionErr(at, "", o.key, "option before the first [section]")
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
	if l.includes++; l.includes > MaxIncludes {
		return &Error{File: name, Line: at.line, Reason: fmt.Sprintf("include %s: the job file's include tree holds more than %d includes: ioprobe follows at most that many", inc, MaxIncludes)}
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
