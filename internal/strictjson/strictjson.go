package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
)

// KeyError is a key that encoding/json would take silently.
type KeyError struct {
	Path string // where the object is: "", "specs[0]", "specs[0].lines[1]"
	Key  string // the key as the document has it
	// Field is the field the key would have been taken as; "" when the
	// key is given twice.
	Field string
}

func (e *KeyError) Error() string {
	where := ""
	if e.Path != "" {
		where = e.Path + ": "
	}
	if e.Field == "" {
		return fmt.Sprintf("%sfield %q is given twice", where, e.Key)
	}
	return fmt.Sprintf("%sunknown field %q (keys are case-sensitive: did you mean %q?)", where, e.Key, e.Field)
}

// CountError is a document that holds more values of a type than the
// checker allows.
type CountError struct {
	Path string // where the first value past the bound is
	What string // what the values are, in words
	Most int
	Docs int // how many documents the bound held for (Spent)
}

func (e *CountError) Error() string {
	return fmt.Sprintf("%s: more than %d %s in %s", e.Path, e.Most, e.What, inWhat(e.Docs))
}

// inWhat names the documents a bound holds for.
func inWhat(docs int) string {
	if docs > 1 {
		return fmt.Sprintf("the %d documents read together", docs)
	}
	return "one document"
}

// Checker checks documents against Go types. As maps a type that decodes
// itself (a json.Unmarshaler, whose fields the checker cannot see) to the
// type of its wire form, which is checked instead; other such types are
// not looked into. Most bounds how many values (objects, not nulls) of a
// type one document may hold: a type whose value takes far more memory
// than its JSON (a latency histogram's dense buckets, 34 KiB, from a
// 90-byte object) would let a small document take gigabytes. A counted
// type is one the checker walks: a struct, or one As maps to a struct.
//
// MostBytes, when not 0, bounds the memory the decoded document takes,
// counted as Go lays it out: every slice element, map entry and value
// behind a pointer at its type's size (an empty object in a list of
// 900-byte structs is 3 bytes of JSON: a 30 MB document of them took
// 19 GiB before the OOM killer ended it). A number or string is counted
// at its Go size, its text not (the text is no bigger than the bytes
// read).
type Checker struct {
	As        map[reflect.Type]reflect.Type
	Most      map[reflect.Type]Bound
	MostBytes int64

	spent *Spent // of one Check, or shared (CheckShared)
}

// SizeError is a document that would take more memory once decoded
// than the checker allows.
type SizeError struct {
	Path string // where the value past the bound is
	Most int64
	Docs int // how many documents the bound held for (Spent)
}

func (e *SizeError) Error() string {
	where := e.Path
	if where == "" {
		where = "the document"
	}
	what := "the document"
	if e.Docs > 1 {
		what = inWhat(e.Docs)
	}
	return fmt.Sprintf("%s: %s would take more than %d MiB of memory once read (its lists are too long)", where, what, e.Most>>20)
}

// Spent is what the documents checked against it took: documents read
// together (several files of one report) share one bound, so that many
// documents each within it cannot take many times it between them.
type Spent struct {
	counts map[reflect.Type]int
	bytes  int64
	docs   int
}

// Bound is how many values of a type a document may hold, and what they
// are called in the error.
type Bound struct {
	Most int
	What string
}

// Check is Checker{}.Check.
func Check(data []byte, v any, path string) error { return Checker{}.Check(data, v, path) }

// Check walks data, a JSON document, beside the type of v as
// encoding/json would decode it into v, and returns the first *KeyError
// (path prefixes the place it names). Keys no field matches in any case
// are left to the decoder (DisallowUnknownFields, or ignored), and so is
// any other error of the document: a document that is not JSON is not
// this check's to refuse.
func (c Checker) Check(data []byte, v any, path string) error {
	return c.CheckShared(data, v, path, &Spent{})
}

// CheckShared is Check with the bounds counted in spent, which earlier
// documents may have used.
func (c Checker) CheckShared(data []byte, v any, path string, spent *Spent) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if spent.counts == nil {
		spent.counts = map[reflect.Type]int{}
	}
	spent.docs++
	c.spent = spent
	err := c.value(dec, reflect.TypeOf(v), path)
	var ke *KeyError
	if errors.As(err, &ke) {
		return ke
	}
	var ce *CountError
	if errors.As(err, &ce) {
		return ce
	}
	var se *SizeError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// charge counts n values of type t against MostBytes (a pointer's
// value is charged where it is read).
func (c Checker) charge(t reflect.Type, n int64, path string) error {
	if c.MostBytes == 0 || t == nil {
		return nil
	}
	if c.spent.bytes += n * int64(t.Size()); c.spent.bytes > c.MostBytes {
		return &SizeError{Path: path, Most: c.MostBytes, Docs: c.spent.docs}
	}
	return nil
}

