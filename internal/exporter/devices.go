package exporter

import (
	"context"
	"errors"
	"sync"
	"time"
)

// devices keeps runs off each other's device. A heavy run (a job, a probe)
// holds its device alone; light runs (continuous canaries) share it with
// each other, but never with a heavy run: one that wants the device stops
// them first, and they wait until it is done. Keys come from
// target.DeviceKey, so a partition and its disk are one device.
type devices struct {
	mu   sync.Mutex
	devs map[string]*device
}

type device struct {
	holder  string // the heavy run holding it, "" when none
	waiting int    // heavy runs waiting for it
	lights  map[*light]struct{}
	changed chan struct{} // closed (and replaced) on every change
}

type light struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// busyError says who holds a device.
type busyError struct{ holder string }

func (e *busyError) Error() string { return "device busy: " + e.holder + " is running on it" }

// errDeadline: a heavy run waited for its device until its deadline.
var errDeadline = errors.New("device still busy at the deadline")

func newDevices() *devices { return &devices{devs: map[string]*device{}} }

// get returns the device for key (callers hold mu).
func (d *devices) get(key string) *device {
	dev := d.devs[key]
	if dev == nil {
		dev = &device{lights: map[*light]struct{}{}, changed: make(chan struct{})}
		d.devs[key] = dev
	}
	return dev
}

func (dev *device) notify() {
	close(dev.changed)
	dev.changed = make(chan struct{})
}

// holderOf says what keeps light runs off the device: the heavy run
// holding it, or one waiting for it; "" when nothing does.
func (d *devices) holderOf(key string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	dev := d.devs[key]
	switch {
	case dev == nil:
		return ""
	case dev.holder != "":
		return dev.holder
	case dev.waiting > 0:
		return "a heavier run waiting for the device"
	}
	return ""
}

// heavy takes the device for name. When another heavy run holds it, heavy
// fails at once with a *busyError if wait is false, else waits until it is
// free, ctx ends or deadline (zero: none) passes (errDeadline). It stops
// the light runs on the device and waits for them before returning.
func (d *devices) heavy(ctx context.Context, key, name string, wait bool, deadline time.Time) (release func(), err error) {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	d.mu.Lock()
	dev := d.get(key)
	if dev.holder != "" {
		if !wait {
			h := dev.holder
			d.mu.Unlock()
			return nil, &busyError{holder: h}
		}
		dev.waiting++
		dev.notify()
		for dev.holder != "" {
			ch := dev.changed
			d.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				err = ctx.Err()
			case <-timeout:
				err = errDeadline
			}
			d.mu.Lock()
			if err != nil {
				dev.waiting--
				dev.notify()
				d.mu.Unlock()
				return nil, err
			}
		}
		dev.waiting--
	}
	dev.holder = name
	var stopping []*light
	for l := range dev.lights {
		l.cancel()
		stopping = append(stopping, l)
	}
	dev.notify()
	d.mu.Unlock()

	var once sync.Once
	release = func() {
		once.Do(func() {
			d.mu.Lock()
			dev.holder = ""
			dev.notify()
			d.mu.Unlock()
		})
	}
	for _, l := range stopping {
		select {
		case <-l.done:
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		}
	}
	return release, nil
}

// light joins the device's light runs once no heavy run holds it or waits
// for it, calling paused(true) while it waits and paused(false) when it
// goes. The returned context ends when a heavy run needs the device.
func (d *devices) light(ctx context.Context, key string, paused func(bool)) (context.Context, func(), error) {
	d.mu.Lock()
	dev := d.get(key)
	for dev.holder != "" || dev.waiting > 0 {
		paused(true)
		ch := dev.changed
		d.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		d.mu.Lock()
	}
	paused(false)
	lctx, cancel := context.WithCancel(ctx)
	l := &light{cancel: cancel, done: make(chan struct{})}
	dev.lights[l] = struct{}{}
	d.mu.Unlock()

	var once sync.Once
	return lctx, func() {
		once.Do(func() {
			cancel()
			d.mu.Lock()
			delete(dev.lights, l)
			close(l.done)
			dev.notify()
			d.mu.Unlock()
		})
	}, nil
}
