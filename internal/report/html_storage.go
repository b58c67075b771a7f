package report

import (
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// storageSection is the HTML report's Storage section: each distinct
// stack under the results' targets (with the points measured on it),
// each device's settings, and what differs between results measured on
// one host's target (a scheduler switched between points) or changed
// while a run ran. Nil when no result describes its storage.
func storageSection(rs []*result.Result) *htmlSection {
	stacks := htmlTable{Caption: "From each target down", Head: []string{"Host", "Target", "Stack", "Points"}}
	devices := htmlTable{Caption: "Each device with a request queue of its own",
		Head: []string{"Host", "Device", "Kind", "Model", "Firmware", "Bus", "Size", "Logical/physical block", "Rotational",
			"Scheduler", "nr_requests", "max_sectors_kb", "Write cache", "FUA", "Discard max", "NUMA node", "Serial (SHA-256)"}}
	type group struct {
		row    int
		points []string
	}
	groups := map[string]*group{}
	seenDev := map[string]bool{}
	// The settings of each host's target, result by result, to say
	// what differs between them.
	type side struct {
		where    []string
		settings [][]result.Setting
	}
	sides := map[string]*side{}
	var sideOrder []string
	var notes []string
	note := func(s string) {
		if indexOf(notes, s) < 0 {
			notes = append(notes, s)
		}
	}
	described := false
	for _, r := range rs {
		where := pointWhere(r)
		for _, t := range r.Targets {
			if !t.HasStack() {
				continue
			}
			described = true
			line := stackLine(t)
			key := r.Host.Hostname + "\x00" + t.Path + "\x00" + line
			g := groups[key]
			if g == nil {
				g = &group{row: len(stacks.Rows)}
				groups[key] = g
				stacks.Rows = append(stacks.Rows, []htmlCell{{Text: r.Host.Hostname}, {Text: t.Path, Wrap: true}, {Text: line, Wrap: true}, {Wrap: true}})
			}
			if indexOf(g.points, where) < 0 {
				g.points = append(g.points, where)
			}
			stacks.Rows[g.row][3].Text = strings.Join(g.points, ", ")
			for _, row := range deviceRows(r.Host.Hostname, t) {
				k := strings.Join(cellTexts(row), "\x00")
				if !seenDev[k] {
					seenDev[k] = true
					devices.Rows = append(devices.Rows, row)
				}
			}
			for _, u := range t.StackUnseen {
				note(r.Host.Hostname + ", " + t.Path + ": not seen: " + u)
			}
			for _, c := range t.StackChanged {
				note(where + ", " + t.Path + ": changed while the run ran: " + c)
			}
			sk := r.Host.Hostname + "\x00" + t.Path
			s := sides[sk]
			if s == nil {
				s = &side{}
				sides[sk] = s
				sideOrder = append(sideOrder, sk)
			}
			s.where = append(s.where, where)
			s.settings = append(s.settings, t.StorageSettings())
		}
		if r.Merged != nil {
			for _, d := range r.Merged.StorageDiffers {
				described = true
				note(where + ": merged from storage that differs: " + d)
			}
		}
	}
	if !described {
		return nil
	}
	for _, sk := range sideOrder {
		s := sides[sk]
		host, path, _ := strings.Cut(sk, "\x00")
		for _, d := range result.DiffSettings(s.settings...) {
			var order []string
			at := map[string][]string{}
			for i, v := range d.Values {
				if _, ok := at[v]; !ok {
					order = append(order, v)
				}
				at[v] = append(at[v], s.where[i])
			}
			parts := make([]string, len(order))
			for i, v := range order {
				if v == "" {
					v = "(none)"
				}
				parts[i] = v + " at " + strings.Join(at[v], ", ")
			}
			note(host + ", " + path + ": " + d.Key + " differs between results: " + strings.Join(parts, "; "))
		}
	}
	devices.Notes = notes
	return &htmlSection{ID: "storage", Key: "storage", Title: "Storage",
		Caption: "What was measured, as sysfs and the kernel's files said when each run started: the stack from each target down to its disks, and each device's settings.",
		Parts: []*htmlPart{
			{Key: "stacks", Title: "Stacks", Wide: true, Tables: []htmlTable{stacks}},
			{Key: "devices", Title: "Devices", Wide: true, Tables: []htmlTable{devices}},
		}}
}

// deviceRows are the rows of t's devices: each loop, dm and md device's
// queue and each disk.
func deviceRows(host string, t result.Target) [][]htmlCell {
	var rows [][]htmlCell
	row := func(name, kind string, d result.Disk) []htmlCell {
		numa := ""
		if d.NUMANode != nil {
			numa = strconv.Itoa(*d.NUMANode)
		}
		sched := d.Scheduler
		if sched == "" {
			sched = "(bio-based: none)"
		}
		nr := ""
		if d.NrRequests > 0 {
			nr = strconv.FormatInt(d.NrRequests, 10)
		}
		return []htmlCell{{Text: host}, {Text: name}, {Text: kind}, {Text: d.Model}, {Text: d.Firmware}, {Text: d.Bus},
			{Text: iec(d.SizeBytes), Num: true}, {Text: iec(d.LogicalBlockBytes) + "/" + iec(d.PhysicalBlockBytes), Num: true},
			{Text: yesNo(d.Rotational)}, {Text: sched}, {Text: nr, Num: true}, {Text: strconv.FormatInt(d.MaxSectorsKB, 10), Num: true},
			{Text: d.WriteCache}, {Text: yesNo(d.FUA)}, {Text: iec(d.DiscardMaxBytes), Num: true}, {Text: numa, Num: true},
			{Text: d.SerialSHA256}}
	}
	for _, l := range t.Stack {
		if l.Queue != nil {
			rows = append(rows, row(l.Name, l.Kind, result.Disk{Queue: *l.Queue}))
		}
	}
	for _, d := range t.AllDisks() {
		rows = append(rows, row(d.Name, "disk", d))
	}
	return rows
}

func cellTexts(row []htmlCell) []string {
	out := make([]string, len(row))
	for i, c := range row {
		out[i] = c.Text
	}
	return out
}
