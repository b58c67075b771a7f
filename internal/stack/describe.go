package stack

import (
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Bounds of a description: a stack deeper than MaxDepth or longer than
// MaxLayers is cut there (and says so). Real stacks are a handful of
// layers (file, filesystem, partition, dm-crypt, LVM, md, disks); the
// bounds keep a loop of loops, or a sysfs that lies, from costing more.
const (
	MaxDepth  = 16
	MaxLayers = 64
)

// Description is the storage under one target.
type Description struct {
	Stack  []result.Layer
	Disks  []result.Disk
	Unseen []string
	// Missing says that the path described does not exist (a file a run
	// has yet to create): nothing else is known.
	Missing bool
}

// Apply records d in t: its stack, its disk (the first) and its disks
// (when several), and what could not be seen.
func (d Description) Apply(t *result.Target) {
	t.Stack, t.Disk, t.Disks, t.StackUnseen = d.Stack, nil, nil, d.Unseen
	if len(d.Disks) > 0 {
		disk := d.Disks[0]
		t.Disk = &disk
	}
	if len(d.Disks) > 1 {
		t.Disks = d.Disks
	}
}

// Devices lists the block devices of d that have a request queue of
// their own (loop, dm and md devices and disks; a partition is its
// disk's), each with its settings, in stack order.
func (d Description) Devices() []result.Disk {
	var out []result.Disk
	for _, l := range d.Stack {
		if l.Queue != nil {
			out = append(out, result.Disk{Name: l.Name, Queue: *l.Queue})
		}
	}
	return append(out, d.Disks...)
}

// Changed says which settings of the storage differ between before and
// after (the same target described at a run's start and at its end):
// "loop scheduler: mq-deadline, then none".
func Changed(before, after Description) []string {
	var tb, ta result.Target
	before.Apply(&tb)
	after.Apply(&ta)
	var out []string
	for _, d := range result.DiffSettings(tb.StorageSettings(), ta.StorageSettings()) {
		out = append(out, d.Key+": "+orNone(d.Values[0])+", then "+orNone(d.Values[1]))
	}
	return out
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}
