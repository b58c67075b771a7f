package result

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// jsonNames lists the JSON names of t's fields, an embedded struct's
// fields as its own (Disk embeds Queue).
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonNames(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// docSection is the text of docs/output.md from heading to the next
// heading of the same level.
func docSection(t *testing.T, heading string) string {
	doc, err := os.ReadFile("../../docs/output.md")
	require.NoError(t, err)
	s := string(doc)
	i := strings.Index(s, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "docs/output.md has no %q", heading)
	s = s[i+len(heading)+2:]
	level := heading[:strings.Index(heading, " ")+1]
	if j := strings.Index(s, "\n"+level); j >= 0 {
		s = s[:j]
	}
	return s
}

// docs/output.md's "What was measured" lists every field a result records
// of the storage: each layer's, each queue's and disk's (its tables, as
// `name`, or in a path such as `targets[].stack`), the target's own and what compare and merge say. A field added
// to the structs without a line there fails here.
func TestStorageFieldsAreDocumented(t *testing.T) {
	sec := docSection(t, "### What was measured")
	named := map[string]bool{}
	word := regexp.MustCompile(`[a-z0-9_]+`)
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(sec, -1) {
		// `targets[].stack`, `merged.storage_differs`: each word of a path
		for _, w := range word.FindAllString(m[1], -1) {
			named[w] = true
		}
	}
	want := map[string][]string{
		"Layer":             jsonNames(reflect.TypeOf(Layer{})),
		"Disk":              jsonNames(reflect.TypeOf(Disk{})),
		"Target":            {"stack", "disk", "disks", "stack_unseen", "stack_changed"},
		"compare and merge": {"storage_differs"},
	}
	for of, names := range want {
		for _, n := range names {
			require.True(t, named[n], "docs/output.md \"What was measured\" does not name %s's field `%s`", of, n)
		}
	}
	// The target's fields are the struct's: a name listed above that the
	// JSON does not have would make this test check nothing.
	targetNames := strings.Join(jsonNames(reflect.TypeOf(Target{})), " ")
	for _, n := range want["Target"] {
		require.Contains(t, strings.Fields(targetNames), n)
	}
	require.Contains(t, jsonNames(reflect.TypeOf(PointDelta{})), "storage_differs")
	require.Contains(t, jsonNames(reflect.TypeOf(MergeInfo{})), "storage_differs")
}
