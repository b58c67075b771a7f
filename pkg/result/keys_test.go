package result

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDecodeKeysAsWritten: a result whose keys differ from the schema's
// only in case, or that repeats a key, is refused naming the key and
// where; encoding/json alone took each silently (a second "hostname" in
// "Hostname" case replaced the first; a histogram's "COUNT" was its
// count). Keys the schema does not have are still read past: a later
// ioprobe may add fields.
func TestDecodeKeysAsWritten(t *testing.T) {
	r := run("db-1", 8, latencies(1000, 100_000, 50_000, 1), nil, 2, 50)
	data, err := json.Marshal(r)
	require.NoError(t, err)
	doc := string(data)
	for _, c := range []struct{ old, new, want string }{
		{`"hostname":"db-1"`, `"hostname":"db-1","Hostname":"db-2"`, `host: unknown field "Hostname" (keys are case-sensitive: did you mean "hostname"?)`},
		{`"summary":`, `"Summary":`, `unknown field "Summary" (keys are case-sensitive: did you mean "summary"?)`},
		{`"read":{"layout"`, `"read":{"LAYOUT"`, `histogram.read: unknown field "LAYOUT" (keys are case-sensitive: did you mean "layout"?)`},
		{`"schema":"ioprobe.result/v1"`, `"schema":"ioprobe.result/v1","status":"ok"`, `field "status" is given twice`},
	} {
		require.Contains(t, doc, c.old)
		bad := strings.Replace(doc, c.old, c.new, 1)
		var loose Result
		require.NoError(t, json.Unmarshal([]byte(bad), &loose), "encoding/json takes %s", c.new)
		_, _, err := Decode(strings.NewReader(bad))
		require.EqualError(t, err, "bad ioprobe.result/v1 document: "+c.want)
	}
	later := strings.Replace(doc, `"schema":"ioprobe.result/v1"`, `"schema":"ioprobe.result/v1","added_later":{"x":1}`, 1)
	_, rs, err := Decode(bytes.NewReader([]byte(later)))
	require.NoError(t, err)
	require.Equal(t, "db-1", rs[0].Host.Hostname)
}

// TestKeyCheckSeesEveryObject: every type of the documents that decodes
// itself (whose keys the check cannot see by its fields) is mapped to its
// wire form, or has no keys: a type that gains an UnmarshalJSON must not
// turn the check off for everything below it.
func TestKeyCheckSeesEveryObject(t *testing.T) {
	unmarshaler := reflect.TypeFor[json.Unmarshaler]()
	noKeys := map[reflect.Type]bool{reflect.TypeFor[time.Time](): true}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Array || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if seen[ty] {
			return
		}
		seen[ty] = true
		if as, ok := keyChecker.As[ty]; ok {
			walk(as)
			return
		}
		if ty.Implements(unmarshaler) || reflect.PointerTo(ty).Implements(unmarshaler) {
			require.True(t, noKeys[ty], "%s decodes itself: map it to its wire form in keyChecker.As", ty)
			return
		}
		if ty.Kind() == reflect.Struct {
			for i := range ty.NumField() {
				walk(ty.Field(i).Type)
			}
		}
	}
	for _, doc := range []any{Result{}, Suite{}, Fleet{}} {
		walk(reflect.TypeOf(doc))
	}
	require.True(t, seen[reflect.TypeFor[histogramJSON]()], "the histogram's wire form is walked")
}
