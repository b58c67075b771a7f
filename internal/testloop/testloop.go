// Package testloop attaches loop devices for tests, and starts processes
// that hold them (Hold): one helper instead of a copy in every test
// package. It is imported by tests only.
//
// Every device is attached with direct I/O (losetup -f --show
// --direct-io=on) and detached when the test ends; a failed detach is a
// test error, so no test leaves a device behind unnoticed. Without root
// or a working losetup the helpers skip the test when it is run by hand
// and fail it under make test (testdeps.LoopDevices).
package testloop

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// Device attaches a loop device over a new sparse file of size bytes in
// the test's temporary directory and returns the device's path.
func Device(t testing.TB, size int64) string {
	t.Helper()
	SkipUnlessRoot(t)
	return DeviceAt(t, filepath.Join(t.TempDir(), "backing"), size)
}

// DeviceAt is Device with its backing file at a path of the caller's (a
// new file).
func DeviceAt(t testing.TB, backing string, size int64) string {
	t.Helper()
	SkipUnlessRoot(t)
	if err := os.WriteFile(backing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(backing, size); err != nil {
		t.Fatal(err)
	}
	return File(t, backing)
}

// File attaches a loop device over an existing file, whose content the
// caller has written, and returns the device's path.
func File(t testing.TB, backing string) string {
	t.Helper()
	SkipUnlessRoot(t)
	out, err := exec.Command("losetup", "-f", "--show", "--direct-io=on", backing).CombinedOutput()
	if err != nil {
		testdeps.Missing(t, testdeps.LoopDevices, "losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if err := Detach(dev, backing); err != nil {
			t.Errorf("detach %s: %v", dev, err)
		}
	})
	// The kernel's counters of the device on: a test that switched a
	// loop device's off leaves the setting to the next one attached
	// under that name, whose /sys/block/DEV/stat would then stay still.
	iostats := filepath.Join("/sys/block", filepath.Base(dev), "queue", "iostats")
	if err := os.WriteFile(iostats, []byte("1"), 0); err != nil && !os.IsNotExist(err) {
		t.Fatalf("%s: %v", iostats, err)
	}
	return dev
}

// SkipUnlessRoot skips the test (fails it under make test) unless loop
// devices can be attached here — root, losetup, /dev/loop-control —
// before a caller writes a backing file only a loop device would use.
func SkipUnlessRoot(t testing.TB) {
	t.Helper()
	testdeps.Need(t, testdeps.LoopDevices)
}

// Detach detaches dev if it is still the loop device over backing, and
// does nothing when it is not: a device that its test detached already
// (or the kernel did, autoclear) may by now be another process's,
// attached under the same name, and detaching that would take its
// storage away mid-test (a race-detector test's device vanished so,
// under make test, from another test's second detach). The name is
// compared as the kernel shows it (sysfs backing_file: the path at
// attach, " (deleted)" when it was removed since).
//
// The check and the detach are made through one open descriptor of the
// device: while it is open the kernel keeps the device bound to what it
// was bound to when checked (its clear waits for the last close), so the
// name cannot change hands between the two, as it could between a read
// of sysfs and a losetup -d by name.
//
// A device that another process holds open is only marked for clearing
// (autoclear) and is cleared at its last close: when Detach returns it
// may still be over backing. DetachAndWait waits for that.
func Detach(dev, backing string) error {
	f, err := os.Open(dev)
	if err != nil {
		if os.IsNotExist(err) || errors.Is(err, unix.ENXIO) {
			return nil // no such device: nothing of ours
		}
		return err
	}
	defer f.Close() // the last close clears it, when ours was the last
	ours, err := Over(dev, backing)
	if err != nil || !ours {
		return err
	}
	if err := unix.IoctlSetInt(int(f.Fd()), unix.LOOP_CLR_FD, 0); err != nil && err != unix.ENXIO {
		return fmt.Errorf("LOOP_CLR_FD %s: %w", dev, err) // ENXIO: being cleared already
	}
	return nil
}

// Over reports whether dev is (still) the loop device over backing, as
// sysfs shows it: false once it is detached, or attached again over
// another file.
func Over(dev, backing string) (bool, error) {
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file"))
	if os.IsNotExist(err) {
		return false, nil // detached: the sysfs loop directory goes with it
	}
	if err != nil {
		return false, err
	}
	abs, err := filepath.Abs(backing)
	if err != nil {
		return false, err
	}
	name := strings.TrimSpace(string(b))
	return name == abs || name == abs+" (deleted)", nil
}

// DetachDeadline bounds DetachAndWait's wait for the last holder of a
// device to let go: the holders a test's device meets (udev's or
// blkid's probe, another test's ioprobe asking every loop device what
// backs it) hold it for moments, far less than this even under load.
const DetachDeadline = time.Minute

// DetachAndWait is Detach followed by a wait, DetachDeadline at most,
// until dev is no longer over backing: for a test whose next step needs
// the detach done (a check of the file that a loop device over it would
// change, a FUSE daemon to stop under the backing file). It fails naming
// the processes that still hold dev open.
func DetachAndWait(dev, backing string) error { return detachAndWait(dev, backing, DetachDeadline) }

func detachAndWait(dev, backing string, within time.Duration) error {
	if err := Detach(dev, backing); err != nil {
		return err
	}
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	poll := time.NewTicker(10 * time.Millisecond) // sysfs sends no event for a clear
	defer poll.Stop()
	for {
		ours, err := Over(dev, backing)
		if err != nil || !ours {
			return err
		}
		select {
		case <-poll.C:
		case <-deadline.C:
			return fmt.Errorf("%s is still over %s %v after its detach: held open by %s", dev, backing, within, holders(dev))
		}
	}
}

// holders names the processes with dev open ("pid 12 (blkid)", …), for
// the message of a detach that did not complete.
func holders(dev string) string {
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	var out []string
	seen := map[string]bool{}
	for _, fd := range fds {
		pid := strings.Split(fd, "/")[2]
		if l, err := os.Readlink(fd); err != nil || l != dev || seen[pid] {
			continue
		}
		seen[pid] = true
		comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
		out = append(out, fmt.Sprintf("pid %s (%s)", pid, strings.TrimSpace(string(comm))))
	}
	if len(out) == 0 {
		return "no process (a mount, or a holder in the kernel)"
	}
	return strings.Join(out, ", ")
}
