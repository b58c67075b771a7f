package report

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// AllHosts labels the merged result beside the hosts' own.
const AllHosts = "All hosts"

// WriteFleetText writes a fleet run as Iometer shows a run on several
// managers: a row per host and an "All hosts" row (the merged result),
// then the merged result's full summary.
func WriteFleetText(w io.Writer, f *result.Fleet) error {
	if f == nil {
		return errors.New("report: nil fleet document")
	}
	ew := newErrWriter(w)
	title := "ioprobe"
	if f.Version != "" {
		title += " " + f.Version
	}
	title += fmt.Sprintf(" fleet run on %d %s, target %q", len(f.Hosts), plural(len(f.Hosts), "host", "hosts"), f.Target)
	if !f.StartAt.IsZero() {
		title += ", common start " + f.StartAt.UTC().Format("2006-01-02 15:04:05.000 UTC")
	}
	ew.printf("%s\n", title)
	if f.Partial {
		ew.printf("PARTIAL: %d of %d hosts did not complete: %s\n", len(f.FailedHosts), len(f.Hosts), strings.Join(f.FailedHosts, ", "))
	}
	ew.printf("\n")
	if ew.err == nil {
		ew.err = writeHostsTable(ew.w, f.Hosts, f.Merged)
	}
	if f.Merged != nil {
		ew.printf("\n%s:\n", AllHosts)
		if ew.err == nil {
			ew.err = WriteText(ew.w, f.Merged)
		}
	}
	return ew.err
}

// writeHostsTable writes hostsTable, then the error of each host that
// has one: the State column says only done, failed or unreachable (an
// error there widened every row to its length).
func writeHostsTable(w io.Writer, hosts []result.FleetHost, merged *result.Result) error {
	w = textsafe.NewWriter(w)
	if err := hostsTable(hosts, merged).write(w, ""); err != nil {
		return err
	}
	if errs := hostErrors(hosts); len(errs) > 0 {
		if _, err := fmt.Fprintf(w, "\n%s\n", strings.Join(errs, "\n")); err != nil {
			return err
		}
	}
	return nil
}

// hostErrors are the hosts' errors, each naming its host as the tables
// do ("node1 at 10.0.0.2:9100 unreachable: connection refused").
func hostErrors(hosts []result.FleetHost) []string {
	var out []string
	for _, h := range hosts {
		if h.Error == "" {
			continue
		}
		who := h.Address
		if h.Name() != h.Address {
			who = h.Name() + " at " + h.Address
		}
		out = append(out, textsafe.Escape(fmt.Sprintf("%s %s: %s", who, h.State, h.Error)))
	}
	return out
}

// hostsTable is the row per host and the "All hosts" row: the figures of
// result.ViewFleetColumns. A host's state is one word; writeHostsTable
// puts its error below the table.
func hostsTable(hosts []result.FleetHost, merged *result.Result) *table {
	t := &table{align: "llll"}
	head := []string{"Host", "Address", "State", "Start offset"}
	for _, id := range result.ViewFleetColumns {
		head = append(head, id.Figure().Head)
	}
	t.add(head...)
	var first *result.Result
	for _, h := range hosts {
		if r := h.Result; r != nil && (first == nil || r.StartedAt.Before(first.StartedAt)) {
			first = r
		}
	}
	row := func(name, addr, state string, r *result.Result) {
		cells := []string{name, addr, state}
		if r == nil {
			for range len(result.ViewFleetColumns) + 1 {
				cells = append(cells, "-")
			}
			t.add(cells...)
			return
		}
		off := "-"
		if first != nil && r.Merged == nil {
			off = "+" + num(r.StartedAt.Sub(first.StartedAt).Seconds()*1e3, 1) + " ms"
		}
		cells = append(cells, off)
		for _, id := range result.ViewFleetColumns {
			cells = append(cells, figureCell(id.Figure(), &r.Summary))
		}
		t.add(cells...)
	}
	done := 0
	for _, h := range hosts {
		state := string(h.State)
		if !h.Failed() {
			done++
		}
		row(h.Name(), h.Address, state, h.Result)
	}
	row(AllHosts, "", fmt.Sprintf("%d/%d done", done, len(hosts)), merged)
	return t
}

// figureCell is a figure in its shown unit to the reports' precision, a
// count with its thousands.
func figureCell(f result.Figure, s *result.Summary) string {
	if f.Unit == result.UnitCount {
		return num(f.Of(s), 0)
	}
	return num(f.Shown(s), f.Unit.Decimals())
}

// partialMark follows the figures of a partial fleet point: one some of
// whose hosts did not complete, so that it holds fewer hosts than it ran
// on.
const partialMark = "†"

// partialNote says which hosts a partial fleet point holds and which did
// not complete ("" for a point that is not partial): "partial: holds 2 of
// 3 hosts (node1 at 10.0.0.1:9100, node2); node1 at 10.0.0.2:9100
// unreachable".
func partialNote(r *result.Result) string {
	held, failed := r.FleetPartial()
	if len(failed) == 0 {
		return ""
	}
	shared := map[string]int{}
	for _, h := range r.Hosts {
		shared[h.Name()]++
	}
	name := func(h result.FleetHost) string {
		if shared[h.Name()] > 1 && h.Name() != h.Address {
			return h.Name() + " at " + h.Address
		}
		return h.Name()
	}
	var hs, fs []string
	for _, h := range held {
		hs = append(hs, name(h))
	}
	for _, h := range failed {
		fs = append(fs, name(h)+" "+string(h.State))
	}
	held0 := "none"
	if len(hs) > 0 {
		held0 = strings.Join(hs, ", ")
	}
	return fmt.Sprintf("partial: holds %d of %d hosts (%s); %s", len(held), len(r.Hosts), held0, strings.Join(fs, ", "))
}

// fleetSuite is a fleet run as a suite document of its hosts' results and
// the merged one, for the writers that draw several results (HTML, CSV).
func fleetSuite(f *result.Fleet) *result.Suite {
	s := &result.Suite{Schema: result.SuiteSchema, Version: f.Version, StartedAt: f.StartedAt, Results: []*result.Result{}}
	if m := f.MergedOf(); m != nil {
		s.Results = append(s.Results, m)
	}
	return s
}

// expandHosts lists, for each result that carries its fleet hosts, the
// merged result (the side "All hosts") and then every host's own result
// (a side named by its host): total and per-host figures side by side.
func expandHosts(rs []*result.Result) []*result.Result {
	// Hosts that share a name (one machine's network namespaces,
	// containers without their own UTS namespace) are told apart by their
	// addresses, in the whole document alike.
	addrs := map[string]map[string]bool{}
	for _, r := range rs {
		for _, h := range r.Hosts {
			if addrs[h.Name()] == nil {
				addrs[h.Name()] = map[string]bool{}
			}
			addrs[h.Name()][h.Address] = true
		}
	}
	var out []*result.Result
	for _, r := range rs {
		out = append(out, r)
		for _, h := range r.Hosts {
			if h.Result == nil {
				continue
			}
			c := *h.Result
			if len(addrs[h.Name()]) > 1 {
				c.Host.Hostname = h.Name() + " " + h.Address
			}
			if c.Point == nil && r.Point != nil {
				p := *r.Point
				c.Point = &p
			}
			out = append(out, &c)
		}
	}
	return out
}
