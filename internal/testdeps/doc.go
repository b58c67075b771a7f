// Package testdeps is how a test says what it needs from the machine that
// make test provides — root, loop devices, a program scripts/test-deps.sh
// installs, Prometheus 3 built into .tools — and what happens when it is
// missing. Run by hand, the test skips and says what is missing. Under
// make test, which installed those dependencies first, a missing one is a
// failure: scripts/test.sh sets IOPROBE_TEST_DEPS_INSTALLED=1 once
// scripts/test-deps.sh has installed everything (as root with apt-get, as
// CI runs), so that a failed install or build cannot turn into a skip and
// a green run.
//
// A test skips for a dependency only through this package (Need, Missing,
// Without); test/hygiene_tests_test.go fails on any other t.Skip that lacks
// a //hygiene:skip comment saying why what it needs is not something make
// test installs (a kernel feature, -short, a helper process).
//
// It is imported by tests only.
package testdeps
