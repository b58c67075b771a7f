package cpuacct

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Clock sources, in the order ClockHz tries them.
const (
	ClockBaseFrequency = "sysfs base_frequency"   // the rated (nominal) frequency, intel_pstate
	ClockModelName     = "cpuinfo model name"     // "… @ 2.40GHz": the rated frequency, Intel
	ClockMaxFrequency  = "sysfs cpuinfo_max_freq" // the highest frequency cpufreq allows (may include turbo)
	ClockCurrentMHz    = "cpuinfo cpu MHz"        // the current frequency of the first CPU (VMs)
)

// Host describes the machine for result.Host. It returns what it could
// learn together with an error naming what it could not; a partly filled
// Host is still worth recording.
//
// Kernel is /proc/sys/kernel/osrelease (the same string as uname -r) and
// Hostname /proc/sys/kernel/hostname (falling back to os.Hostname), so
// both follow ProcRoot. LogicalCPUs counts the cpuN lines of /proc/stat:
// the host's online CPUs, not the Go process's affinity or cgroup limit,
// because host utilisation is summed over exactly those lines.
func (r Reader) Host() (result.Host, error) {
	var h result.Host
	var errs []error

	if s, err := hostfs.ReadText(r.proc("sys", "kernel", "hostname"), hostfs.LimitAttr); err == nil {
		h.Hostname = s
	}
	if h.Hostname == "" {
		name, err := os.Hostname()
		if err != nil {
			errs = append(errs, fmt.Errorf("hostname: %w", err))
		}
		h.Hostname = name
	}

	// The kernel's boot id tells this machine's kernel apart: every
	// container and network namespace on it reads the same one, as they
	// read the same /proc/stat and diskstats.
	if s, err := hostfs.ReadText(r.proc("sys", "kernel", "random", "boot_id"), hostfs.LimitAttr); err == nil {
		h.BootID = s
	}

	if s, err := hostfs.ReadText(r.proc("sys", "kernel", "osrelease"), hostfs.LimitAttr); err != nil {
		errs = append(errs, fmt.Errorf("kernel release: %w", err))
	} else {
		h.Kernel = s
	}

	if s, err := r.Stat(); err != nil {
		errs = append(errs, fmt.Errorf("logical CPUs: %w", err))
	} else {
		h.LogicalCPUs = len(s.CPUs)
	}
	if h.LogicalCPUs == 0 {
		h.LogicalCPUs = runtime.NumCPU()
	}

	info, err := r.cpuInfo()
	if err != nil {
		errs = append(errs, fmt.Errorf("cpu model: %w", err))
	}
	h.CPUModel = info.model

	hz, _, err := r.clockHz(info)
	if err != nil {
		errs = append(errs, err)
	}
	h.ClockHz = hz
	return h, errors.Join(errs...)
}

// ClockHz returns the CPU clock rate used for cycles per I/O and says
// where it came from (one of the Clock* constants). The reports use the
// rated clock frequency, so the rated figures come first: base_frequency
// (sysfs), then the "@ 2.40GHz" in an Intel model name, then
// cpuinfo_max_freq (sysfs; on some drivers this is the turbo maximum),
// and last the current "cpu MHz" of /proc/cpuinfo, which is all a VM
// usually has. sysfs is read for cpu0.
func (r Reader) ClockHz() (hz float64, source string, err error) {
	info, err := r.cpuInfo()
	if err != nil {
		info = cpuInfo{}
	}
	return r.clockHz(info)
}

func (r Reader) clockHz(info cpuInfo) (float64, string, error) {
	freq := func(name string) float64 {
		s, err := hostfs.ReadText(r.sys("devices", "system", "cpu", "cpu0", "cpufreq", name), hostfs.LimitAttr)
		if err != nil {
			return 0
		}
		khz, err := strconv.ParseFloat(s, 64)
		if err != nil || khz <= 0 {
			return 0
		}
		return khz * 1e3
	}
	if hz := freq("base_frequency"); hz > 0 {
		return hz, ClockBaseFrequency, nil
	}
	if hz := ratedFromModel(info.model); hz > 0 {
		return hz, ClockModelName, nil
	}
	if hz := freq("cpuinfo_max_freq"); hz > 0 {
		return hz, ClockMaxFrequency, nil
	}
	if info.mhz > 0 {
		return info.mhz * 1e6, ClockCurrentMHz, nil
	}
	return 0, "", errors.New("clock rate: no cpufreq in sysfs and no \"cpu MHz\" in /proc/cpuinfo")
}

var modelGHz = regexp.MustCompile(`@\s*([0-9]+(?:\.[0-9]+)?)\s*GHz`)

// ratedFromModel reads the rated frequency Intel writes into the model
// name ("Intel(R) Xeon(R) CPU E5-2690 v2 @ 3.00GHz").
func ratedFromModel(model string) float64 {
	m := modelGHz.FindStringSubmatch(model)
	if m == nil {
		return 0
	}
	ghz, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	return ghz * 1e9
}

type cpuInfo struct {
	model string
	mhz   float64 // of the first CPU listed
}

func (r Reader) cpuInfo() (cpuInfo, error) {
	b, err := hostfs.ReadFile(r.proc("cpuinfo"), hostfs.LimitTable)
	if err != nil {
		return cpuInfo{}, err
	}
	return parseCPUInfo(bytes.NewReader(b))
}

// parseCPUInfo takes the first CPU's model and MHz from /proc/cpuinfo.
// x86 writes "model name" and "cpu MHz"; other architectures name the
// model differently (arm "Processor"/"model name", mips "cpu model",
// powerpc "cpu" with the rate in "clock : 2900.000000MHz"). Missing fields
// stay empty; only a read error is an error.
func parseCPUInfo(r io.Reader) (cpuInfo, error) {
	var info cpuInfo
	var fallbackModel string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "model name":
			if info.model == "" {
				info.model = val
			}
		case "Processor", "cpu model", "cpu":
			if fallbackModel == "" {
				fallbackModel = val
			}
		case "cpu MHz", "clock":
			if info.mhz == 0 {
				if v, err := strconv.ParseFloat(strings.TrimSuffix(val, "MHz"), 64); err == nil {
					info.mhz = v
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return cpuInfo{}, fmt.Errorf("/proc/cpuinfo: %w", err)
	}
	if info.model == "" {
		info.model = fallbackModel
	}
	return info, nil
}
