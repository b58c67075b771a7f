// Package result is the versioned result schema (ioprobe.result/v1 and
// ioprobe.suite/v1) and the mergeable log-linear latency histogram.
//
// It does no I/O beyond encoding/json on caller-supplied readers and writers:
// results can be re-analysed, merged across hosts and compared long after
// the run that made them.
package result
