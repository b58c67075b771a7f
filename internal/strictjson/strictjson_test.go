package strictjson

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

type line struct {
	Share   int `json:"share"`
	ReadPct int `json:"read_pct"`
}

type base struct {
	Name    string `json:"name"`
	ReadPct int    `json:"read_pct"`
	Lines   []line `json:"lines"`
	Skipped int    `json:"-"`
	Untag   int
}

type spec struct {
	base
	ReadPct *int            `json:"read_pct"` // hides base's
	Extra   map[string]line `json:"extra"`
	Raw     json.RawMessage `json:"raw"`
	Self    *selfDecoding   `json:"self"`
}

// selfDecoding decodes itself: the checker does not look into it unless
// told its wire form.
type selfDecoding struct{ count int }

func (s *selfDecoding) UnmarshalJSON(b []byte) error {
	var w selfWire
	err := json.Unmarshal(b, &w)
	s.count = w.Count
	return err
}

type selfWire struct {
	Count int `json:"count"`
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		doc, want string
	}{
		{`{"name": "a", "read_pct": 1, "lines": [{"share": 1, "read_pct": 2}], "Untag": 1, "extra": {"X": {"share": 1}}, "raw": {"Name": 1}, "self": {"Count": 1}}`, ""},
		{`{"Lines": []}`, `unknown field "Lines" (keys are case-sensitive: did you mean "lines"?)`},
		{`{"LINES": []}`, `unknown field "LINES" (keys are case-sensitive: did you mean "lines"?)`},
		{`{"line\u017f": []}`, `unknown field "line` + "\u017f" + `" (keys are case-sensitive: did you mean "lines"?)`},
		{`{"lines": [{"share": 1}, {"Read_Pct": 5}]}`, `lines[1]: unknown field "Read_Pct" (keys are case-sensitive: did you mean "read_pct"?)`},
		{`{"extra": {"a": {"SHARE": 1}}}`, `extra.a: unknown field "SHARE" (keys are case-sensitive: did you mean "share"?)`},
		{`{"untag": 1}`, `unknown field "untag" (keys are case-sensitive: did you mean "Untag"?)`},
		{`{"read_pct": 1, "read_pct": 2}`, `field "read_pct" is given twice`},
		{`{"bogus": {"a": 1, "a": 2}}`, ""}, // what no field takes is the decoder's
		{`{"extra": {"a": {}, "a": {"share": 2}}}`, `extra: field "a" is given twice`},
		{`{"bogus": 1, "Skipped": 2}`, ""}, // unknown, not a case variant: the decoder's
		{`{"name": `, ""},                  // not JSON: the decoder's
	} {
		err := Check([]byte(c.doc), &spec{}, "")
		if c.want == "" {
			require.NoError(t, err, c.doc)
			continue
		}
		require.EqualError(t, err, c.want, c.doc)
		// What the check refuses, encoding/json takes silently (or, for a
		// repeated key, keeps the last of).
		require.NoError(t, json.Unmarshal([]byte(c.doc), &spec{}), c.doc)
	}
	err := Checker{As: map[reflect.Type]reflect.Type{reflect.TypeFor[selfDecoding](): reflect.TypeFor[selfWire]()}}.
		Check([]byte(`{"self": {"COUNT": 1}}`), &spec{}, "doc")
	require.EqualError(t, err, `doc.self: unknown field "COUNT" (keys are case-sensitive: did you mean "count"?)`)
}

