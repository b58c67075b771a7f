package cli

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	go backstop(ctx, make(chan struct{}), &stderr, func() { close(exited) })
	select {
	case <-exited:
	case <-time.After(time.Minute): // a hang detector
		t.Fatal("the backstop never ended a command that did not end")
	}
	require.GreaterOrEqual(t, time.Since(start), signalGrace, "it gave the command its grace")
	require.Contains(t, stderr.String(), "ioprobe: interrupted: exiting on still running 1.5s after the signal without waiting for its own I/O to finish")

	done := make(chan struct{})
	returned := make(chan struct{})
	go func() {
		backstop(ctx, done, &stderr, func() { t.Error("a command that ended was ended") })
		close(returned)
	}()
	close(done)
	<-returned

	// No signal: nothing happens, whatever the command takes.
	returned = make(chan struct{})
	done = make(chan struct{})
	go func() {
		backstop(context.Background(), done, &stderr, func() { t.Error("ended without a signal") })
		close(returned)
	}()
	close(done)
	<-returned
}
