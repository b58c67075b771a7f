package testwait

import "time"

// Patience bounds a wait for something that will happen. It only stops a
// hang: under -race at load 30 on two cores a three-point suite of 200 ms
// points took over 10 s, so a tighter bound fails slow machines, not
// broken code. Tests assert the order of what happens, never how fast.
const Patience = 2 * time.Minute

// HygieneBound is the shortest Eventually deadline that
// test/hygiene_tests_test.go accepts without a //hygiene:wait comment.
const HygieneBound = 30 * time.Second
