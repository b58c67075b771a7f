package exporter

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHeavyRunsExcludeEachOther(t *testing.T) {
	d := newDevices()
	ctx := context.Background()
	rel, err := d.heavy(ctx, "sda", "job a", false, time.Time{})
	require.NoError(t, err)

	_, err = d.heavy(ctx, "sda", "probe m", false, time.Time{})
	var be *busyError
	require.ErrorAs(t, err, &be)
	require.Equal(t, "job a", be.holder)

	_, err = d.heavy(ctx, "sdb", "job b", false, time.Time{})
	require.NoError(t, err, "another device is free")

	_, err = d.heavy(ctx, "sda", "job c", true, time.Now().Add(20*time.Millisecond))
	require.ErrorIs(t, err, errDeadline)

	got := make(chan error, 1)
	go func() {
		r, err := d.heavy(ctx, "sda", "job d", true, time.Time{})
		if r != nil {
			r()
		}
		got <- err
	}()
	select {
	case <-got:
		t.Fatal("took a held device")
	case <-time.After(20 * time.Millisecond):
	}
	rel()
	rel() // twice is harmless
	require.NoError(t, <-got)
}

// A heavy run stops the light ones and waits for them; they come back
// when it is done, and say they were paused meanwhile.
func TestHeavyPausesLights(t *testing.T) {
	d := newDevices()
	ctx := context.Background()
	var paused atomic.Bool
	lctx, lrel, err := d.light(ctx, "sda", paused.Store)
	require.NoError(t, err)
	require.False(t, paused.Load())
	_, lrel2, err := d.light(ctx, "sda", paused.Store)
	require.NoError(t, err, "lights share a device")

	heavyDone := make(chan func())
	go func() {
		r, err := d.heavy(ctx, "sda", "job a", true, time.Time{})
		require.NoError(t, err)
		heavyDone <- r
	}()
	select {
	case <-lctx.Done():
	case <-time.After(time.Second):
		t.Fatal("the light run was not stopped")
	}
	select {
	case <-heavyDone:
		t.Fatal("the heavy run started before the light runs stopped")
	case <-time.After(20 * time.Millisecond):
	}
	lrel()
	lrel2()
	rel := <-heavyDone

	again := make(chan error)
	go func() {
		_, r, err := d.light(ctx, "sda", paused.Store)
		if r != nil {
			r()
		}
		again <- err
	}()
	require.Eventually(t, paused.Load, time.Second, time.Millisecond)
	rel()
	require.NoError(t, <-again)
	require.False(t, paused.Load())
}

func TestWaitsEndWithContext(t *testing.T) {
	d := newDevices()
	rel, err := d.heavy(context.Background(), "sda", "job a", false, time.Time{})
	require.NoError(t, err)
	defer rel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = d.heavy(ctx, "sda", "job b", true, time.Time{})
	require.ErrorIs(t, err, context.Canceled)
	_, _, err = d.light(ctx, "sda", func(bool) {})
	require.ErrorIs(t, err, context.Canceled)
}
