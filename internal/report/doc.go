// Package report renders results for people and for tools: the Iometer-like
// text summary of one run (WriteText), one CSV row per run (WriteCSV,
// columns in CSVColumns), indented JSON (WriteJSON), a suite's tables in
// the reference reports' layout (WriteSuiteText), a comparison of two
// files (WriteCompareText), and one self-contained HTML page with the
// reports' figures drawn as inline SVG (WriteHTML).
//
// It only formats: every figure comes from the result.Result it is given,
// and the few it derives (MiB/s, per-op MB/s, process CPU %, the kernel's
// share of what ioprobe counted, percentile curves from histograms) are
// computed here from recorded fields. MB is 10^6 bytes, as in the
// reference reports.
package report
