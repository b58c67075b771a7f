package testjson

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKeys(t *testing.T) {
	doc := []byte(`{"b": 1, "a": {"z": [], "y": 2}, "l": [{"q": 1, "p": 2}]}`)
	for _, tc := range []struct {
		path []string
		want []string
	}{
		{nil, []string{"b", "a", "l"}},
		{[]string{"a"}, []string{"z", "y"}},
		{[]string{"l", "0"}, []string{"q", "p"}},
	} {
		got, err := Keys(doc, tc.path...)
		require.NoError(t, err, "%v", tc.path)
		require.Equal(t, tc.want, got, "%v", tc.path)
	}
	for _, path := range [][]string{{"x"}, {"l", "1"}, {"l", "-1"}, {"b"}, {"a", "z"}} {
		_, err := Keys(doc, path...)
		require.Error(t, err, "%v", path)
	}
	_, err := Keys([]byte(`{"a": `))
	require.Error(t, err)
}
