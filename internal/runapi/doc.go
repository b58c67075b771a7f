// Package runapi is the run API's wire: the documents a daemon's
// POST /api/v1/runs takes and GET|DELETE /api/v1/runs/ID answer, defined
// once for both sides, the daemon (internal/exporter) and its client
// (internal/fleet). The states a run goes through are result.RunState, a
// closed set the fleet document keeps too.
package runapi
