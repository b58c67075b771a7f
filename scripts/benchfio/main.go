// Command benchfio is the measuring half of scripts/bench-fio.sh, which runs
// ioprobe and fio side by side on the same device.
//
//	benchfio measure [--dev DEVICE] [--window SKIP:LEN] OUT.rec.json OUT.json -- CMD ARGS...
//	benchfio report DIR
//
// measure runs CMD with its standard output in OUT.json, waits for it with
// wait4(2) and writes the record OUT.rec.json: wall time, the whole
// process's user and system CPU from wait4's rusage (fio's job processes
// are its children and are counted: fio waits for them) and the host's busy
// and total CPU from /proc/stat deltas. The tools' own CPU lines are not
// used. With --dev, also the I/Os the block device completed meanwhile
// (/sys/class/block/NAME/stat): a count no tool reports about itself.
// With --window, also the steady state: the process tree's CPU and the
// device's I/Os from SKIP to SKIP+LEN seconds after the start (window.go),
// which leave out each tool's once-per-run set-up.
//
// report reads every WORKLOAD.ROUND.CANDIDATE.{rec.,}json pair in DIR, where
// CANDIDATE starts with "ioprobe-" or "fio-" (or names a reference: "bare-",
// scripts/bareloop's JSON; "tiouring-", fio's t/io_uring's text output),
// and prints a Markdown report: the median of each candidate's runs, the
// best candidate of each tool (most IOPS per process CPU-second), and the
// median of the per-round ratios of the two winners. DIR/pairs.txt, when
// present, names further pairs ("WORKLOAD A B" a line), each reported as
// the median of A's per-round ratios to B (see pairs.go).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ioprobe/ioprobe/internal/cpuacct"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchfio:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 2 && args[0] == "report" {
		return report(os.Stdout, args[1])
	}
	if len(args) == 0 || args[0] != "measure" {
		return errUsage
	}
	var dev, win string
	args = args[1:]
	for len(args) >= 2 && strings.HasPrefix(args[0], "--") && args[0] != "--" {
		switch args[0] {
		case "--dev":
			dev = args[1]
		case "--window":
			win = args[1]
		default:
			return errUsage
		}
		args = args[2:]
	}
	if len(args) < 4 || args[2] != "--" {
		return errUsage
	}
	return measure(args[0], args[1], dev, win, args[3:])
}

var errUsage = errors.New("usage: benchfio measure [--dev DEVICE] [--window SKIP:LEN] OUT.rec.json OUT.json -- CMD ARGS... | benchfio report DIR")

// record is what measure writes.
type record struct {
	Command          []string `json:"command"`
	ExitCode         int      `json:"exit_code"`
	WallSeconds      float64  `json:"wall_seconds"`
	UserSeconds      float64  `json:"user_seconds"`
	SystemSeconds    float64  `json:"system_seconds"`
	HostBusySeconds  float64  `json:"host_busy_seconds"`
	HostTotalSeconds float64  `json:"host_total_seconds"`
	// DeviceIOs is the reads and writes the device completed while the
	// command ran (measure --dev), else 0.
	DeviceIOs float64 `json:"device_ios,omitempty"`
	// Window is the steady state (measure --window), when the command
	// outlived it.
	Window *window `json:"window,omitempty"`
}

func measure(recPath, outPath, dev, win string, argv []string) error {
	var skip, length time.Duration
	if win != "" {
		var err error
		if skip, length, err = parseWindow(win); err != nil {
			return err
		}
	}
	out, err := os.Create(outPath)
	if err != nil {
		return err
	}
	defer out.Close()
	var dev0 float64
	if dev != "" {
		if dev0, err = deviceIOs(dev); err != nil {
			return err
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	proc := cpuacct.Reader{}
	host0, err := proc.Stat()
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	type watched struct {
		w   *window
		err error
	}
	done, seen := make(chan struct{}), make(chan watched, 1)
	if win != "" {
		go func() {
			w, err := watch(cmd.Process.Pid, dev, skip, length, done)
			seen <- watched{w, err}
		}()
	}
	// wait4 directly, not cmd.Wait: its rusage is the figure we report.
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	for {
		_, err = syscall.Wait4(cmd.Process.Pid, &ws, 0, &ru)
		if err != syscall.EINTR {
			break
		}
	}
	wall := time.Since(t0)
	close(done)
	var win0 *window
	if win != "" {
		r := <-seen
		if r.err != nil {
			return fmt.Errorf("--window: %w", r.err)
		}
		win0 = r.w
	}
	if err != nil {
		return fmt.Errorf("wait4: %w", err)
	}
	host1, err := proc.Stat()
	if err != nil {
		return err
	}
	d := host1.Sub(host0).All
	hz := float64(cpuacct.UserHZ())
	var devIOs float64
	if dev != "" {
		dev1, err := deviceIOs(dev)
		if err != nil {
			return err
		}
		devIOs = dev1 - dev0
	}
	rec := record{
		Command:          argv,
		ExitCode:         ws.ExitStatus(),
		WallSeconds:      wall.Seconds(),
		UserSeconds:      time.Duration(ru.Utime.Nano()).Seconds(),
		SystemSeconds:    time.Duration(ru.Stime.Nano()).Seconds(),
		HostBusySeconds:  float64(d.Busy()) / hz,
		HostTotalSeconds: float64(d.Total()) / hz,
		DeviceIOs:        devIOs,
		Window:           win0,
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(recPath, append(b, '\n'), 0o644); err != nil {
		return err
	}
	if rec.ExitCode != 0 {
		return fmt.Errorf("%s exited with status %d", argv[0], rec.ExitCode)
	}
	return nil
}

// deviceIOs is the reads plus writes block device dev (/dev/NAME) has
// completed: the first and fifth fields of /sys/class/block/NAME/stat.
func deviceIOs(dev string) (float64, error) {
	b, err := os.ReadFile("/sys/class/block/" + filepath.Base(dev) + "/stat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 5 {
		return 0, fmt.Errorf("%s: short stat line %q", dev, b)
	}
	r, err1 := strconv.ParseFloat(f[0], 64)
	w, err2 := strconv.ParseFloat(f[4], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("%s: %w", dev, err)
	}
	return r + w, nil
}
