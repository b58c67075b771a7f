// Package testwait is how long a test waits for something that will
// happen: a daemon to answer, a run to finish, a file to appear, a
// goroutine to reach a state. Such a wait (require.Eventually,
// EventuallyWithT, a select on time.After that fails the test) is a hang
// detector, not a speed threshold: the condition is polled, so a generous
// bound costs nothing when the machine is fast, and a tight one fails a
// correct tree on a slow one (make test at load 30 under the race
// detector: a 10 s wait for 100 I/Os and a 10 s wait for a suite's second
// point both ran out).
//
// A short wait is right only where the test asserts that something does
// not happen (require.Never), or where the deadline is itself what is
// tested; test/hygiene_tests_test.go flags an Eventually with a deadline
// under HygieneBound that does not say why on its line
// (//hygiene:wait <why>).
//
// It is imported by tests only.
package testwait
