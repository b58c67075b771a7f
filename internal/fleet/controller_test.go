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

	"github.com/stretchr/testify/require"
)

// TestCheckRefusesASkewedClock: a daemon whose clock is 200 ms ahead is
// refused with its offset, and is never asked to run anything. A real
// daemon cannot be given a wrong clock on this machine (Go reads the
// kernel's clock directly), so this one answers /api/v1/clock itself.
func TestCheckRefusesASkewedClock(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/clock":
			fmt.Fprintf(w, `{"unix_nano": %d}`, time.Now().Add(200*time.Millisecond).UnixNano())
		default:
			posts.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	c := NewClient(strings.TrimPrefix(srv.URL, "http://"), srv.Client(), false)
	ctl := &Controller{MaxSkew: 50 * time.Millisecond}
	skews, errs := ctl.Check(context.Background(), []*Client{c}, []RunRequest{{Target: "data"}})
	require.Len(t, errs, 1)
	require.Equal(t, c.Address, errs[0].Address)
	require.ErrorContains(t, errs[0], "is over --max-skew 50ms: fix its NTP")
	require.InDelta(t, 0.2, skews[0].Offset.Seconds(), 0.05, "the offset is measured NTP-style")
	require.Zero(t, posts.Load(), "nothing is posted to a host whose clock is refused")

	ctl.MaxSkew = time.Second
	_, errs = ctl.Check(context.Background(), []*Client{c}, []RunRequest{{Target: "data"}})
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], "HTTP 500", "within the bound, the dry run is asked for")
	require.Equal(t, int32(1), posts.Load())
}
