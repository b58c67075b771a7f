package fleet

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/stretchr/testify/require"
)

// TestCheckRefusesASkewedClock: a daemon whose clock is a minute ahead
// is refused with its offset, and is never asked to run anything. A real
// daemon cannot be given a wrong clock on this machine (Go reads the
// kernel's clock directly), so this one answers /api/v1/clock itself.
//
// The offset and --max-skew are far above any round trip: a reading is
// refused as uncertain when half its round trip is over --max-skew, and
// under -race at load 30 a local answer can take 200 ms, which would
// turn a 200 ms skew against a 50 ms bound into that other refusal. For
// the same reason the fake is given testwait.Patience to answer.
func TestCheckRefusesASkewedClock(t *testing.T) {
	const ahead = time.Minute
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/clock":
			fmt.Fprintf(w, `{"unix_nano": %d}`, time.Now().Add(ahead).UnixNano())
		default:
			posts.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	c := NewClient(strings.TrimPrefix(srv.URL, "http://"), srv.Client(), false)
	ctl := &Controller{MaxSkew: 30 * time.Second, AnswerWithin: testwait.Patience, LostAfter: testwait.Patience}
	skews, errs := ctl.Check(context.Background(), []*Client{c}, []RunRequest{{Target: "data"}})
	require.Len(t, errs, 1)
	require.Equal(t, c.Address, errs[0].Address)
	require.ErrorContains(t, errs[0], "is over --max-skew 30s: fix its NTP")
	// The daemon read its clock between our two readings: taken at their
	// middle, the offset is off by half the round trip at most.
	require.InDelta(t, ahead.Seconds(), skews[0].Offset.Seconds(), (skews[0].Uncertainty + time.Millisecond).Seconds(),
		"the offset is measured NTP-style")
	require.Zero(t, posts.Load(), "nothing is posted to a host whose clock is refused")

	ctl.MaxSkew = 2 * ahead
	_, errs = ctl.Check(context.Background(), []*Client{c}, []RunRequest{{Target: "data"}})
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], "HTTP 500", "within the bound, the dry run is asked for")
	require.Equal(t, int32(1), posts.Load())
}
