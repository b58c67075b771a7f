package target

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// Loop devices stack storage where sysfs's holders do not look: a loop
// device over a disk (losetup -o 1MiB /dev/sdb) or over an image file
// leaves no trace in the disk's holders, does not claim it (O_EXCL still
// succeeds), and its filesystem can be mounted while the disk or the image
// looks idle. So before writing, ioprobe asks the attached loop devices
// what backs them (LOOP_GET_STATUS64: the backing inode, and the device
// when the backing is a block device; which ones it asks, and how it
// waits for them: loopask_linux.go) and refuses:
//
//   - a block device when a loop device over it (or over a partition or
//     the disk of it), or over the same file or device as the target when
//     the target is itself a loop device, or over any of those in turn, is
//     in use or holds a signature;
//   - a file that backs a loop device, always.

// maxLoopDepth bounds the walk up stacks of loop devices over loop devices.
const maxLoopDepth = 8

// loopDev is an attached loop device and what backs it.
type loopDev struct {
	blockDev
	backDev, backIno  uint64 // st_dev and st_ino of the backing file (or device node)
	backRdev          uint64 // the backing block device (0 for a file)
	offset, sizelimit uint64
	file              string // the backing file's name as the kernel keeps it
}

// span says which bytes of its backing the loop device shows.
func (l loopDev) span() string { return hostfs.Loop{Offset: l.offset, SizeLimit: l.sizelimit}.Span() }

func rdevOf(d blockDev) uint64 { return unix.Mkdev(d.Major, d.Minor) }

// backsLoop refuses writes (write: a run that writes; extending a file
// writes too) to the file st describes when a loop device shows it:
// whatever the loop device holds (a filesystem, mounted or not) lives in
// this file. No flag overrides it.
func (e env) backsLoop(path string, st *unix.Stat_t, write bool) error {
	if !write {
		return nil
	}
	ls, err := e.loops()
	if err != nil {
		return refusal(path, true, because(RefuseUnverifiable, "cannot tell whether a loop device uses it: "+err.Error()))
	}
	var reasons []finding
	for _, l := range ls {
		if l.backRdev == 0 && l.backDev == st.Dev && l.backIno == st.Ino {
			reasons = append(reasons, because(RefuseLoopBackingFile, fmt.Sprintf("it backs loop device %s (%s), whose contents are this file's", l.Name, l.span())))
		}
	}
	if len(reasons) > 0 {
		return refusal(path, true, reasons...)
	}
	return nil
}

// loopsOver lists why the block device dev may not be written because of
// loop devices: stacked on it or on a device whose bytes overlap it; or,
// when dev is a loop device, what it is a view into (loopView: its
// backing file or device, and what backs that in turn, each read whole),
// the loop devices over the same backings, and those stacked on any of
// them. Each loop device found is checked for use and for signatures, and
// so are the loop devices on top of it.
func (e env) loopsOver(dev string) []finding {
	if dev == "" {
		return nil // inUse has said why
	}
	fam, err := readFamily(e.sysRoot, dev)
	if err != nil {
		return nil // inUse has said why
	}
	ls, err := e.loops()
	if err != nil {
		return []finding{because(RefuseUnverifiable, "cannot tell whether a loop device is stacked on it: "+err.Error())}
	}
	var reasons []finding
	var chain []loopLink
	for i := range ls {
		if ls[i].Name == fam.Self.Name {
			if chain, err = e.loopChain(ls[i], ls); err != nil {
				reasons = append(reasons, because(RefuseUnverifiable, err.Error()))
			}
		}
	}
	type found struct {
		l   loopDev
		how string
	}
	var todo []found
	seen := map[string]bool{fam.Self.Name: true}
	for _, k := range chain {
		seen[k.over.Name] = true
		if k.dev != nil {
			seen[k.dev.Name] = true
		}
	}
	add := func(l loopDev, how string) {
		if !seen[l.Name] {
			seen[l.Name] = true
			todo = append(todo, found{l, how})
		}
	}
	// Loop devices stacked on it, its disk or its partitions, and on every
	// device it is a view into and theirs.
	type base struct {
		m       blockDev
		subject string
	}
	var bases []base
	for _, m := range fam.Overlaps() {
		subject := m.Name + " (of the same disk)"
		if m.Name == fam.Self.Name {
			subject = "it"
		}
		bases = append(bases, base{m, subject})
	}
	for _, k := range chain {
		if k.dev == nil {
			continue
		}
		bfam, err := readFamily(e.sysRoot, k.dev.Name)
		if err != nil {
			reasons = append(reasons, because(RefuseUnverifiable, fmt.Sprintf("cannot read the sysfs entry of %s: %v", k.subject, err)))
			continue
		}
		for _, m := range bfam.Overlaps() {
			subject := k.subject
			if m.Name != k.dev.Name {
				subject = m.Name + " (of the same disk as " + k.subject + ")"
			}
			bases = append(bases, base{m, subject})
		}
	}
	for _, b := range bases {
		for _, l := range ls {
			if l.backRdev == rdevOf(b.m) {
				add(l, fmt.Sprintf("loop device %s, stacked on %s (%s),", l.Name, b.subject, l.span()))
			}
		}
	}
	// Writing a loop device writes what backs it, and everything else
	// stacked there.
	for _, k := range chain {
		for _, l := range ls {
			if l.Name != k.over.Name && sameBacking(l, k.over) {
				what := "it"
				if k.over.Name != fam.Self.Name {
					what = k.over.Name
				}
				add(l, fmt.Sprintf("loop device %s, over the same %s as %s (%s),", l.Name, backingNoun(k.over), what, l.span()))
			}
		}
	}
	reasons = append(reasons, e.loopView(chain)...)
	for depth := 0; len(todo) > 0; depth++ {
		if depth >= maxLoopDepth {
			reasons = append(reasons, because(RefuseUnverifiable, fmt.Sprintf("loop devices are stacked more than %d deep on it", maxLoopDepth)))
			break
		}
		next := todo
		todo = nil
		for _, f := range next {
			if why := e.loopBusy(f.l); len(why) > 0 {
				reasons = append(reasons, because(RefuseLoopStacked, f.how+" "+strings.Join(why, "; ")))
			}
			for _, l := range ls {
				if l.backRdev == rdevOf(f.l.blockDev) {
					add(l, fmt.Sprintf("loop device %s, stacked on %s (%s),", l.Name, f.l.Name, l.span()))
				}
			}
		}
	}
	return reasons
}

