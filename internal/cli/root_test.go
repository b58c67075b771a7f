package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestEngineNamesAreTheRegistrys: the names a spec accepts are "auto" and
// the engines the command line registers, no more, no fewer.
func TestEngineNamesAreTheRegistrys(t *testing.T) {
	require.ElementsMatch(t, workload.EngineNames, append([]string{workload.EngineAuto}, newEngines().Names()...))
}
