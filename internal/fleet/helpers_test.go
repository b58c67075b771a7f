package fleet

import (
	"net/http"
	"testing"

	"github.com/ioprobe/ioprobe/internal/fleet/fleettest"
)

// fakeDaemon is a fleettest.Fake and its client.
func fakeDaemon(t *testing.T, rest http.HandlerFunc) *Client {
	return NewClient(fleettest.Fake(t, rest), http.DefaultClient, false)
}
