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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
func Detach(dev, backing string) error {
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file"))
	if os.IsNotExist(err) {
		return nil // detached: the sysfs loop directory goes with it
	}
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(backing)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(string(b))
	if name != abs && name != abs+" (deleted)" {
		return nil // someone else's now
	}
	if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}
