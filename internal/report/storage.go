package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// What a result measured, in words: the stack under each target
// (targets[].stack) and each device's settings, for the text's Storage
// block, the HTML's Storage section and the CSV's storage columns.

// stackLine is t's stack from the target down in one line:
// "file /tmp/x.dat (1 extent) → ext4 on / (rw,relatime; 4 KiB blocks) →
// disk vda (virtio)".
func stackLine(t result.Target) string {
	parts := make([]string, 0, len(t.Stack))
	for _, l := range t.Stack {
		parts = append(parts, layerWords(l))
	}
	return strings.Join(parts, " → ")
}

// stackNames is t's stack by kind and name only, for a CSV cell: "file
// /tmp/x.dat → ext4 / → disk vda".
func stackNames(t result.Target) string {
	parts := make([]string, 0, len(t.Stack))
	for _, l := range t.Stack {
		k := l.Kind
		if l.Kind == result.LayerFilesystem && l.FSType != "" {
			k = l.FSType
		}
		parts = append(parts, k+" "+l.Name)
	}
	return strings.Join(parts, " → ")
}

func layerWords(l result.Layer) string {
	switch l.Kind {
	case result.LayerFile:
		var d []string
		if l.Depth > 0 {
			d = append(d, iec(l.SizeBytes))
		}
		if l.AllocatedBytes != nil {
			if a := *l.AllocatedBytes; a < l.SizeBytes {
				d = append(d, "sparse: "+iec(a)+" allocated")
			}
		}
		if l.Extents != nil {
			d = append(d, count(uint64(*l.Extents))+" "+plural(int(*l.Extents), "extent", "extents"))
		}
		return "file " + l.Name + paren(strings.Join(d, ", "))
	case result.LayerFilesystem:
		fs := l.FSType
		if fs == "" {
			fs = "filesystem"
		}
		var d []string
		if l.MountOptions != "" {
			d = append(d, l.MountOptions)
		}
		if l.BlockBytes > 0 {
			d = append(d, iec(l.BlockBytes)+" blocks")
		}
		return fs + " on " + l.Name + paren(strings.Join(d, "; "))
	case result.LayerPartition:
		return fmt.Sprintf("partition %s (#%d at %s, %s)", l.Name, l.Number, iec(l.OffsetBytes), iec(l.SizeBytes))
	case result.LayerLoop:
		var d []string
		if l.Queue != nil {
			d = append(d, schedulerWords(l.Queue.Scheduler))
		}
		if l.DirectIO != nil {
			d = append(d, "direct I/O "+onOff(*l.DirectIO))
		}
		if l.OffsetBytes > 0 || l.SizeLimitBytes > 0 {
			span := "from byte " + strconv.FormatInt(l.OffsetBytes, 10)
			if l.SizeLimitBytes > 0 {
				span += ", " + iec(l.SizeLimitBytes)
			}
			d = append(d, span)
		}
		if l.BackingDeleted {
			d = append(d, "backing file deleted")
		}
		return "loop " + l.Name + paren(strings.Join(d, ", "))
	case result.LayerDM:
		s := "dm " + l.Name
		if l.DMName != "" {
			s += " " + strconv.Quote(l.DMName)
		}
		if l.DMUUIDPrefix != "" {
			s += " (" + l.DMUUIDPrefix + ")"
		}
		return s + over(l.Slaves)
	case result.LayerMD:
		s := "md " + l.Name
		if l.Level != "" {
			s += " " + l.Level
		}
		if l.ChunkBytes > 0 {
			s += " (" + iec(l.ChunkBytes) + " chunks)"
		}
		return s + over(l.Slaves)
	case result.LayerDisk:
		return "disk " + l.Name + over(l.Slaves)
	}
	return l.Kind + " " + l.Name
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func over(slaves []string) string {
	if len(slaves) == 0 {
		return ""
	}
	return " over " + strings.Join(slaves, ", ")
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func schedulerWords(s string) string {
	if s == "" {
		return "no scheduler (bio-based)"
	}
	return "scheduler " + s
}

// queueWords is a device's queue settings in words.
func queueWords(q result.Queue) string {
	d := []string{iec(q.SizeBytes), "blocks " + iec(q.LogicalBlockBytes) + "/" + iec(q.PhysicalBlockBytes)}
	s := schedulerWords(q.Scheduler)
	if q.NrRequests > 0 {
		s += " (nr_requests " + strconv.FormatInt(q.NrRequests, 10) + ")"
	}
	d = append(d, s, "max I/O "+iec(q.MaxSectorsKB*1024))
	if q.WriteCache != "" {
		wc := q.WriteCache
		if q.FUA {
			wc += " with FUA"
		}
		d = append(d, wc)
	}
	d = append(d, "rotational "+yesNo(q.Rotational))
	if q.DiscardMaxBytes > 0 {
		d = append(d, "discard up to "+iec(q.DiscardMaxBytes))
	} else {
		d = append(d, "no discard")
	}
	if q.Zoned != "" {
		d = append(d, "zoned "+q.Zoned)
	}
	return strings.Join(d, ", ")
}

// diskWords describes a disk: what it is, then its queue.
func diskWords(d result.Disk) string {
	var id []string
	what := "disk"
	if d.Bus != "" {
		what = d.Bus + " disk"
	}
	id = append(id, what)
	if d.Model != "" {
		id = append(id, strconv.Quote(d.Model))
	}
	if d.Firmware != "" {
		id = append(id, "firmware "+d.Firmware)
	}
	s := strings.Join(id, " ") + ", " + queueWords(d.Queue)
	if d.NUMANode != nil && *d.NUMANode >= 0 {
		s += ", NUMA node " + strconv.Itoa(*d.NUMANode)
	}
	if d.SerialSHA256 != "" {
		s += ", serial sha256:" + short(d.SerialSHA256)
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// StorageLines is the Storage block of one target: its stack, then a
// line per device with a queue of its own (loop, dm, md, disks), then
// what could not be seen and what changed while it ran. Nil for a target
// that does not describe its storage.
func StorageLines(t result.Target) []string {
	if !t.HasStack() {
		return nil
	}
	var out []string
	if len(t.Stack) > 0 {
		out = append(out, stackLine(t))
	}
	for _, l := range t.Stack {
		if l.Queue != nil {
			out = append(out, "  "+l.Name+": "+l.Kind+" device, "+queueWords(*l.Queue))
		}
	}
	for _, d := range t.AllDisks() {
		out = append(out, "  "+d.Name+": "+diskWords(d))
	}
	for _, u := range t.StackUnseen {
		out = append(out, "  not seen: "+u)
	}
	for _, c := range t.StackChanged {
		out = append(out, "  changed while the run ran: "+c)
	}
	return out
}

// joinDisks joins a value of every disk of every target: "+" between a
// target's disks, ";" between targets (as the other target columns).
func joinDisks(r *result.Result, f func(d result.Disk) string) string {
	return joinTargets(r, func(t result.Target) string {
		var v []string
		for _, d := range t.AllDisks() {
			v = append(v, f(d))
		}
		return strings.Join(v, "+")
	})
}

// stackSchedulers is the scheduler of every device of t with a queue:
// "loop5=mq-deadline,vda=none" ("" for a device without a scheduler).
func stackSchedulers(t result.Target) string {
	var v []string
	for _, l := range t.Stack {
		if l.Queue != nil {
			v = append(v, l.Name+"="+l.Queue.Scheduler)
		}
	}
	for _, d := range t.AllDisks() {
		v = append(v, d.Name+"="+d.Scheduler)
	}
	return strings.Join(v, ",")
}
