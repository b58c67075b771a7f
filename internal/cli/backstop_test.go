package cli

import (
	"bytes"
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/runner"
)

// A command that has not ended signalGrace after the signal is ended by
// the backstop, which says what it did not wait for; one that ends in
// time is not.
func TestBackstop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the signal came
	var stderr bytes.Buffer
	exited := make(chan struct{})
	start := time.Now()
	go backstop(ctx, make(chan struct{}), &stderr, nil, func() { close(exited) })
	select {
	case <-exited:
	case <-time.After(time.Minute): // a hang detector
		t.Fatal("the backstop never ended a command that did not end")
	}
	require.GreaterOrEqual(t, time.Since(start), signalGrace, "it gave the command its grace")
	require.Contains(t, stderr.String(), "ioprobe: interrupted: exiting on still running 1.5s after the signal without waiting for the command to end (it was in no step of a run")

	done := make(chan struct{})
	returned := make(chan struct{})
	go func() {
		backstop(ctx, done, &stderr, nil, func() { t.Error("a command that ended was ended") })
		close(returned)
	}()
	close(done)
	<-returned

	// No signal: nothing happens, whatever the command takes.
	returned = make(chan struct{})
	done = make(chan struct{})
	go func() {
		backstop(context.Background(), done, &stderr, nil, func() { t.Error("ended without a signal") })
		close(returned)
	}()
	close(done)
	<-returned
}

// What the command changed on the machine is put back before the
// backstop ends the process: a run slow to stop on a loaded machine left
// a loop device's I/O scheduler switched (make test at load 30), since
// the backstop ended it before the run's own restore.
func TestBackstopPutsBackFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	undo := &undoList{}
	undone := make(chan struct{})
	undo.add(func() string { return "the I/O scheduler of loop9 (switched from none to kyber by ioprobe)" }, func() { close(undone) })
	removed := undo.add(func() string { return "what the command put back itself" }, func() { t.Error("an undo removed was run") })
	removed()
	exited := make(chan struct{})
	go backstop(ctx, make(chan struct{}), &stderr, undo, func() {
		select {
		case <-undone:
		default:
			t.Error("ended before putting back")
		}
		close(exited)
	})
	select {
	case <-exited:
	case <-time.After(time.Minute): // a hang detector
		t.Fatal("the backstop never ended a command that did not end")
	}
	require.NotContains(t, stderr.String(), "without having put back")
}

// An undo that does not return (the kernel's scheduler switch waits for
// I/O that never completes) is waited for its bound, or until one more
// signal; then what stays changed is said, and left.
func TestUndoListBounded(t *testing.T) {
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	loop9 := func() string { return "the I/O scheduler of loop9 (switched from none to kyber by ioprobe)" }

	var stderr bytes.Buffer
	undo := &undoList{}
	undo.add(loop9, func() { <-never })
	start := time.Now()
	undo.run(50*time.Millisecond, nil, &stderr)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	require.Equal(t, "ioprobe: interrupted: exiting after waiting 50ms for it without having put back the I/O scheduler of loop9 (switched from none to kyber by ioprobe): left so\n", stderr.String())

	// In the order added; one more signal ends the wait.
	stderr.Reset()
	var done []string
	started := make(chan struct{})
	stop := make(chan os.Signal, 1)
	undo = &undoList{}
	undo.add(func() string { return "first" }, func() { done = append(done, "first") })
	undo.add(loop9, func() { close(started); <-never })
	undo.add(func() string { return "third" }, func() { done = append(done, "third") })
	go func() {
		<-started
		stop <- syscall.SIGTERM
	}()
	undo.run(time.Hour, stop, &stderr)
	require.Equal(t, []string{"first"}, done)
	require.Equal(t, "ioprobe: interrupted: exiting on one more signal without having put back the I/O scheduler of loop9 (switched from none to kyber by ioprobe): left so\n"+
		"ioprobe: interrupted: exiting on one more signal without having put back third: left so\n", stderr.String())

	// Nothing registered (or no list): nothing waited for, nothing said.
	stderr.Reset()
	(&undoList{}).run(time.Hour, nil, &stderr)
	(*undoList)(nil).run(time.Hour, nil, &stderr)
	require.Empty(t, stderr.String())
}

// The backstop names the step of a run it did not wait for (a BPF load,
// a scheduler's put-back), not a guess at the process's own I/O.
func TestBackstopNamesTheStep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	defer runner.BeginStep("the BPF programs' load and attach (which cannot be cancelled)")()
	var stderr bytes.Buffer
	exited := make(chan struct{})
	go backstop(ctx, make(chan struct{}), &stderr, nil, func() { close(exited) })
	select {
	case <-exited:
	case <-time.After(time.Minute): // a hang detector
		t.Fatal("the backstop never ended a command that did not end")
	}
	require.Contains(t, stderr.String(), "ioprobe: interrupted: exiting on still running 1.5s after the signal without waiting for the BPF programs' load and attach (which cannot be cancelled) (for ")
	require.NotContains(t, stderr.String(), "its own I/O")
}
