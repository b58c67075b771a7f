package config

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The schema check walks the YAML node tree against the raw types, so that
// every unknown key and every value of the wrong type is reported with the
// line it is on. Viper decodes the same bytes afterwards; by then nothing
// it could reject is left.

// nameRE is what target, job and module names may look like. Viper matches
// keys case-insensitively (it lowercases them), so upper case would be
// silently folded; dots would split the key path.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// ValidName says whether name can name a target, job or module in a
// config (the fleet's --target is checked by it before any host is asked).
func ValidName(name string) bool { return nameRE.MatchString(name) }

var durationType = reflect.TypeOf(time.Duration(0))

type walker struct {
	ps *problems
	// names holds the names defined under each named section, in file
	// order, including empty definitions that viper would drop.
	names map[string][]string
	// merged memoises the pairs of each mapping with its merge keys
	// expanded: without it, mappings that merge several copies of one
	// another (a few hundred bytes) take exponential time. merging holds
	// the mappings being expanded, to catch a mapping that merges itself.
	merged  map[*yaml.Node][][2]*yaml.Node
	merging map[*yaml.Node]bool
	// keys counts the keys walked, anchors and merges expanded: each
	// alias of a mapping walks it again, so a few kilobytes can stand for
	// millions of keys (and as many problems and recorded lines).
	keys int
}

// maxKeys bounds the keys of a file once expanded: a thousand jobs of ten
// keys each, far more than any real configuration.
const maxKeys = 10000

func newWalker(ps *problems) *walker {
	return &walker{ps: ps, names: map[string][]string{}, merged: map[*yaml.Node][][2]*yaml.Node{}, merging: map[*yaml.Node]bool{}}
}

// fields lists the keys of a raw struct type (squashed embedded structs
// included) with their field types and kind tags.
type field struct {
	typ  reflect.Type
	kind string
}

func fieldsOf(t reflect.Type) map[string]field {
	out := map[string]field{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if tag == ",squash" {
			for k, v := range fieldsOf(f.Type) {
				out[k] = v
			}
			continue
		}
		out[tag] = field{typ: f.Type, kind: f.Tag.Get("kind")}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mappingPairs returns the key/value pairs of a mapping, with YAML merge
// keys (<<: *anchor) expanded: a merged key is left out when the mapping
// gives it itself or an earlier merged mapping gave it (YAML's rules). A
// merge of a mapping into itself (through an anchor it is inside of) is
// reported at path and ignored; each mapping is expanded once per walk.
func (w *walker) mappingPairs(path string, n *yaml.Node) [][2]*yaml.Node {
	if out, ok := w.merged[n]; ok {
		return out
	}
	w.merging[n] = true
	defer delete(w.merging, n)
	explicit := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Tag != "!!merge" {
			explicit[k.Value] = true
		}
	}
	var out [][2]*yaml.Node
	merged := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag != "!!merge" {
			out = append(out, [2]*yaml.Node{k, v})
			continue
		}
		for _, m := range mergeSources(v) {
			if m.Kind != yaml.MappingNode {
				continue
			}
			if w.merging[m] {
				w.ps.addAt(k.Line, path, "the merge key (<<) merges a mapping that contains it")
				continue
			}
			for _, kv := range w.mappingPairs(path, m) {
				if !explicit[kv[0].Value] && !merged[kv[0].Value] {
					merged[kv[0].Value] = true
					out = append(out, kv)
				}
			}
		}
	}
	w.merged[n] = out
	return out
}

func mergeSources(v *yaml.Node) []*yaml.Node {
	v = deref(v)
	if v.Kind == yaml.SequenceNode {
		var out []*yaml.Node
		for _, c := range v.Content {
			out = append(out, deref(c))
		}
		return out
	}
	return []*yaml.Node{v}
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// structure checks a mapping against a raw struct type.
func (w *walker) structure(path string, n *yaml.Node, t reflect.Type) {
	n = deref(n)
	if isNull(n) {
		return // an empty section
	}
	if n.Kind != yaml.MappingNode {
		got := describe(n)
		if path == "" {
			// Not under any known key: what the file holds is not shown
			// (a config path may be a symlink to a secret).
			got = kindOf(n)
		}
		w.ps.add(path, "want a mapping of keys to values, got %s", got)
		return
	}
	fields := fieldsOf(t)
	for _, kv := range w.pairs(path, n) {
		k, v := kv[0], kv[1]
		p := join(path, k.Value)
		f, ok := fields[k.Value]
		if !ok {
			w.ps.addAt(k.Line, path, "%s", unknownKey(k.Value, fields))
			continue
		}
		w.value(p, v, f)
	}
}

// named checks a mapping of names to raw structs (targets, jobs, modules).
func (w *walker) named(path string, n *yaml.Node, t reflect.Type) []string {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		w.ps.add(path, "want a mapping of names to definitions, got %s", describe(n))
		return nil
	}
	var names []string
	for _, kv := range w.pairs(path, n) {
		k, v := kv[0], kv[1]
		p := join(path, k.Value)
		if !nameRE.MatchString(k.Value) {
			w.ps.add(p, "bad name: use lowercase letters, digits, '-' and '_', starting with a letter or digit")
			continue
		}
		names = append(names, k.Value)
		w.structure(p, v, t)
	}
	return names
}

