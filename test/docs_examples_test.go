package test

import "testing"

// The docs' examples that take longest, each group a test of its own
// beside the package's other waiting tests (see docGroups and
// TestReadmeDeviceExamplesRunAsWritten, which runs the rest). This file
// sorts before the other files with parallel tests, so that these start
// first: go test starts waiting parallel tests in the order they are
// declared, and a test of a minute and a half started last ends the
// package a minute and a half after the others.

func TestDocsExamplesOnHosts(t *testing.T) {
	besideOthers(t)
	runDocExamples(t, "hosts")
}

func TestDocsExamplesReadmeSuites(t *testing.T) {
	besideOthers(t)
	runDocExamples(t, "README suites")
}

func TestDocsExamplesDocsSuites(t *testing.T) {
	besideOthers(t)
	runDocExamples(t, "docs suites")
}
