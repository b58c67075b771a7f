package devlat

import "fmt"

// The filter (bpf/devlat.c): the watched devices by open addressing on
// their kernel dev_t in an array, each within probes entries of its hash,
// the first empty entry ending a search. A request of a device not
// watched costs the programs one array load.
const (
	probes         = 4       // PROBES in bpf/devlat.c
	flushesOnly    = 1       // FLUSHES_ONLY: a watched partition's whole disk
	minFilter      = 64      // entries, at least
	maxFilter      = 1 << 16 // the hash's range
	filterLoadRate = 4       // entries per device, at least
)

// filterHash is bpf/devlat.c's filter_hash.
func filterHash(dev uint32) uint32 { return (dev * 0x9e3779b1) >> 16 }

// watch is a filter entry (bpf/devlat.c's struct watch).
type watch = devlatWatch

// plan is the filter's entries (a power of two of them: the programs
// mask the hash with len-1) and how many tag slots the queues need: one
// region per disk, shared by its partitions. A watched partition's disk,
// not watched itself, counts its flushes for the first such partition.
func plan(devs []Device) ([]watch, uint32, error) {
	var ws []watch
	base := map[string]uint32{}
	var slots uint32
	region := func(d Device) uint32 {
		b, ok := base[d.Disk]
		if !ok {
			b = slots
			base[d.Disk] = b
			slots += d.HWQueues * d.Tags
		}
		return b
	}
	seen := map[uint32]bool{}
	for i, d := range devs {
		ws = append(ws, watch{Dev: d.kernelDev(), Slot: uint32(i), Base: region(d), NrHw: d.HWQueues, Depth: d.Tags})
		seen[d.kernelDev()] = true
	}
	for i, d := range devs {
		if d.Partition() && !seen[d.diskDev()] {
			seen[d.diskDev()] = true
			ws = append(ws, watch{Dev: d.diskDev(), Slot: uint32(i), Flags: flushesOnly, Base: region(d), NrHw: d.HWQueues, Depth: d.Tags})
		}
	}
	for size := max(minFilter, nextPow2(uint32(len(ws))*filterLoadRate)); size <= maxFilter; size *= 2 {
		if table, ok := place(ws, size); ok {
			return table, slots, nil
		}
	}
	return nil, 0, fmt.Errorf("%d devices do not fit the BPF device filter", len(ws))
}

// place puts every entry within probes of its hash in a table of size
// entries, or says it cannot.
func place(ws []watch, size uint32) ([]watch, bool) {
	table := make([]watch, size)
next:
	for _, w := range ws {
		if w.Dev == 0 {
			return nil, false // 0 marks an empty entry
		}
		h := filterHash(w.Dev)
		for i := uint32(0); i < probes; i++ {
			if e := &table[(h+i)&(size-1)]; e.Dev == 0 {
				*e = w
				continue next
			}
		}
		return nil, false
	}
	return table, true
}

// lookup finds dev in table as the programs do (the tests' referee).
func lookup(table []watch, dev uint32) (watch, bool) {
	h := filterHash(dev)
	for i := uint32(0); i < probes; i++ {
		e := table[(h+i)&uint32(len(table)-1)]
		if e.Dev == 0 {
			break
		}
		if e.Dev == dev {
			return e, true
		}
	}
	return watch{}, false
}

func nextPow2(n uint32) uint32 {
	p := uint32(1)
	for p < n {
		p *= 2
	}
	return p
}
