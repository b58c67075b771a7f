package icf

import (
	"strconv"
	"strings"
)

// managers reads 'MANAGER LIST (ManagerList/Manager/Worker::LoadConfig).
// One manager only: Iometer's managers are hosts, each with its own
// Dynamo and disks.
func (c *Config) managers(r *reader) error {
	r.sec = secManagers
	c.HasManagers = true
	for {
		k, err := r.nextKey("'Manager ID, manager name or 'END manager list")
		if err != nil {
			return err
		}
		switch {
		case k.equals("END manager list"):
			return nil
		case k.equals("Manager ID, manager name"):
			if c.Manager != "" {
				return r.errf(k, k.key(), "a second manager: Iometer's managers are hosts (a Dynamo each, with its own disks), and ioprobe runs on one; save one file per host, run each there, and merge the results (ioprobe report --merge), or use ioprobe fleet")
			}
			v, err := r.value(k)
			if err != nil {
				return err
			}
			_, name, _ := strings.Cut(v.text, ",")
			c.Manager = strings.TrimSpace(name)
			if c.Manager == "" {
				c.Manager = v.text
			}
			if err := c.manager(r); err != nil {
				return err
			}
		default:
			return r.errf(k, k.key(), "not a manager list key Iometer writes")
		}
	}
}

func (c *Config) manager(r *reader) error {
	for {
		k, err := r.nextKey("'Worker or 'End manager")
		if err != nil {
			return err
		}
		switch {
		case k.equals("End manager"):
			return nil
		case k.equals("Manager network address"):
			if _, err := r.value(k); err != nil {
				return err
			}
		case k.equals("Worker"):
			v, err := r.value(k)
			if err != nil {
				return err
			}
			w := Worker{Name: v.text, QueueDepth: 1, DataPattern: -1, At: v.n}
			if err := c.worker(r, &w); err != nil {
				return err
			}
			c.Disk = append(c.Disk, w)
		default:
			return r.errf(k, k.key(), "not a manager key Iometer writes")
		}
	}
}

// worker reads one worker up to 'End worker.
func (c *Config) worker(r *reader, w *Worker) error {
	k, v, err := r.pair("Worker type", "after a worker's name")
	if err != nil {
		return err
	}
	switch t := strings.ToUpper(strings.Join(fields(v.text), ",")); {
	case t == "DISK":
	case strings.HasPrefix(t, "NETWORK"):
		return r.errf(v, k.key(), "worker %q is a network worker (%s): ioprobe measures storage only", w.Name, v.text)
	default:
		return r.errf(v, k.key(), "worker %q: type %q: want DISK", w.Name, v.text)
	}
	assigned := false
	for {
		k, err := r.nextKey("a worker key or 'End worker")
		if err != nil {
			return err
		}
		switch {
		case k.equals("End worker"):
			if !assigned {
				// No list saved: the specifications whose default
				// assignment takes disk workers, as Iometer assigns them.
				for _, s := range c.Specs {
					if s.Assignment == "ALL" || s.Assignment == "DISK" {
						w.Specs = append(w.Specs, s.Name)
					}
				}
			}
			return nil
		case k.equals("Default target settings for worker"):
			err = c.workerDefaults(r, w)
		case k.equals("Assigned access specs"):
			assigned = true
			err = c.assigned(r, w)
		case k.equals("Target assignments"):
			err = c.targets(r, w)
		default:
			err = r.errf(k, k.key(), "not a worker key Iometer writes")
		}
		if err != nil {
			return err
		}
	}
}

// workerDefaults reads the worker's default target settings: each key
// is a list of column names and its value the matching list of values.
func (c *Config) workerDefaults(r *reader, w *Worker) error {
	for {
		k, err := r.nextKey("a default target setting or 'End default target settings for worker")
		if err != nil {
			return err
		}
		if k.equals("End default target settings for worker") {
			return nil
		}
		v, err := r.value(k)
		if err != nil {
			return err
		}
		cols := strings.Split(k.key(), ",")
		vals := strings.Split(v.text, ",")
		if len(vals) != len(cols) {
			return r.errf(v, k.key(), "%q: %d values for %d columns", v.text, len(vals), len(cols))
		}
		fixedSeed := false
		for i, col := range cols {
			if err := w.setting(r, k, v, strings.ToLower(strings.TrimSpace(col)), strings.TrimSpace(vals[i]), &fixedSeed); err != nil {
				return err
			}
		}
		if !fixedSeed && strings.Contains(strings.ToLower(k.key()), "use fixed seed") {
			w.Seed = 0 // a seed value without ENABLED is not used
		}
	}
}

