package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestInterruptedWhileTheProgramsLoad: a run stopped while its BPF
// programs load (a load cannot be cancelled and takes seconds on a
// loaded machine) returns its interrupted result without waiting for
// the load, having issued no I/O; the load, when it finishes, closes
// what it attached itself (nothing of it stays in the kernel).
func TestInterruptedWhileTheProgramsLoad(t *testing.T) {
	dev := testloop.Device(t, 64<<20)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	// A liveness guard, not a speed test: a run that waits for the load
	// would otherwise wait for ever.
	guard := time.AfterFunc(time.Minute, free)
	defer guard.Stop()
	loadHook = func() {
		close(entered)
		<-release
	}
	t.Cleanup(func() { loadHook = nil })
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	before := kernelReads(t, dev)
	res, err := Run(ctx, plan(Group{Spec: spec(t, "4k", 100, 100, 4, time.Hour), Targets: []string{dev}}))
	select {
	case <-release:
		t.Fatal("the run waited for the load")
	default:
	}
	require.NoError(t, err)
	require.Equal(t, result.StatusInterrupted, res.Status, res.Message)
	require.Zero(t, res.Summary.Ops)
	require.Equal(t, before, kernelReads(t, dev), "no I/O issued once stopped")

	free() // the load goes on now, and attaches
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Zero(c, bpfLinks(c), "the abandoned load's links closed by its loader")
	}, time.Minute, 10*time.Millisecond)
}

// bpfLinks counts the BPF links this process holds.
func bpfLinks(c *assert.CollectT) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if !assert.NoError(c, err) {
		return -1
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(l, "bpf_link") {
			n++
		}
	}
	return n
}