// pairs returns a mapping's pairs, records the line of each key and
// reports keys given twice (viper would silently keep one of them).
func (w *walker) pairs(path string, n *yaml.Node) [][2]*yaml.Node {
	if w.keys > maxKeys {
		return nil
	}
	mp := w.mappingPairs(path, n)
	if w.keys += len(mp); w.keys > maxKeys {
		w.ps.add("", "the file holds more than %d keys once its anchors and merge keys are expanded", maxKeys)
		return nil
	}
	var out [][2]*yaml.Node
	for _, kv := range mp {
		k := kv[0]
		p := join(path, k.Value)
		if first, dup := w.ps.lines[p]; dup {
			w.ps.addAt(k.Line, path, "a key is given twice (first on line %d)", first)
			continue
		}
		w.ps.lines[p] = k.Line
		out = append(out, kv)
	}
	return out
}

func (w *walker) value(path string, n *yaml.Node, f field) {
	n = deref(n)
	t := f.typ
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		w.structure(path, n, t)
		return
	case reflect.Map:
		w.names[path] = w.named(path, n, t.Elem())
		return
	}
	if isNull(n) {
		w.ps.add(path, "has no value")
		return
	}
	switch {
	case f.kind == "size":
		if !isScalar(n, "!!str", "!!int") {
			w.ps.add(path, "want a size like 4k, 64KiB or 1GiB, got %s", describe(n))
		}
	case t == durationType:
		if isScalar(n, "!!int") && n.Value == "0" {
			break // "ramp: 0" is unambiguous
		}
		if !isScalar(n, "!!str") {
			w.ps.add(path, "want a duration like 30s or 1h, got %s", describe(n))
		} else if _, err := time.ParseDuration(n.Value); err != nil {
			w.ps.add(path, "want a duration like 30s or 1h, got %q", n.Value)
		}
	case t.Kind() == reflect.String:
		if !isScalar(n, "!!str") {
			w.ps.add(path, "want a string, got %s", describe(n))
		}
	case t.Kind() == reflect.Bool:
		if !isScalar(n, "!!bool") {
			w.ps.add(path, "want true or false, got %s", describe(n))
		}
	case t.Kind() == reflect.Int:
		if !isScalar(n, "!!int") {
			w.ps.add(path, "want a whole number, got %s", describe(n))
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		if n.Kind != yaml.SequenceNode {
			w.ps.add(path, "want a list, got %s", describe(n))
			break
		}
		for i, e := range n.Content { // each entry keeps its line for the problems about it
			e = deref(e)
			p := fmt.Sprintf("%s[%d]", path, i)
			w.ps.lines[p] = e.Line
			if !isScalar(e, "!!str") {
				w.ps.add(p, "want a string, got %s", describe(e))
			}
		}
	default:
		panic(fmt.Sprintf("config: no schema rule for %s", t))
	}
}

func isScalar(n *yaml.Node, tags ...string) bool {
	if n.Kind != yaml.ScalarNode {
		return false
	}
	for _, t := range tags {
		if n.Tag == t {
			return true
		}
	}
	return false
}

// describe names what a node is, for "want X, got Y": a scalar with its
// value (it is the value of a known key), else its kind.
func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		if n.Tag == "!!str" {
			return fmt.Sprintf("%q", n.Value)
		}
		return n.Value
	}
	return kindOf(n)
}

// schemaKeys are every key the config has somewhere (suite is a job's
// key, not a module's): such a key in the wrong place is named.
var schemaKeys = func() map[string]bool {
	m := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for k, f := range fieldsOf(t) {
			if m[k] {
				continue
			}
			m[k] = true
			ft := f.typ
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Map || ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != durationType {
				walk(ft)
			}
		}
	}
	walk(reflect.TypeOf(rawConfig{}))
	return m
}()

// kindOf names what a node is without its content.
func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return "a single value"
	}
	return "something else"
}

// unknownKey reports a key the schema does not have. Its text is shown
// only when it is a near spelling of a known key (a typo): a config path
// may be a symlink to a file that is no config at all (/etc/shadow), and
// its lines must not reach a log or a reload answer.
func unknownKey(key string, fields map[string]field) string {
	if s := suggest(key, fields); strings.HasPrefix(s, " (did you mean") || schemaKeys[key] {
		return fmt.Sprintf("unknown key %q%s", key, s)
	}
	return "unknown key (its text is not shown: it is no known key)" + suggest(key, fields)
}

// suggest offers the closest known key for a misspelt one, else lists them.
func suggest(key string, fields map[string]field) string {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	sort.Strings(known)
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return " (known: " + strings.Join(known, ", ") + ")"
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
