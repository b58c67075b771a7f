// Package suiterun plans and executes suites: it turns a suite's points
// into units (a point on its targets: each target in turn, then the points
// that span several targets at once), decides which units repeat an
// earlier measurement (measured once, reported under both), builds the
// runner plan of every unit, and runs the units one after another with
// their repeats, stopping where the caller's policy says.
//
// It does not know where a unit is measured: the caller passes the
// function that runs one unit once. `ioprobe suite` and `ioprobe run` pass
// runner.Run on this host, the daemon passes its own (which also feeds its
// live series and last-run gauges), and a fleet controller can pass one
// that posts the unit to the daemons' HTTP API.
package suiterun
