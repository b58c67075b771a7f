package devlat

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"

	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Layout shared with bpf/devlat.c.
const (
	numSeries = 5 // service read, write, flush; queue read, write
	halfLen   = result.NumBuckets / 2
)

// series index → which histogram of a result.DeviceHistograms it fills.
var seriesOf = [numSeries]func(h *result.DeviceHistograms) **result.Histogram{
	func(h *result.DeviceHistograms) **result.Histogram { return &h.Read },
	func(h *result.DeviceHistograms) **result.Histogram { return &h.Write },
	func(h *result.DeviceHistograms) **result.Histogram { return &h.Flush },
	func(h *result.DeviceHistograms) **result.Histogram { return &h.QueueRead },
	func(h *result.DeviceHistograms) **result.Histogram { return &h.QueueWrite },
}

// objects are the programs that are attached (not the tests' bucket_of)
// with the maps and the variable.
type objects struct {
	devlatMaps
	devlatVariables
	RqComplete *ebpf.Program `ebpf:"rq_complete"`
	RqIssue    *ebpf.Program `ebpf:"rq_issue"`
}

func (o *objects) Close() error {
	return _DevlatClose(&o.devlatMaps, o.RqComplete, o.RqIssue)
}

// Tracer is the programs loaded and attached for a set of devices.
type Tracer struct {
	devs  []Device
	objs  objects
	links []link.Link
	mu    sync.Mutex // Read's buffers
	halfs []devlatHalf
	other []devlatOther
}

// programs attached, by tracepoint: the completion first, so that no
// request issued once the issue program runs completes unseen.
var attachments = []struct {
	tp   string
	prog func(o *objects) *ebpf.Program
}{
	{"block_rq_complete", func(o *objects) *ebpf.Program { return o.RqComplete }},
	{"block_rq_issue", func(o *objects) *ebpf.Program { return o.RqIssue }},
}

// Open loads the programs for devs and attaches them; they follow every
// request of those devices, and record times only while Record(true).
// When the programs cannot run here, the error is an *Unavailable that
// says why in one line.
func Open(devs []Device) (*Tracer, error) {
	if len(devs) == 0 {
		return nil, unavailable("no block device to watch")
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		return nil, unavailable("the kernel has no BTF (/sys/kernel/btf/vmlinux): the BPF programs cannot be fitted to it (CONFIG_DEBUG_INFO_BTF)")
	}
	spec, err := loadDevlat()
	if err != nil {
		return nil, unavailable("the BPF objects are unreadable: %v", err)
	}
	delete(spec.Programs, devlatProgBucketOf) // the tests' alone
	filter, slots, err := plan(devs)
	if err != nil {
		return nil, unavailable("%v", err)
	}
	n := uint32(len(devs))
	spec.Maps[devlatMapFilter].MaxEntries = uint32(len(filter))
	if err := spec.Variables[devlatVarFilterMask].Set(uint32(len(filter) - 1)); err != nil {
		return nil, unavailable("setting the BPF device filter's size: %v", err)
	}
	spec.Maps[devlatMapTimes].MaxEntries = max(slots, 1)
	spec.Maps[devlatMapHist].MaxEntries = n * numSeries * 2
	spec.Maps[devlatMapOthers].MaxEntries = n
	t := &Tracer{devs: devs}
	if err := loadObjects(spec, &t.objs); err != nil {
		return nil, err
	}
	for i, w := range filter {
		if w.Dev == 0 {
			continue // an empty entry: the array's zero
		}
		if err := t.objs.Filter.Put(uint32(i), w); err != nil {
			t.Close()
			return nil, unavailable("filling the BPF device filter: %v", err)
		}
	}
	for _, a := range attachments {
		l, err := link.AttachTracing(link.TracingOptions{Program: a.prog(&t.objs), AttachType: ebpf.AttachTraceRawTp})
		if err != nil {
			t.Close()
			return nil, reasonFor(fmt.Sprintf("attaching to block:%s", a.tp), err)
		}
		t.links = append(t.links, l)
	}
	return t, nil
}

