package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/fiojob"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// schedSwitch is one device a point switches to a scheduler before it runs
// (fio's ioscheduler=, backend.c: switch_ioscheduler, for each file of
// the job).
type schedSwitch struct {
	dev  target.IOScheduler
	name string
	job  string
}

// planSchedulers finds, for each point, the devices whose scheduler its
// jobs' ioscheduler= switches, as fio would: the device under each of the
// job's files (the whole disk of a partition). What fio fails the job for
// is refused here, before anything runs: a scheduler the device does not
// offer, a scheduler file this process cannot write (fio: "fopen iosched:
// Permission denied" for anyone but root), two jobs at once asking one
// device for different ones. What fio only logs and goes on from (no
// block device, no scheduler file, a device that takes none) is a note.
func planSchedulers(points []fiojob.Point, notes map[string][]string) ([][]schedSwitch, error) {
	out := make([][]schedSwitch, len(points))
	any := false
	for i, p := range points {
		asked := map[string]schedSwitch{}
		for _, j := range p.Jobs {
			if j.IOScheduler == "" {
				continue
			}
			for _, path := range j.Targets {
				dev, err := target.SchedulerOf(path)
				if err != nil {
					return nil, j.Refusal("ioscheduler", fmt.Sprintf("cannot find the device under %s to switch its I/O scheduler: %v", path, err))
				}
				note := func(why string) {
					notes[p.Name] = append(notes[p.Name], fmt.Sprintf("[%s] ioscheduler=%s: %s", j.Name, j.IOScheduler, why))
				}
				switch {
				case dev.Device == "":
					note(fmt.Sprintf("%s is on a filesystem with no block device in sysfs: fio switches no scheduler there, nor does ioprobe", path))
					continue
				case dev.Missing:
					note(fmt.Sprintf("%s has no scheduler file (fio: \"os or kernel doesn't support IO scheduler switching\", and it runs the job)", dev.Device))
					continue
				case !dev.Tunable:
					note(fmt.Sprintf("%s takes no I/O scheduler (it lists only %q; fio: \"io scheduler is not tunable\", and it runs the job)", dev.Device, dev.Current))
					continue
				case !dev.Offers(j.IOScheduler):
					return nil, j.Refusal("ioscheduler", fmt.Sprintf("%q: %s offers %s; fio fails the job (\"unable to set io scheduler\")", j.IOScheduler, dev.Device, strings.Join(dev.Offered, ", ")))
				}
				if err := dev.CanSwitch(); err != nil {
					return nil, j.Refusal("ioscheduler", fmt.Sprintf("cannot switch the I/O scheduler of %s (%v): fio fails the job (\"fopen iosched\"); run as root", dev.Device, err))
				}
				if o, ok := asked[dev.Device]; ok && o.name != j.IOScheduler {
					return nil, j.Refusal("ioscheduler", fmt.Sprintf("%q for %s, which [%s] runs at once with %q: one device has one scheduler (add stonewall)", j.IOScheduler, dev.Device, o.job, o.name))
				}
				if _, ok := asked[dev.Device]; !ok {
					asked[dev.Device] = schedSwitch{dev: dev, name: j.IOScheduler, job: j.Name}
					out[i] = append(out[i], asked[dev.Device])
					any = true
				}
			}
		}
	}
	if !any {
		return nil, nil
	}
	return out, nil
}

// schedSwitcher switches devices' schedulers point by point and puts each
// back as it found it once the job file's runs are over. fio switches
// before each job and never switches back; so, within a job file, a point
// runs under what the points before it set, as in fio, and the machine is
// left as it was.
type schedSwitcher struct {
	mu    sync.Mutex
	found map[string]target.IOScheduler // each device as first found
	set   map[string]string             // what ioprobe last set it to
	order []string
	back  map[string]bool // restored: the devices put back
	stop  func()          // ends the SIGHUP watch

	// switched is, by device, the switch not put back yet ("from none
	// to kyber"), kept under its own lock: the backstop reads it while
	// mu is held by a write the kernel takes its time over.
	lmu      sync.Mutex
	switched map[string]string
}

func newSchedSwitcher() *schedSwitcher {
	return &schedSwitcher{found: map[string]target.IOScheduler{}, set: map[string]string{}, switched: map[string]string{}}
}

// errSchedEnded is apply's answer once restore has run: the job file's
// runs are ending, and a device switched now would stay so.
var errSchedEnded = errors.New("not switching the I/O scheduler: the runs are ending (interrupted)")

// mark records (how != "") or clears what device is left switched to.
func (s *schedSwitcher) mark(device, how string) {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if how == "" {
		delete(s.switched, device)
		return
	}
	s.switched[device] = how
}