// sameBacking says whether loop devices a and b show the same file or
// block device.
func sameBacking(a, b loopDev) bool {
	if a.backRdev != 0 || b.backRdev != 0 {
		return a.backRdev == b.backRdev
	}
	return a.backIno != 0 && a.backDev == b.backDev && a.backIno == b.backIno
}

func backingNoun(l loopDev) string {
	if l.backRdev != 0 {
		return "device"
	}
	if l.file != "" {
		return "file " + l.file
	}
	return "file"
}

// loopBusy says what makes loop device l unsafe to write under: in use
// (mounted, swap, held, partitioned: inUse; claimed: O_EXCL fails; open by
// a process; locked), or holding a signature.
func (e env) loopBusy(l loopDev) []string {
	var why []string
	for _, r := range e.inUse(l.Name) {
		why = append(why, "is in use: "+r.text)
	}
	node, err := e.deviceNode(l.blockDev)
	if err != nil {
		return append(why, "cannot be checked: "+err.Error())
	}
	fd, err := openDirect(node, unix.O_RDONLY|unix.O_EXCL, 0)
	if errors.Is(err, unix.EBUSY) {
		if len(why) == 0 {
			why = append(why, "is in use: the kernel refused exclusive access (mounted, swap, or claimed by device-mapper, md or another program)")
		}
		fd, err = openDirect(node, unix.O_RDONLY, 0)
	}
	if err != nil {
		return append(why, "cannot be opened to be checked: "+err.Error())
	}
	defer unix.Close(fd)
	if h := e.lockHolders(fd); h != "" {
		why = append(why, "is locked by "+h)
	}
	if o := e.openers(l.blockDev); o != "" {
		why = append(why, "is open by "+o)
	}
	size, err := blkSize64(fd)
	if err != nil {
		return append(why, "cannot be read to look for signatures: "+err.Error())
	}
	lbs, err := unix.IoctlGetInt(fd, unix.BLKSSZGET)
	if err != nil || lbs <= 0 {
		return append(why, fmt.Sprintf("cannot be read to look for signatures: BLKSSZGET: %v", err))
	}
	if size == 0 {
		return why
	}
	sigs, err := readSignatures(fd, size, int64(lbs))
	if err != nil {
		return append(why, "cannot be read to look for signatures: "+err.Error())
	}
	for _, s := range sigs {
		why = append(why, "holds "+s.String())
	}
	return why
}

// openers names the processes (other than this one) that have block
// device rdev open, from /proc/PID/fd: what can be known of a loop
// device's users, which sysfs does not count. Processes in other PID
// namespaces are not visible.
func (e env) openers(d blockDev) string {
	var names []string
	seen := map[int]bool{}
	for _, h := range e.scanProcs([]watchedObj{e.deviceObj(d, "")}, nil).holds {
		if !seen[h.pid] {
			seen[h.pid] = true
			names = append(names, e.processName(h.pid))
		}
	}
	return strings.Join(names, ", ")
}
