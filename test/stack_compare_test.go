package test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// Two real runs on one loop device, its scheduler switched through sysfs
// between them: each result records its own, compare says the storage
// differs and how, and a merge of the two says on which run it was which.
// A switch during a run is said in that run's result.
func TestStackCompareSaysTheSchedulerDiffers(t *testing.T) {
	needTools(t, "losetup")
	dev := attach(t, imageFile(t, 32<<20))
	name := filepath.Base(dev)
	orig := schedulerOf(t, name)
	// The setting outlives the detach, for the next test given this
	// loop device: put back before it (cleanups run last first).
	t.Cleanup(func() {
		if err := os.WriteFile("/sys/block/"+name+"/queue/scheduler", []byte(orig), 0); err != nil {
			t.Errorf("restore %s's scheduler %s: %v", name, orig, err)
		}
	})
	dir := t.TempDir()
	runTo := func(sched, file string) *result.Result {
		setScheduler(t, name, sched)
		o := ioprobe(t, dir, "run", "--target", dev, "--duration", "300ms", "--ramp", "0s", "--output", "json", "--out", file)
		require.Equal(t, 0, o.code, o.stderr)
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		return decodeResult(t, string(b))
	}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	ra := runTo("mq-deadline", a)
	rb := runTo("none", b)
	require.Equal(t, "mq-deadline", ra.Targets[0].Stack[0].Queue.Scheduler)
	require.Equal(t, "none", rb.Targets[0].Stack[0].Queue.Scheduler)

	o := ioprobe(t, dir, "compare", a, b)
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, o.stdout, "\nStorage differs: the differences above are not the devices' alone\n  loop scheduler: base mq-deadline, other none\n")
	o = ioprobe(t, dir, "compare", a, b, "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	var cmp struct {
		Points []struct {
			StorageDiffers []string `json:"storage_differs"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &cmp), o.stdout)
	require.Len(t, cmp.Points, 1, o.stdout)
	// A scheduler brings its own queue depth: nr_requests follows it.
	require.Equal(t, []string{"loop scheduler: base mq-deadline, other none",
		"loop nr_requests: base " + strconv.FormatInt(ra.Targets[0].Stack[0].Queue.NrRequests, 10) + ", other " + strconv.FormatInt(rb.Targets[0].Stack[0].Queue.NrRequests, 10)},
		cmp.Points[0].StorageDiffers)
	o = ioprobe(t, dir, "compare", a, a)
	require.NotContains(t, o.stdout, "Storage differs", "the same storage")

	host := ra.Host.Hostname
	o = ioprobe(t, dir, "report", "--merge", a, b, "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	want := "loop scheduler: mq-deadline on " + host + " (run 1); none on " + host + " (run 2)"
	require.Contains(t, o.stderr, "the storage differs between the runs merged: "+want)
	m := decodeResult(t, o.stdout)
	require.Contains(t, m.Merged.StorageDiffers, want)

	// Switched while a run ran: that run's result says so.
	setScheduler(t, name, "mq-deadline")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := filepath.Join(dir, "c.json")
	cmd := exec.CommandContext(ctx, binary, "run", "--target", dev, "--duration", "3s", "--ramp", "0s", "--output", "json", "--out", c)
	done := make(chan outcome, 1)
	go func() {
		oc, err := tryCmd(cmd)
		if err != nil {
			oc = outcome{code: -1, stderr: err.Error()}
		}
		done <- oc
	}()
	// The run reads: its description of the storage was taken before
	// its first I/O.
	before := readsOf(t, name)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Greater(c, readsOf(c, name), before+100)
	}, time.Minute, 10*time.Millisecond)
	setScheduler(t, name, "none")
	oc := <-done
	require.Equal(t, 0, oc.code, oc.stderr)
	data, err := os.ReadFile(c)
	require.NoError(t, err)
	rc := decodeResult(t, string(data))
	require.Equal(t, "mq-deadline", rc.Targets[0].Stack[0].Queue.Scheduler, "as it was when the run started")
	require.Contains(t, rc.Targets[0].StackChanged, "loop scheduler: mq-deadline, then none")
	o = ioprobe(t, dir, "report", c)
	require.Contains(t, o.stdout, "changed while the run ran: loop scheduler: mq-deadline, then none")
}

// readsOf is the reads a block device completed (its stat's first field).
func readsOf(t require.TestingT, dev string) uint64 {
	b, err := os.ReadFile("/sys/block/" + dev + "/stat")
	require.NoError(t, err)
	f := strings.Fields(string(b))
	require.NotEmpty(t, f)
	n, err := strconv.ParseUint(f[0], 10, 64)
	require.NoError(t, err)
	return n
}
