package textsafe

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Safe says whether r is shown as itself: a printable character
// (unicode.IsPrint: letters, marks, numbers, punctuation, symbols) or
// the ASCII space. Control characters, format characters (bidi
// overrides and isolates, zero-width joiners), other spaces, private
// use and unassigned code points are not.
func Safe(r rune) bool { return r == ' ' || r != utf8.RuneError && unicode.IsPrint(r) }

// appendRune writes r, which is not Safe, as strconv.Quote escapes it:
// \n, \r, \t, \a, \x1b, \u202e.
func appendRune(b []byte, r rune) []byte {
	q := strconv.QuoteRune(r)
	return append(b, q[1:len(q)-1]...)
}

// appendEscaped appends s with every character that is not Safe
// escaped; keep says which of them pass as they are (NewWriter keeps
// the newlines and tabs of the text it carries).
func appendEscaped(b []byte, s string, keep func(rune) bool) []byte {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b = append(b, `\x`...)
			b = append(b, "0123456789abcdef"[s[i]>>4], "0123456789abcdef"[s[i]&15])
		case r == utf8.RuneError: // U+FFFD as written
			b = append(b, `\ufffd`...)
		case Safe(r) || keep != nil && keep(r):
			b = append(b, s[i:i+n]...)
		default:
			b = appendRune(b, r)
		}
		i += n
	}
	return b
}

// Escape is s as one piece of text: every character that is not Safe,
// newlines and tabs included, is written as its Go escape (\x1b, \r,
// \n, \u202e), and a byte that is not UTF-8 as \xNN. A Safe string is
// returned as it is. Backslashes are not escaped: the text is read by
// people, not parsed back.
func Escape(s string) string {
	for _, r := range s {
		if !Safe(r) {
			return string(appendEscaped(make([]byte, 0, len(s)+8), s, nil))
		}
	}
	return s
}

// Cell is s as a cell of a table a program reads (CSV): Escape's, but a
// tab is kept, as spreadsheets read it (whitespace on a terminal).
func Cell(s string) string {
	for _, r := range s {
		if !Safe(r) && r != '\t' {
			return string(appendEscaped(make([]byte, 0, len(s)+8), s, func(r rune) bool { return r == '\t' }))
		}
	}
	return s
}

// Line is s as one line of at most limit characters: Escape's, with
// tabs as spaces, cut with an ellipsis when longer.
func Line(s string, limit int) string {
	b := make([]byte, 0, len(s))
	n := 0
	for i := 0; i < len(s); {
		if n >= limit {
			b = append(b, "…"...)
			break
		}
		n++
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\t' {
			b = append(b, ' ')
		} else {
			b = appendEscaped(b, s[i:i+size], nil)
		}
		i += size
	}
	return string(b)
}

// Sprintf is fmt.Sprintf with its arguments of string kind, its errors
// and its Stringers escaped (Escape): format is the caller's own words,
// the arguments are what documents, files and hosts said. Other
// arguments (numbers) are formatted as they are. %q would quote the
// escapes again: use %s.
func Sprintf(format string, args ...any) string {
	esc := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case error:
			esc[i] = Escape(v.Error())
		case fmt.Stringer:
			esc[i] = Escape(v.String())
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
				esc[i] = Escape(rv.String())
			} else {
				esc[i] = a
			}
		}
	}
	return fmt.Sprintf(format, esc...)
}

// Writer escapes what is written through it as Escape does, but for the
// newlines and tabs that lay the text out.
type Writer struct{ w io.Writer }

// NewWriter writes to w what is written to it, escaped. A character
// split over two writes is escaped byte by byte: write whole strings.
func NewWriter(w io.Writer) *Writer {
	if sw, ok := w.(*Writer); ok {
		return sw
	}
	return &Writer{w: w}
}

func layout(r rune) bool { return r == '\n' || r == '\t' }

// Write writes p escaped and returns len(p) when all of it was written.
func (w *Writer) Write(p []byte) (int, error) {
	s := string(p)
	if Escape(s) == s {
		return w.w.Write(p)
	}
	if _, err := w.w.Write(appendEscaped(make([]byte, 0, len(p)+16), s, layout)); err != nil {
		return 0, err
	}
	return len(p), nil
}
