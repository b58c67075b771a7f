package check

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ioprobe/ioprobe/internal/cpuacct"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// runEtcd checks the directory once or o.Repeat times. Bad input and
// refusals return an error before anything is created; everything after
// ends in a report, whose status says whether it has a verdict.
func runEtcd(ctx context.Context, o Options) (*Report, error) {
	if o.Duration <= 0 || o.Repeat < 1 || o.Rate < 0 {
		return nil, fmt.Errorf("check etcd: duration %v, repeat %d, rate %v: want a positive duration, at least one repeat, a rate of 0 or more", o.Duration, o.Repeat, o.Rate)
	}
	d, err := openCheckDir(o.Target)
	if err != nil {
		return nil, err
	}
	defer d.close()
	// Two segments (the one written, the one prepared) and the backend's
	// first growth; a fast device fills more segments, and running out
	// then is an error of the run.
	need := int64(2*SegmentBytes + AllocSize + 1<<20)
	if free, err := d.freeBytes(); err != nil {
		return nil, &target.InputError{Path: o.Target, Msg: "cannot statfs the directory", Err: err}
	} else if free < need {
		return nil, &target.InputError{Path: o.Target, Msg: fmt.Sprintf(
			"not enough free space: the check needs at least %d bytes (two WAL segments of %d bytes and the backend's file), %d are available",
			need, SegmentBytes, free)}
	}
	rep := &Report{Schema: Schema, Check: "etcd", Status: result.StatusOK, StartedAt: time.Now().UTC(),
		Target: Target{Path: o.Target, Resolved: d.resolved, Filesystem: d.fsType, Device: d.dev}}
	rep.Target.describe(ctx)
	var runs []repeatStats
	for i := 1; i <= o.Repeat; i++ {
		st, err := runOnce(ctx, d, i, o)
		left, rerr := d.removeFiles()
		rep.Left = append(rep.Left, left...)
		if err == nil {
			err = rerr
		}
		if ctx.Err() != nil {
			rep.Status, rep.Message = result.StatusInterrupted, "interrupted: no verdict"
			runs = append(runs, st)
			break
		}
		if err != nil {
			rep.Status, rep.Message = result.StatusErrors, err.Error()
			runs = append(runs, st)
			break
		}
		runs = append(runs, st)
	}
	assemble(rep, o, runs, d.dev)
	if rep.Kernel != nil && d.flushDev != d.dev {
		rep.Kernel.FlushDevice = d.flushDev
	}
	return rep, nil
}

// runOnce makes the files of one repeat (untimed), then runs the WAL
// stream, and the backend's beside it, for o.Duration.
func runOnce(ctx context.Context, d *checkDir, rep int, o Options) (repeatStats, error) {
	var st repeatStats
	w, err := newWAL(d, rep, o.Rate, SegmentBytes)
	defer w.close()
	if err != nil {
		return st, err
	}
	st.prealloc = w.prealloc
	var b *backendStream
	if o.Backend {
		if b, err = newBackend(d, rep, &w.appended); err != nil {
			return st, err
		}
	}
	var before, flushBefore target.DiskStats
	haveDisk := d.dev != ""
	if haveDisk {
		if before, flushBefore, err = d.readStats(); err != nil {
			haveDisk = false
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make([]error, 2)
	tasks0, tasksOK := cpuacct.LookAtTasks(time.Second)
	cpu := cpuacct.Start()
	start := time.Now()
	finish := func() { stop.Store(true) }
	wg.Add(1)
	go func() {
		defer wg.Done()
		if errs[0] = w.run(&stop); errs[0] != nil {
			finish()
		}
	}()
	if b != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[1] = b.run(&stop); errs[1] != nil {
				finish()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	timer := time.NewTimer(o.Duration)
	defer timer.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-ctx.Done():
			finish()
		case <-timer.C:
			finish()
		case <-tick.C:
			if o.Progress != nil {
				var commits uint64
				if b != nil {
					commits = b.progress.Load()
				}
				o.Progress(Progress{Repeat: rep, Repeats: o.Repeat, Elapsed: time.Since(start), Duration: o.Duration,
					Samples: []uint64{w.appended.Load(), commits}})
			}
		}
	}
	st.elapsed = time.Since(start)
	st.cpu, st.cpuErr = cpu.Stop()
	if haveDisk {
		if after, flushAfter, err := d.readStats(); err == nil {
			delta := after.Sub(before)
			flushes := flushAfter.Sub(flushBefore)
			delta.FlushOps, delta.FlushTicks = flushes.FlushOps, flushes.FlushTicks
			st.disk = &delta
		}
	}
	if tasks1, ok := cpuacct.LookAtTasks(time.Second); tasksOK && ok {
		st.tasks, st.tasksOK = tasks1.Sub(tasks0), true
	}
	st.wal, st.walWrite = w.fsync, w.write
	st.records, st.bytes, st.segments = w.records, w.bytes, w.cuts+1
	st.walFdatasyncs = w.fsync.Count() - w.cuts // less the directory fsyncs
	if b != nil {
		st.backend = b.commit
		st.commits, st.pages, st.backendFdatasyncs = b.commits, b.pages, b.fdatasyncs+b.grows
	}
	return st, errors.Join(errs...)
}

// readStats reads the kernel's counters of the directory's device, and
// of the device that counts its flushes: a flush request is the whole
// disk's, and the kernel never counts one on a partition.
func (d *checkDir) readStats() (dev, flushes target.DiskStats, err error) {
	if dev, err = target.ReadDiskStats("", d.dev); err != nil || d.flushDev == d.dev {
		return dev, dev, err
	}
	flushes, err = target.ReadDiskStats("", d.flushDev)
	return dev, flushes, err
}
