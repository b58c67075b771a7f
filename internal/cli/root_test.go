package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestEngineNamesAreTheRegistrys: the names a spec accepts are "auto" and
// the engines the command line registers, no more, no fewer.
func TestEngineNamesAreTheRegistrys(t *testing.T) {
	require.ElementsMatch(t, workload.EngineNames, append([]workload.EngineName{workload.EngineAuto}, newEngines().Names()...))
}

// A refusal keeps every reason and its last word on the flag, however
// many reasons it names; other errors are cut at maxMessage.
func TestRefusalLinesAreNotCut(t *testing.T) {
	long := strings.Repeat("it holds a GPT partition table (PTTYPE=gpt, signatures at bytes 512, 67108352); ", 10) + "(--allow-destructive does not lift this refusal)"
	require.Equal(t, long, printable(long, maxRefusal))
	cut := printable(long, maxMessage)
	require.True(t, strings.HasSuffix(cut, "…"), cut)
	require.Less(t, len(cut), len(long))
}
