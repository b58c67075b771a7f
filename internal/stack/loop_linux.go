package stack

import (
	"errors"

	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// loop describes loop device name and what backs it. Sysfs names the
// backing file, its offset and size limit and whether the device does
// direct I/O, without asking anything; what the backing is (a file on
// which filesystem, or a block device) the kernel says through
// LOOP_GET_STATUS64, which stats the backing file and so waits on its
// filesystem: it goes through hostfs with the deadline. The backing
// file's own figures (size, allocation, block size) come from its name,
// when that name leads to the same file from here (a loop device set up
// in another mount namespace names its file from there).
func (w *walker) loop(name string, q result.Queue, depth int) {
	l := result.Layer{Kind: result.LayerLoop, Name: name, Depth: depth, Queue: &q}
	lp, attached, err := w.h.Loop(name)
	switch {
	case err != nil:
		w.unseen("%s: %v", name, err)
	case !attached:
		w.unseen("%s: not attached to anything", name)
	}
	if err != nil || !attached {
		w.add(l)
		return
	}
	l.Backing, l.BackingDeleted = lp.BackingFile, lp.Deleted
	l.OffsetBytes, l.SizeLimitBytes = int64(lp.Offset), int64(lp.SizeLimit)
	if s, err := hostfs.ReadText(w.h.SysPath("block", name, "loop", "dio"), hostfs.LimitAttr); err == nil {
		dio := s == "1"
		l.DirectIO = &dio
	}
	w.add(l)
	if !w.room(depth + 1) {
		return
	}
	back, err := w.h.LoopStatus(w.ctx, lp, w.h.DevPath(name), w.mountTable())
	if err != nil {
		w.unseen("what backs %s: %v", name, err)
		if errors.Is(err, hostfs.ErrNoAnswer) {
			return // its filesystem does not answer: asking it about the file would not either
		}
		// No device node here (a container without /dev/loopN): the
		// name is all there is to go on.
		w.path(lp.BackingFile, depth+1)
		return
	}
	if back.Rdev != 0 {
		dev := hostfs.DevNumOf(back.Rdev)
		if bn, ok := w.h.BlockName(dev); ok {
			w.block(bn, depth+1)
		} else {
			w.unseen("%s: its backing device %s is not in sysfs", name, dev)
		}
		return
	}
	fi := hostfs.FileInfo{Dev: back.Dev, Ino: back.Ino, Extents: -1}
	known := false
	if !lp.Deleted && !w.noOpen {
		got, err := w.h.FileInfo(w.ctx, lp.BackingFile, "the backing file of "+lp.Describe(w.mountTable()))
		if err == nil && got.Dev == back.Dev && got.Ino == back.Ino {
			fi, known = got, true
		} else if errors.Is(err, hostfs.ErrNoAnswer) {
			w.unseen("the backing file of %s: %v", name, err)
		}
	}
	fl := result.Layer{Kind: result.LayerFile, Name: lp.BackingFile, Depth: depth + 1}
	if known {
		fl = fileLayer(lp.BackingFile, fi, true, depth+1)
	}
	w.add(fl)
	w.filesystem(lp.BackingFile, fi, known, depth+2)
}