// setting applies one column of the default target settings.
func (w *Worker) setting(r *reader, k, v line, col, val string, fixedSeed *bool) error {
	num := func(lo int64) (int64, error) {
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < lo {
			return 0, r.errf(v, k.key(), "%s %q: want a whole number of %d or more", col, val, lo)
		}
		return n, nil
	}
	onOff := func() (bool, error) {
		switch strings.ToUpper(val) {
		case "ENABLED":
			return true, nil
		case "DISABLED":
			return false, nil
		}
		return false, r.errf(v, k.key(), "%s %q: want ENABLED or DISABLED", col, val)
	}
	switch col {
	case "number of outstanding ios":
		n, err := num(1)
		if err != nil {
			return err
		}
		w.QueueDepth = int(min(n, 1<<20))
	case "test connection rate":
		on, err := onOff()
		if err != nil {
			return err
		}
		if on {
			return r.errf(v, k.key(), "test connection rate ENABLED: Iometer then opens and closes the target around every few transactions, which ioprobe does not do")
		}
	case "transactions per connection":
		n, err := num(0)
		if err != nil {
			return err
		}
		if n != 1 {
			return r.errf(v, k.key(), "transactions per connection %d: only Iometer's default, 1, has a meaning here (ioprobe does not open and close targets while measuring)", n)
		}
	case "use fixed seed":
		on, err := onOff()
		if err != nil {
			return err
		}
		*fixedSeed = on
	case "fixed seed value":
		n, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return r.errf(v, k.key(), "fixed seed value %q: want a whole number", val)
		}
		w.Seed = n
	case "disk maximum size":
		n, err := num(0)
		if err != nil {
			return err
		}
		if n > 1<<40 {
			return r.errf(v, k.key(), "disk maximum size %d sectors is over 512 TiB", n)
		}
		w.MaxSectors = n
	case "starting sector":
		n, err := num(0)
		if err != nil {
			return err
		}
		if n != 0 {
			return r.errf(v, k.key(), "starting sector %d: ioprobe's access region starts at the target's first byte (use 0, or a partition that starts there)", n)
		}
	case "data pattern":
		n, err := num(0)
		if err != nil || n > 2 {
			return r.errf(v, k.key(), "data pattern %q: want 0 (repeating bytes), 1 (pseudo random) or 2 (full random)", val)
		}
		w.DataPattern = int(n)
	case "use random data":
		n, err := num(0)
		if err != nil || n > 1 {
			return r.errf(v, k.key(), "use random data %q: want 0 or 1", val)
		}
		w.DataPattern = int(2 * n)
	default:
		return r.errf(v, k.key(), "column %q is not one ioprobe knows", col)
	}
	return nil
}

// assigned reads the names of the worker's access specifications.
func (c *Config) assigned(r *reader, w *Worker) error {
	for {
		r.skipBlank()
		l, ok := r.next()
		if !ok {
			return r.errf(l, "", "the file ends before 'End assigned access specs")
		}
		if l.isKey() {
			if l.equals("End assigned access specs") {
				return nil
			}
			return r.errf(l, l.key(), "want an access specification's name or 'End assigned access specs")
		}
		if strings.EqualFold(l.text, "Idle") {
			w.Specs = append(w.Specs, "")
			continue
		}
		found := false
		for _, s := range c.Specs {
			if strings.EqualFold(s.Name, l.text) {
				w.Specs, found = append(w.Specs, s.Name), true
				break
			}
		}
		if !found {
			return r.errf(l, "Assigned access specs", "worker %q: access specification %q is not in 'ACCESS SPECIFICATIONS", w.Name, l.text)
		}
	}
}

// targets reads the worker's disk targets.
func (c *Config) targets(r *reader, w *Worker) error {
	for {
		k, err := r.nextKey("'Target or 'End target assignments")
		if err != nil {
			return err
		}
		switch {
		case k.equals("End target assignments"):
			return nil
		case k.equals("Target"):
		default:
			return r.errf(k, k.key(), "want 'Target or 'End target assignments")
		}
		name, err := r.value(k)
		if err != nil {
			return err
		}
		tk, tv, err := r.pair("Target type", "after a target's name")
		if err != nil {
			return err
		}
		if t := strings.ToUpper(strings.Join(fields(tv.text), ",")); t != "DISK" {
			return r.errf(tv, tk.key(), "worker %q: target %q is %s, not a disk: ioprobe measures storage only", w.Name, name.text, tv.text)
		}
		end, err := r.nextKey("'End target")
		if err != nil {
			return err
		}
		if !end.equals("End target") {
			return r.errf(end, end.key(), "want 'End target")
		}
		if name.text == "" {
			return r.errf(name, k.key(), "a target needs a name")
		}
		dup := false
		for _, t := range w.Targets {
			dup = dup || t == name.text
		}
		if !dup { // Iometer assigns a target to a worker once
			w.Targets = append(w.Targets, name.text)
		}
	}
}
