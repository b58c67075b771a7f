package fleet

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnswerKeysAsWritten: a host whose answer gives a key in another
// case than the API's, or twice, is refused naming it; encoding/json
// would have taken "State" for state (a run "done" that the host never
// said it finished) and kept the last of two.
func TestAnswerKeysAsWritten(t *testing.T) {
	for _, c := range []struct{ answer, want string }{
		{`{"id": "r-1", "state": "running", "State": "done"}`, `unknown field "State" (keys are case-sensitive: did you mean "state"?)`},
		{`{"id": "r-1", "state": "done", "result": {"schema": "ioprobe.result/v1", "host": {"HostName": "x"}}}`,
			`result.host: unknown field "HostName" (keys are case-sensitive: did you mean "hostname"?)`},
		{`{"id": "r-1", "state": "running", "state": "done"}`, `field "state" is given twice`},
	} {
		host := fakeDaemon(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, c.answer) })
		_, err := host.Get(context.Background(), "r-1")
		require.EqualError(t, err, "GET /api/v1/runs/r-1: not the answer of an ioprobe daemon: "+c.want)
	}
	ok := fakeDaemon(t, func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"id": "r-1", "state": "done", "added_later": {"X": 1}}`)
	})
	st, err := ok.Get(context.Background(), "r-1")
	require.NoError(t, err)
	require.Equal(t, "r-1", st.ID)
}
