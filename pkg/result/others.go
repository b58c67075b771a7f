package result

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// HostOthers is what other processes did on the host while the measured
// window was open: the CPU they used beside ioprobe's, and the I/O they
// did on the devices under the targets beside ioprobe's. The host's CPU
// figures (summary.cpu's host_*) and the kernel's counts
// (summary.device) include it; ioprobe's own figures were measured
// beside it.
type HostOthers struct {
	// CPUFraction is the share of the host's CPU capacity (every logical
	// CPU, for the whole window) that other processes used: the time
	// /proc/stat counts for tasks (user, nice, system) less ioprobe's own
	// process CPU and the kernel's threads (which work for everyone,
	// ioprobe included: a loop device's worker, the journal), ÷ the time
	// of every CPU. Interrupts and steal are nobody's here. 0 to 1.
	CPUFraction float64 `json:"cpu_fraction"`
	// DeviceOps and DeviceBytes are the I/Os and bytes the devices under
	// the targets served for others in the window: the kernel's count
	// (requests and the I/Os merged into them; bytes read and written)
	// less what ioprobe issued there and its own looks for signatures
	// (safety_checks), bounded by what other processes submitted to any
	// device meanwhile (/proc/PID/io) where ioprobe could read that: the
	// rest of the kernel's count is the kernel's own work for ioprobe (a
	// filesystem's journal, a split request). Absent without a device
	// count, and for a buffered run (the page cache, not ioprobe's I/Os,
	// decides what reaches the device).
	DeviceOps   *uint64 `json:"device_ops,omitempty"`
	DeviceBytes *uint64 `json:"device_bytes,omitempty"`
}

// OthersThreshold is the share of the host's CPU, or of the devices'
// I/O, that others may use in a window before every output says so.
const OthersThreshold = 0.1

// OthersCPUs is how many CPUs others used on average over the window
// (CPUFraction × the host's logical CPUs); 0 without the section.
func (r *Result) OthersCPUs() float64 {
	o := r.Summary.HostOthers
	if o == nil {
		return 0
	}
	return o.CPUFraction * float64(r.Host.LogicalCPUs)
}

// OthersDeviceShare is others' share of the I/O the devices served in
// the window: of their I/Os or of their bytes, whichever is larger; 0
// without both sections.
func (s *Summary) OthersDeviceShare() float64 { return s.HostOthers.deviceShare(s.Device) }

func (o *HostOthers) deviceShare(d *DeviceStats) float64 {
	if o == nil || d == nil || o.DeviceOps == nil || o.DeviceBytes == nil {
		return 0
	}
	share := 0.0
	if n := d.ReadOps + d.WriteOps + d.ReadMerges + d.WriteMerges; n > 0 {
		share = float64(*o.DeviceOps) / float64(n)
	}
	if b := d.ReadBytes + d.WriteBytes; b > 0 {
		share = math.Max(share, float64(*o.DeviceBytes)/float64(b))
	}
	return math.Min(share, 1)
}

// OthersLoad says in words what others did beside a measurement on a
// host of cpus logical CPUs whose devices counted d, each part only when
// it is more than OthersThreshold: "others used 1.62 of 2 CPUs during the
// window (81.0% of the host's CPU)" and "others did 3,704 of the 46,288
// I/Os and 34.89 MB of the 209.32 MB the device vda served during the
// window (16.7%)". Empty strings when not.
func OthersLoad(cpus int, o *HostOthers, d *DeviceStats) (cpu, device string) {
	if o == nil {
		return "", ""
	}
	if o.CPUFraction > OthersThreshold {
		cpu = fmt.Sprintf("others used %s of %d %s during the window (%s of the host's CPU)",
			strconv.FormatFloat(o.CPUFraction*float64(cpus), 'f', 2, 64), cpus, plural(cpus, "CPU", "CPUs"), percent(o.CPUFraction))
	}
	if share := o.deviceShare(d); share > OthersThreshold {
		device = fmt.Sprintf("others did %s of the %s I/Os and %s of the %s the %s %s served during the window (%s)",
			group(*o.DeviceOps), group(d.ReadOps+d.WriteOps+d.ReadMerges+d.WriteMerges),
			megabytes(*o.DeviceBytes), megabytes(d.ReadBytes+d.WriteBytes),
			plural(len(d.Devices), "device", "devices"), strings.Join(d.Devices, ", "), percent(share))
	}
	return cpu, device
}

// OthersNotes says, in a sentence each, that others used more than
// OthersThreshold of the host's CPU or of the devices' I/O during the
// window, with the figures and what they mean for the result's; none
// when they did not (or were not measured).
func (r *Result) OthersNotes() []string {
	cpu, device := OthersLoad(r.Host.LogicalCPUs, r.Summary.HostOthers, r.Summary.Device)
	var notes []string
	if cpu != "" {
		notes = append(notes, cpu+": the CPU figures are the host's, not ioprobe's alone")
	}
	if device != "" {
		notes = append(notes, device+": the kernel's counts are not ioprobe's alone, and ioprobe's figures were measured beside that load")
	}
	return notes
}

// mergeOthers is the others of merged runs: the CPU they used, each
// machine's time-weighted and once however many runs measured it, over
// the machines' CPUs; their I/O summed. Absent unless every run measured
// it; the device part absent unless every run has it.
func mergeOthers(rs []*Result) *HostOthers {
	type machine struct{ elapsed, coresT, cpus float64 }
	per := map[string]*machine{}
	var order []string
	out := &HostOthers{}
	var ops, bytes uint64
	device := true
	for _, r := range rs {
		o := r.Summary.HostOthers
		if o == nil {
			return nil
		}
		k := machineKey(r.Host)
		m, ok := per[k]
		if !ok {
			m = &machine{cpus: float64(r.Host.LogicalCPUs)}
			per[k] = m
			order = append(order, k)
		}
		m.elapsed += r.Summary.ElapsedSeconds
		m.coresT += o.CPUFraction * float64(r.Host.LogicalCPUs) * r.Summary.ElapsedSeconds
		if o.DeviceOps == nil || o.DeviceBytes == nil {
			device = false
			continue
		}
		ops, bytes = ops+*o.DeviceOps, bytes+*o.DeviceBytes // checkSums refused sums that wrap
	}
	var cores, cpus float64
	for _, k := range order {
		m := per[k]
		cpus += m.cpus
		if m.elapsed > 0 {
			cores += m.coresT / m.elapsed
		}
	}
	if cpus > 0 {
		out.CPUFraction = math.Min(cores/cpus, 1)
	}
	if device {
		out.DeviceOps, out.DeviceBytes = &ops, &bytes
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// percent is a share in percent, one decimal: "12.5%".
func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// megabytes is a byte count in MB (10^6), two decimals: "5,740.25 MB".
func megabytes(n uint64) string {
	s := strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64)
	whole, frac, _ := strings.Cut(s, ".")
	return groupDigits(whole) + "." + frac + " MB"
}

// group writes n with thousands separators: "12,345".
func group(n uint64) string { return groupDigits(strconv.FormatUint(n, 10)) }

func groupDigits(s string) string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