// loadObjects loads spec's maps and programs. The kernel's BTF is
// decoded for this load alone (cilium/ebpf maps vmlinux's BTF and decodes
// the types the relocations name), and dropped with it.
func loadObjects(spec *ebpf.CollectionSpec, objs any) error {
	// Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK.
	_ = rlimit.RemoveMemlock()
	if err := spec.LoadAndAssign(objs, nil); err != nil {
		return reasonFor("loading the BPF programs", err)
	}
	return nil
}

// reasonFor turns a load or attach failure into its one-line reason.
func reasonFor(what string, err error) *Unavailable {
	switch {
	case errors.Is(err, os.ErrPermission):
		if os.Geteuid() != 0 {
			return unavailable("not permitted to load BPF programs: needs root, or CAP_BPF and CAP_PERFMON (running as uid %d)", os.Geteuid())
		}
		if mode := lockdown(); mode == "confidentiality" {
			return unavailable("the kernel is locked down (%s): it refuses BPF programs that read kernel memory", mode)
		}
		return unavailable("not permitted to load BPF programs (%s: %v): a container or security policy without CAP_BPF and CAP_PERFMON?", what, firstLine(err))
	case errors.Is(err, ebpf.ErrNotSupported):
		return unavailable("the kernel does not support the BPF programs (%s: %v)", what, firstLine(err))
	}
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		return unavailable("the kernel's verifier refused the BPF programs (%s): %v", what, firstLine(err))
	}
	return unavailable("%s: %v", what, firstLine(err))
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// lockdown is the kernel's lockdown mode ("none", "integrity",
// "confidentiality"), "" when it has no lockdown LSM.
func lockdown() string {
	s, err := hostfs.ReadText("/sys/kernel/security/lockdown", hostfs.LimitAttr)
	if err != nil {
		return ""
	}
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return ""
}

// Record switches the recording of times on or off; requests are
// followed either way, so that one issued before it is switched on and
// completed after counts.
func (t *Tracer) Record(on bool) error {
	var v uint32
	if on {
		v = 1
	}
	return t.objs.Recording.Set(v)
}

// Devices are the watched devices, in the order Read returns them.
func (t *Tracer) Devices() []Device { return t.devs }

// Read returns each device's recording so far (cumulative), in Devices'
// order: per-CPU counts summed.
func (t *Tracer) Read() ([]Reading, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Reading, len(t.devs))
	counts := make([]uint64, result.NumBuckets)
	for slot := range t.devs {
		r := &out[slot]
		r.Hist = &result.DeviceHistograms{}
		for s := 0; s < numSeries; s++ {
			clear(counts)
			var sum, bytes, lo, hi uint64
			seen := false
			for half := 0; half < 2; half++ {
				key := uint32((slot*numSeries+s)*2 + half)
				if err := t.objs.Hist.Lookup(key, &t.halfs); err != nil {
					return nil, fmt.Errorf("reading the device histograms: %w", err)
				}
				part := counts[half*halfLen : (half+1)*halfLen]
				for cpu := range t.halfs {
					for i, c := range t.halfs[cpu].B {
						part[i] += c
					}
					st := &t.halfs[cpu].St
					if st.Count == 0 {
						continue
					}
					sum += st.SumNs
					bytes += st.Bytes
					if !seen || st.MinNs < lo {
						lo = st.MinNs
					}
					hi = max(hi, st.MaxNs)
					seen = true
				}
			}
			*seriesOf[s](r.Hist) = result.HistogramFromCounts(counts, sum, lo, hi)
			switch s {
			case 0:
				r.ReadBytes = bytes
			case 1:
				r.WriteBytes = bytes
			}
		}
		if err := t.objs.Others.Lookup(uint32(slot), &t.other); err != nil {
			return nil, fmt.Errorf("reading the device discards: %w", err)
		}
		for _, o := range t.other {
			r.Discards += o.Discards
			r.DiscardBytes += o.DiscardBytes
			r.Own += o.Own
			r.OwnBytes += o.OwnBytes
			r.Untimed += o.Untimed
			r.NoStart += o.NoStart
		}
	}
	return out, nil
}

// Close detaches and unloads the programs.
func (t *Tracer) Close() error {
	for _, l := range t.links {
		_ = l.Close()
	}
	t.links = nil
	return t.objs.Close()
}
