// Package check holds ioprobe's verdicts: a named measurement that
// answers one question about a storage ("is it fast enough for etcd?")
// and the rules that judge it against the thresholds its source
// publishes. `ioprobe check NAME` runs one; a new check is one more entry
// in All.
//
// It owns the etcd check's two streams — the WAL's appends (write, then
// fdatasync, in preallocated segments: wal_linux.go) and the backend's
// bbolt commits (backend_linux.go) —, the directory they write in, held
// by descriptor, whose files are removed only while their names are
// still the files the check created (dir_linux.go), and the verdict
// rules: a minimum of samples, a borderline margin, repeats
// (verdict.go).
package check