// left says which devices are switched and not put back yet, for the
// backstop's last word ("" when none).
func (s *schedSwitcher) left() string {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	devs := slices.Sorted(maps.Keys(s.switched))
	parts := make([]string, len(devs))
	for i, d := range devs {
		parts[i] = fmt.Sprintf("the I/O scheduler of %s (%s; see /sys/block/%s/queue/scheduler)", d, s.switched[d], d)
	}
	return strings.Join(parts, ", ")
}

// watch cancels the runs (through cancel) on SIGHUP while a scheduler is
// switched: a closed terminal must not leave the device switched.
// SIGINT and SIGTERM already cancel them.
func (s *schedSwitcher) watch(cancel context.CancelFunc) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	quit := make(chan struct{})
	go func() {
		select {
		case <-hup:
			cancel()
		case <-quit:
		}
	}()
	s.stop = func() {
		signal.Stop(hup)
		close(quit)
	}
}

// apply switches the point's devices.
func (s *schedSwitcher) apply(sw []schedSwitch, stderr io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.back != nil {
		return errSchedEnded
	}
	for _, w := range sw {
		if _, ok := s.found[w.dev.Device]; !ok {
			s.found[w.dev.Device] = w.dev
			s.order = append(s.order, w.dev.Device)
		}
		if s.set[w.dev.Device] == w.name {
			continue
		}
		if _, set := s.set[w.dev.Device]; !set && s.found[w.dev.Device].Current == w.name {
			// Already so: nothing to write, nor to put back.
			s.set[w.dev.Device] = w.name
			continue
		}
		// Marked before the write: once written, the kernel switches
		// whether or not this process lives to read it back.
		was := s.found[w.dev.Device].Current
		s.mark(w.dev.Device, fmt.Sprintf("switched from %s to %s by ioprobe", was, w.name))
		if _, err := w.dev.Switch(w.name); err != nil {
			if now, rerr := w.dev.Reread(); rerr == nil && now.Current == was {
				s.mark(w.dev.Device, "")
			}
			return fmt.Errorf("[%s] ioscheduler=%s: %w (fio fails the job)", w.job, w.name, err)
		}
		s.set[w.dev.Device] = w.name
		fmt.Fprint(stderr, textsafe.Sprintf("ioprobe: switched the I/O scheduler of %s from %s to %s for [%s] (fio's ioscheduler=; put back after the run)\n",
			w.dev.Device, s.found[w.dev.Device].Current, w.name, w.job))
	}
	return nil
}

// inEffect is what the devices switched so far run under.
func (s *schedSwitcher) inEffect() []result.IOScheduler {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []result.IOScheduler
	for _, d := range s.order {
		if n, ok := s.set[d]; ok {
			out = append(out, result.IOScheduler{Device: d, Scheduler: n, Was: s.found[d].Current})
		}
	}
	return out
}

// restore puts every switched device back as it was found, unless
// something else switched it since (then it is left, and said so). It
// runs once; later calls return the first's answer: the devices put back.
func (s *schedSwitcher) restore(stderr io.Writer) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.back != nil {
		return s.back
	}
	s.back = map[string]bool{}
	if s.stop != nil {
		s.stop()
	}
	for _, d := range s.order {
		name, ok := s.set[d]
		was := s.found[d]
		if !ok {
			continue
		}
		if name == was.Current {
			s.back[d] = true // never switched
			s.mark(d, "")
			continue
		}
		now, err := was.Reread()
		switch {
		case err != nil:
			fmt.Fprint(stderr, textsafe.Sprintf("ioprobe: could not read the I/O scheduler of %s to put %s back: %v\n", d, was.Current, err))
		case now.Current != name:
			s.mark(d, "") // not ioprobe's to put back
			fmt.Fprint(stderr, textsafe.Sprintf("ioprobe: the I/O scheduler of %s is %s, not the %s ioprobe set: something else switched it; left as it is (it was %s)\n", d, now.Current, name, was.Current))
		default:
			end := runner.BeginStep(fmt.Sprintf("putting the I/O scheduler of %s back to %s (the kernel's switch waits for the device's I/O)", d, was.Current))
			_, err := now.Switch(was.Current)
			end()
			if err != nil {
				fmt.Fprint(stderr, textsafe.Sprintf("ioprobe: could not put the I/O scheduler of %s back to %s: %v\n", d, was.Current, err))
				continue
			}
			s.back[d] = true
			s.mark(d, "")
			fmt.Fprint(stderr, textsafe.Sprintf("ioprobe: put the I/O scheduler of %s back to %s\n", d, was.Current))
		}
	}
	return s.back
}