// TestCheckDeepUnknown: a deeply nested value that no field takes is
// skipped whole, as encoding/json skips it; the check goes on after it.
// Walked token by token, 30000 levels (a 64 KiB body) took 15 s.
func TestCheckDeepUnknown(t *testing.T) {
	doc := []byte(`{"bogus": ` + repeat(`{"a": `, 9000) + `1` + repeat("}", 9000) + `, "Name": 1}`)
	require.EqualError(t, Check(doc, &spec{}, ""), `unknown field "Name" (keys are case-sensitive: did you mean "name"?)`)
	for _, d := range []int{30000, 1 << 20} {
		doc = []byte(`{"bogus": ` + repeat("[", d) + repeat("]", d) + `, "Name": 1}`)
		require.NoError(t, Check(doc, &spec{}, ""), "beyond encoding/json's depth: not JSON it decodes, the decoder's to refuse")
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

// TestCheckMost: Most counts the objects of a type wherever they are
// (nulls are not values: nothing is allocated for them) and refuses the
// first past the bound, naming where it is.
func TestCheckMost(t *testing.T) {
	type leaf struct {
		N int `json:"n"`
	}
	type doc struct {
		A    *leaf   `json:"a"`
		List []*leaf `json:"list"`
	}
	c := Checker{Most: map[reflect.Type]Bound{reflect.TypeFor[leaf](): {Most: 3, What: "leaves"}}}
	require.NoError(t, c.Check([]byte(`{"a":{"n":1},"list":[{"n":2},null,null,{"n":3}]}`), &doc{}, ""))
	require.EqualError(t, c.Check([]byte(`{"a":{"n":1},"list":[{"n":2},{"n":3},{"n":4}]}`), &doc{}, ""),
		"list[2]: more than 3 leaves in one document")
	// Each Check counts its own document.
	require.NoError(t, c.Check([]byte(`{"list":[{},{},{}]}`), &doc{}, ""))
	// Documents checked against one Spent share the bound.
	var spent Spent
	require.NoError(t, c.CheckShared([]byte(`{"list":[{},{}]}`), &doc{}, "", &spent))
	require.EqualError(t, c.CheckShared([]byte(`{"list":[{},{}]}`), &doc{}, "", &spent),
		"list[1]: more than 3 leaves in the 2 documents read together")
}

// TestCheckMostBytes: what a document takes once decoded is counted at
// Go's sizes, so a list of small objects, of nulls, of scalars or a map
// cannot take more than MostBytes whatever its JSON costs.
func TestCheckMostBytes(t *testing.T) {
	type big struct {
		Pad [1000]byte `json:"-"`
		N   int        `json:"n"`
	}
	type doc struct {
		Bigs    []big          `json:"bigs"`
		Ptrs    []*big         `json:"ptrs"`
		One     *big           `json:"one"`
		Strings []string       `json:"strings"`
		Map     map[string]big `json:"map"`
	}
	c := Checker{MostBytes: 10 << 10}
	fits := `{"bigs":[{},{}],"ptrs":[{}],"one":{"n":1},"strings":["a,b","[c"],"map":{"k":{}}}`
	require.NoError(t, c.Check([]byte(fits), &doc{}, ""))
	list := func(n int, item string) string {
		s := "["
		for i := range n {
			if i > 0 {
				s += ","
			}
			s += item
		}
		return s + "]"
	}
	for what, d := range map[string]string{
		"empty objects": `{"bigs":` + list(11, "{}") + `}`,
		"nulls":         `{"bigs":` + list(11, "null") + `}`,
		"pointers":      `{"ptrs":` + list(11, "{}") + `}`,
		"empty strings": `{"strings":` + list(700, `""`) + `}`,
		"a map's entries": `{"map":{` + func() string {
			s := ""
			for i := range 11 {
				if i > 0 {
					s += ","
				}
				s += fmt.Sprintf(`"k%d":{}`, i)
			}
			return s
		}() + `}}`,
	} {
		err := c.Check([]byte(d), &doc{}, "")
		var se *SizeError
		require.ErrorAs(t, err, &se, what)
		require.Contains(t, err.Error(), "more than 0 MiB", what)
	}
	// Each Check counts its own document.
	require.NoError(t, c.Check([]byte(fits), &doc{}, ""))
	require.Equal(t, int64(3), elements([]byte(` [1, "a,]\"[", {"x":[1,2]}] `)))
	require.Equal(t, int64(0), elements([]byte(`[ ]`)))
}
