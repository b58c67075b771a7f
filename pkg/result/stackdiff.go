package result

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Setting is one setting of a target's storage, by a key that means the
// same on another machine ("disk scheduler", "filesystem", "loop direct
// I/O"): names that differ from machine to machine (sdb here, nvme0n1
// there, a mount point) are not settings, so compare and merge pair
// different devices by their place in the stack.
type Setting struct {
	Key, Value string
}

// StorageSettings lists t's storage settings, in stack order; nil when t
// does not describe its storage.
func (t *Target) StorageSettings() []Setting {
	if !t.HasStack() {
		return nil
	}
	var out []Setting
	add := func(k, v string) { out = append(out, Setting{k, v}) }
	add("stack", StackShape(t.Stack))
	seen := map[string]int{}
	label := func(kind string) string {
		seen[kind]++
		if n := seen[kind]; n > 1 {
			return kind + " " + strconv.Itoa(n)
		}
		return kind
	}
	for _, l := range t.Stack {
		switch l.Kind {
		case LayerFile:
			k := label(l.Kind)
			if l.AllocatedBytes != nil {
				add(k+" allocation", allocation(l))
			}
		case LayerFilesystem:
			k := label(l.Kind)
			add(k, l.FSType)
			add(k+" mount options", l.MountOptions)
			opts := l.FSOptions
			if opts == "" {
				opts = l.SuperOptions
			}
			add(k+" options", opts)
			if l.BlockBytes > 0 {
				add(k+" block size", strconv.FormatInt(l.BlockBytes, 10))
			}
		case LayerPartition:
			add(label(l.Kind)+" offset", strconv.FormatInt(l.OffsetBytes, 10))
		case LayerLoop, LayerDM, LayerMD:
			k := label(l.Kind)
			switch l.Kind {
			case LayerLoop:
				if l.DirectIO != nil {
					add(k+" direct I/O", yesNo(*l.DirectIO))
				}
				add(k+" offset", strconv.FormatInt(l.OffsetBytes, 10))
			case LayerDM:
				add(k+" type", l.DMUUIDPrefix)
			case LayerMD:
				add(k+" level", l.Level)
				add(k+" chunk", strconv.FormatInt(l.ChunkBytes, 10))
			}
			if l.Queue != nil {
				out = append(out, queueSettings(k, *l.Queue)...)
			}
		}
	}
	for i, d := range t.AllDisks() {
		k := "disk"
		if i > 0 {
			k += " " + strconv.Itoa(i+1)
		}
		add(k+" model", d.Model)
		add(k+" firmware", d.Firmware)
		if d.Bus != "" {
			add(k+" bus", d.Bus)
		}
		out = append(out, queueSettings(k, d.Queue)...)
		if d.NUMANode != nil {
			add(k+" NUMA node", strconv.Itoa(*d.NUMANode))
		}
		if d.SerialSHA256 != "" {
			add(k+" serial", "sha256:"+shortHash(d.SerialSHA256))
		}
	}
	return out
}

