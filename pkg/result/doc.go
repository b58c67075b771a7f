// Package result is the versioned result schema (ioprobe.result/v1 and
// ioprobe.suite/v1), the mergeable log-linear latency histogram, and the
// pure logic that works on saved results:
//
//   - Merge combines one point measured on many hosts at once into the
//     result one run of all of them would have given (counts exact,
//     percentiles from the merged histograms, rates summed);
//     MergeRepeats combines the runs of --repeat and keeps their Spread.
//   - Compare pairs the points of two files and gives the relative
//     difference of each figure, marking as noise what lies within the
//     measured run-to-run spread (SpreadOf).
//   - The catalogue (catalogue.go) describes every summary figure under
//     its FigureID, and views.go lists by ID which figures each output
//     shows: outputs take labels, units and values from there.
//   - PointOf says which suite point a result measured (or makes one up
//     from a plain run's workload), so tables can pivot by size and
//     pattern.
//
// It does no I/O beyond encoding/json on caller-supplied readers and writers:
// results can be re-analysed, merged across hosts and compared long after
// the run that made them.
package result
