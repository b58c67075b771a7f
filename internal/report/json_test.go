package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

func TestWriteJSON(t *testing.T) {
	r := mixedResult()
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, r))
	golden(t, "result_mixed.json", b.Bytes())
	require.True(t, strings.HasSuffix(b.String(), "}\n"))
	require.Contains(t, b.String(), "\n  \"schema\": \"ioprobe.result/v1\",\n")
	require.Contains(t, b.String(), "(target 0, worker 1)", "no HTML escaping")

	_, back, err := result.Decode(&b)
	require.NoError(t, err)
	require.Len(t, back, 1)
	require.Equal(t, r.Summary, back[0].Summary)
	require.Equal(t, r.Histogram.Read.Count(), back[0].Histogram.Read.Count())
}
