package target

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// A loop device is a view into its backing file or device, from an offset
// and up to a size limit, and that backing may be a loop device in turn.
// Writing through the view writes the backing: so a loop device whose
// backing holds a filesystem or a table anywhere, inside the window or
// not (an ext4 image viewed from 1 MiB in, the last MiB of a GPT disk
// where its backup table lies), is refused like the backing itself.
// Every backing down the chain is read whole, at every place libblkid
// probes (a file with 512-byte sectors, a device with its own), and asked
// of util-linux too.

// loopLink is one step down a chain of loop devices: the loop device over,
// and what backs it, a block device (dev) or else a file.
type loopLink struct {
	over    loopDev
	dev     *blockDev // nil: a file, over.file (dev and inode over.backDev, over.backIno)
	subject string    // how a refusal names the backing
}

// loopChain follows what backs loop device l down to a file or a block
// device that is no loop device.
func (e env) loopChain(l loopDev, ls []loopDev) ([]loopLink, error) {
	var chain []loopLink
	cur := l
	for depth := 0; ; depth++ {
		if depth >= maxLoopDepth {
			return chain, fmt.Errorf("loop devices are stacked more than %d deep under it", maxLoopDepth)
		}
		window := cur.Name + " shows " + cur.span()
		if cur.span() != "all of it" {
			window += " of it"
		}
		if cur.backRdev == 0 {
			subject := fmt.Sprintf("its backing file %s (%s)", strings.TrimSpace(cur.file), window)
			if depth > 0 {
				subject = fmt.Sprintf("the backing file %s of %s (%s)", strings.TrimSpace(cur.file), cur.Name, window)
			}
			return append(chain, loopLink{over: cur, subject: subject}), nil
		}
		maj, min := unix.Major(cur.backRdev), unix.Minor(cur.backRdev)
		d := blockDev{Name: devName(e.sysRoot, maj, min), Major: maj, Minor: min}
		if d.Name == "" {
			return chain, fmt.Errorf("the device %s is a loop over (%d:%d) has no sysfs entry", cur.Name, maj, min)
		}
		subject := fmt.Sprintf("the device it is a loop over, %s (%s)", d.Name, window)
		if depth > 0 {
			subject = fmt.Sprintf("the device %s is a loop over, %s (%s)", cur.Name, d.Name, window)
		}
		chain = append(chain, loopLink{over: cur, dev: &d, subject: subject})
		next := -1
		for i := range ls {
			if ls[i].Name == d.Name {
				next = i
			}
		}
		if next < 0 {
			return chain, nil
		}
		cur = ls[next]
	}
}

// loopView lists why the loop devices of chain may not be written through:
// a backing device in use, a backing that holds a signature anywhere, a
// backing that cannot be read. A backing the loop device over it shows
// whole (from byte 0, and no larger than the loop device) holds what that
// loop device holds, which its own scan reports (the target's by the
// caller, a deeper one as a backing device): it is not read twice.
func (e env) loopView(chain []loopLink) []finding {
	var out []finding
	for _, k := range chain {
		if k.dev != nil {
			for _, r := range e.inUse(k.dev.Name) {
				out = append(out, because(RefuseLoopStacked, fmt.Sprintf("%s is in use: %s", k.subject, r.text)))
			}
			out = append(out, e.scanBackingDevice(k)...)
			continue
		}
		out = append(out, e.scanBackingFile(k)...)
	}
	return out
}

// scanBackingDevice reads the whole backing device of k.
func (e env) scanBackingDevice(k loopLink) []finding {
	cannot := func(err error) []finding {
		return []finding{because(RefuseLoopView, fmt.Sprintf("ioprobe cannot read %s to look for filesystems and labels: %v", k.subject, err))}
	}
	node, err := e.deviceNode(*k.dev)
	if err != nil {
		return cannot(err)
	}
	fd, err := openDirect(node, unix.O_RDONLY, 0)
	if err != nil {
		return cannot(err)
	}
	defer unix.Close(fd)
	size, err := blkSize64(fd)
	if err != nil {
		return cannot(err)
	}
	if e.showsWhole(k.over, size) {
		return nil
	}
	lbs, err := unix.IoctlGetInt(fd, unix.BLKSSZGET)
	if err != nil || lbs <= 0 {
		return cannot(fmt.Errorf("BLKSSZGET: %v", err))
	}
	sigs, err := readSignatures(fd, size, int64(lbs))
	sigs, err = secondOpinion(e.ctx(), node, sigs, err)
	return loopViewFindings(k.subject, sigs, err)
}

// scanBackingFile reads the whole backing file of k, found by the name the
// kernel keeps and checked to be the very inode the loop device shows. A
// file that cannot be found so (deleted, renamed, in another mount
// namespace) is no reason when the loop device shows all of it (the loop
// device itself is read), and unverifiable when it shows part of it.
func (e env) scanBackingFile(k loopLink) []finding {
	name := strings.TrimSpace(k.over.file)
	f, err := os.Open(name)
	if err == nil {
		var st unix.Stat_t
		if err = unix.Fstat(int(f.Fd()), &st); err == nil && (k.over.backIno == 0 || st.Dev != k.over.backDev || st.Ino != k.over.backIno || st.Mode&unix.S_IFMT != unix.S_IFREG) {
			err = fmt.Errorf("%s is no longer the file the loop device shows", name)
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		if k.over.offset == 0 && k.over.sizelimit == 0 {
			return nil
		}
		return []finding{because(RefuseUnverifiable, fmt.Sprintf("ioprobe cannot open %s to look at the rest of it: %v", k.subject, err))}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return []finding{because(RefuseUnverifiable, fmt.Sprintf("ioprobe cannot stat %s: %v", k.subject, err))}
	}
	if e.showsWhole(k.over, st.Size()) {
		return nil
	}
	sigs, err := scanSignatures(st.Size(), fileSectorSize, fileSectorSize, func(off int64, n int) ([]byte, error) {
		p := make([]byte, n)
		k, err := f.ReadAt(p, off)
		if k < n && off+int64(k) >= st.Size() {
			err = nil // past the end reads as zeros
		}
		return p, err
	})
	// util-linux opens the file through this process's descriptor: the
	// same inode, whatever happens to the name meanwhile.
	sigs, err = secondOpinion(e.ctx(), fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd()), sigs, err)
	return loopViewFindings(k.subject, sigs, err)
}

// showsWhole says whether loop device l shows all of its backing, of
// size bytes.
func (e env) showsWhole(l loopDev, size int64) bool {
	shown := sysSize(e.sysRoot, l.Name)
	return l.offset == 0 && shown >= 0 && size <= shown
}

func loopViewFindings(subject string, sigs []Signature, err error) []finding {
	var fs []finding
	for _, t := range signatureTexts(subject, sigs, err) {
		fs = append(fs, because(RefuseLoopView, t))
	}
	return fs
}
