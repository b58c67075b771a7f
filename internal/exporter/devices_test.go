package exporter

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/stretchr/testify/assert"
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
	// Once it counts itself waiting it cannot return while job a holds
	// the device; one that took the device returns instead.
	require.Eventually(t, func() bool { return waitingFor(d, "sda") == 1 || len(got) > 0 }, time.Minute, time.Millisecond)
	select {
	case <-got:
		t.Fatal("took a held device")
	default:
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
	lightsStopping := make(chan struct{})
	go func() {
		r, err := d.heavy(ctx, "sda", "job a", true, time.Time{})
		assert.NoError(t, err)
		select {
		case <-lightsStopping:
		default:
			assert.Fail(t, "the heavy run started before the light runs stopped")
		}
		heavyDone <- r
	}()
	select {
	case <-lctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the light run was not stopped")
	}
	close(lightsStopping)
	lrel()
	lrel2()
	rel := <-heavyDone
	require.NotNil(t, rel)

	again := make(chan error)
	go func() {
		_, r, err := d.light(ctx, "sda", paused.Store)
		if r != nil {
			r()
		}
		again <- err
	}()
	require.Eventually(t, paused.Load, testwait.Patience, time.Millisecond)
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

// waitingFor is how many heavy runs wait for the device key.
func waitingFor(d *devices, key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.devs[key].waiting
}