// elements counts the values of a JSON array (0 for anything else):
// its commas outside strings and nested values, plus one.
func elements(raw []byte) int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '[' || len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0 {
		return 0
	}
	n, depth, inString, escaped := int64(1), 0, false, false
	for _, b := range raw[1 : len(raw)-1] {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '[' || b == '{':
			depth++
		case b == ']' || b == '}':
			depth--
		case b == ',' && depth == 0:
			n++
		}
	}
	return n
}

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// hasKeys: t's JSON may hold an object whose keys matter (a struct's or
// a map's); a value of any other type (numbers, strings, lists of them:
// a histogram's buckets) is skipped whole, the fast way.
func hasKeys(t reflect.Type) bool {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			t = t.Elem()
		case reflect.Struct, reflect.Map:
			return true
		default:
			return false
		}
	}
}

// opaque: a type whose JSON encoding/json does not map onto fields.
func opaque(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Kind() == reflect.Interface || t.Implements(unmarshaler) || pt.Implements(unmarshaler) ||
		t.Implements(textUnmarshaler) || pt.Implements(textUnmarshaler)
}

// value reads one value of type t.
func (c Checker) value(dec *json.Decoder, t reflect.Type, path string) error {
	pointed := t != nil && t.Kind() == reflect.Pointer
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	counted := t
	bound, isCounted := c.Most[t]
	if as, ok := c.As[t]; ok {
		t = as
	}
	// t nil: a value no field takes, which the decoder refuses or
	// ignores. It is skipped whole (encoding/json's scanner, linear and
	// bounded in depth): Token, which walks it here, costs time
	// quadratic in its nesting.
	if t == nil || opaque(t) || !hasKeys(t) {
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
		if t != nil && t.Kind() == reflect.Slice && !opaque(t) {
			return c.charge(t.Elem(), elements(skip), path)
		}
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if _, isDelim := tok.(json.Delim); isDelim && pointed {
		// A value behind a pointer (the document's top, a field
		// "summary": {…}, a list of pointers' element) is allocated.
		if err := c.charge(t, 1, path); err != nil {
			return err
		}
	}
	switch tok {
	case json.Delim('{'):
		if isCounted {
			if c.spent.counts[counted]++; c.spent.counts[counted] > bound.Most {
				return &CountError{Path: path, What: bound.What, Most: bound.Most, Docs: c.spent.docs}
			}
		}
		switch t.Kind() {
		case reflect.Struct:
			return c.object(dec, path, fieldsOf(t), nil)
		case reflect.Map:
			return c.object(dec, path, nil, t.Elem())
		}
		return c.object(dec, path, nil, nil)
	case json.Delim('['):
		var elem, allocated reflect.Type
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			elem = t.Elem()
		}
		if t.Kind() == reflect.Slice { // an array's elements are its own
			allocated = elem
		}
		for i := 0; dec.More(); i++ {
			if err := c.charge(allocated, 1, path); err != nil {
				return err
			}
			if err := c.value(dec, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ]
		return err
	}
	return nil // a scalar
}

// object reads the rest of an object after its '{': a struct's (fields
// set) or a map's (elem set), or one whose type is not an object's
// (neither: its values are skipped, its repeated keys found).
func (c Checker) object(dec *json.Decoder, path string, fields map[string]reflect.Type, elem reflect.Type) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			return &KeyError{Path: path, Key: key}
		}
		seen[key] = true
		next := elem
		if fields != nil {
			ft, ok := fields[key]
			if !ok {
				for name := range fields {
					if strings.EqualFold(name, key) {
						return &KeyError{Path: path, Key: key, Field: name}
					}
				}
			}
			next = ft
		}
		if elem != nil {
			if err := c.charge(elem, 1, path); err != nil {
				return err
			}
			c.spent.bytes += int64(len(key)) + 16 // the key, a string
		}
		if err := c.value(dec, next, join(path, key)); err != nil {
			return err
		}
	}
	_, err := dec.Token() // }
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// fieldsOf is the JSON names of a struct's fields as encoding/json sees
// them: tags, untagged exported fields by their Go name, the fields of
// untagged embedded structs promoted, a shallower name hiding a deeper.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	visited := map[reflect.Type]bool{}
	for level := []reflect.Type{t}; len(level) > 0; {
		var next []reflect.Type
		found := map[string]reflect.Type{}
		for _, st := range level {
			if visited[st] {
				continue
			}
			visited[st] = true
			for i := range st.NumField() {
				f := st.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
					next = append(next, ft)
					continue
				}
				if !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				if _, hidden := out[name]; !hidden {
					found[name] = f.Type
				}
			}
		}
		for k, v := range found {
			out[k] = v
		}
		level = next
	}
	fieldCache.Store(t, out)
	return out
}