func queueSettings(k string, q Queue) []Setting {
	sched := q.Scheduler
	if sched == "" {
		sched = "(no request queue)"
	}
	s := []Setting{
		{k + " size", strconv.FormatInt(q.SizeBytes, 10)},
		{k + " scheduler", sched},
		{k + " nr_requests", strconv.FormatInt(q.NrRequests, 10)},
		{k + " max_sectors_kb", strconv.FormatInt(q.MaxSectorsKB, 10)},
		{k + " read_ahead_kb", strconv.FormatInt(q.ReadAheadKB, 10)},
		{k + " write cache", q.WriteCache},
		{k + " FUA", yesNo(q.FUA)},
		{k + " rotational", yesNo(q.Rotational)},
		{k + " block sizes", fmt.Sprintf("%d/%d", q.LogicalBlockBytes, q.PhysicalBlockBytes)},
		{k + " discard_max_bytes", strconv.FormatInt(q.DiscardMaxBytes, 10)},
	}
	if q.Zoned != "" {
		s = append(s, Setting{k + " zoned", q.Zoned})
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// allocation says how much of a file its filesystem had allocated.
func allocation(l Layer) string {
	switch a := *l.AllocatedBytes; {
	case a >= l.SizeBytes:
		return "fully allocated"
	case a == 0:
		return "sparse (nothing allocated)"
	default:
		return "sparse (partly allocated)"
	}
}

// StackShape is the stack's layers by kind, without names: "file → ext4
// → partition → loop → file → ext4 → disk"; a device over several slaves
// says how many ("md raid1 over 2 → disk → disk").
func StackShape(stack []Layer) string {
	parts := make([]string, 0, len(stack))
	for _, l := range stack {
		p := l.Kind
		switch l.Kind {
		case LayerFilesystem:
			if l.FSType != "" {
				p = l.FSType
			}
		case LayerMD:
			if l.Level != "" {
				p += " " + l.Level
			}
		case LayerDM:
			if l.DMUUIDPrefix != "" {
				p += " " + l.DMUUIDPrefix
			}
		}
		if len(l.Slaves) > 1 {
			p += " over " + strconv.Itoa(len(l.Slaves))
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " → ")
}

// SettingDiff is one setting whose value differs: Values has one entry
// per side (compare: base, other) or per run (merge), "" where a side
// does not have the setting.
type SettingDiff struct {
	Key    string
	Values []string
}

// DiffSettings lists the settings whose values differ between the sides,
// in the order they first appear. A side that does not describe its
// storage (nil) is left out: nothing is known to differ there.
func DiffSettings(sides ...[]Setting) []SettingDiff {
	var keys []string
	vals := map[string][]string{}
	known := 0
	for i, s := range sides {
		if s == nil {
			continue
		}
		known++
		for _, st := range s {
			v, ok := vals[st.Key]
			if !ok {
				keys = append(keys, st.Key)
				v = make([]string, len(sides))
				vals[st.Key] = v
			}
			v[i] = st.Value
		}
	}
	if known < 2 {
		return nil
	}
	var out []SettingDiff
	for _, k := range keys {
		v := vals[k]
		var first *string
		differs := false
		for i := range sides {
			if sides[i] == nil {
				continue
			}
			if first == nil {
				first = &v[i]
			} else if v[i] != *first {
				differs = true
			}
		}
		if differs {
			out = append(out, SettingDiff{Key: k, Values: slices.Clone(v)})
		}
	}
	return out
}

// orNone shows an absent value.
func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// StorageDiffers says how the storage of b's targets differs from a's,
// target by target: "disk scheduler: base mq-deadline, other none". A
// side that does not describe its storage is said once.
func StorageDiffers(a, b *Result, nameA, nameB string) []string {
	var out []string
	n := max(len(a.Targets), len(b.Targets))
	for i := 0; i < n; i++ {
		prefix := ""
		if n > 1 {
			prefix = fmt.Sprintf("target %d: ", i+1)
		}
		var sa, sb []Setting
		if i < len(a.Targets) {
			sa = a.Targets[i].StorageSettings()
		}
		if i < len(b.Targets) {
			sb = b.Targets[i].StorageSettings()
		}
		switch {
		case sa == nil && sb == nil:
			continue
		case sa == nil:
			out = append(out, prefix+"the "+nameA+" result does not describe its storage (written before ioprobe recorded it)")
			continue
		case sb == nil:
			out = append(out, prefix+"the "+nameB+" result does not describe its storage (written before ioprobe recorded it)")
			continue
		}
		for _, d := range DiffSettings(sa, sb) {
			out = append(out, fmt.Sprintf("%s%s: %s %s, %s %s", prefix, d.Key, nameA, orNone(d.Values[0]), nameB, orNone(d.Values[1])))
		}
	}
	return out
}

// mergeStorageDiffers says where the storage of the runs merged differs
// ("disk scheduler: mq-deadline on node1, node2; none on node3"), target
// by target; runs that do not describe their storage are named apart.
// What inputs that were merged already said is kept.
func mergeStorageDiffers(rs []*Result) []string {
	labels := make([]string, len(rs))
	count := map[string]int{}
	for i, r := range rs {
		labels[i] = r.Host.Hostname
		if r.Merged != nil && len(r.Merged.Hosts) > 0 {
			labels[i] = strings.Join(r.Merged.Hosts, "+")
		}
		count[labels[i]]++
	}
	for i := range labels {
		if count[labels[i]] > 1 {
			labels[i] += fmt.Sprintf(" (run %d)", i+1)
		}
	}
	var out []string
	addOnce := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	n := 0
	for _, r := range rs {
		n = max(n, len(r.Targets))
		if r.Merged != nil {
			for _, s := range r.Merged.StorageDiffers {
				addOnce(s)
			}
		}
	}
	for ti := 0; ti < n; ti++ {
		prefix := ""
		if n > 1 {
			prefix = fmt.Sprintf("target %d: ", ti+1)
		}
		sides := make([][]Setting, len(rs))
		var unknown []string
		described := 0
		for i, r := range rs {
			if ti < len(r.Targets) {
				sides[i] = r.Targets[ti].StorageSettings()
			}
			if sides[i] == nil {
				unknown = append(unknown, labels[i])
			} else {
				described++
			}
		}
		if len(unknown) > 0 && described > 0 {
			addOnce(prefix + "storage not recorded on " + strings.Join(unknown, ", ") + " (results written before ioprobe recorded it)")
		}
		for _, d := range DiffSettings(sides...) {
			var order []string
			on := map[string][]string{}
			for i, v := range d.Values {
				if sides[i] == nil {
					continue
				}
				v = orNone(v)
				if _, ok := on[v]; !ok {
					order = append(order, v)
				}
				on[v] = append(on[v], labels[i])
			}
			parts := make([]string, len(order))
			for j, v := range order {
				parts[j] = v + " on " + strings.Join(on[v], ", ")
			}
			addOnce(prefix + d.Key + ": " + strings.Join(parts, "; "))
		}
	}
	return out
}
