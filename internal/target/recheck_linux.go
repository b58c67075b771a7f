package target

import (
	"fmt"
	"io"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/blkid"
	"github.com/ioprobe/ioprobe/internal/ownio"
	"github.com/ioprobe/ioprobe/internal/verify"
)

// Recheck repeats on the open target, immediately before the first
// write, the checks Open made before it allowed writes: after a file was
// filled, after workers were set up and after any wait (run --start-at),
// a filesystem or a partition table may have been made, a loop device
// attached, a device mounted. It does nothing for a target open for
// reading. A refusal is a *SafetyError, as from Open; nothing has been
// written then.
//
// A block device: the checks of its use (mounts, swap, holders,
// partitions, loop devices over it), its signatures, and util-linux's
// second opinion, through the descriptor that holds it open exclusively.
// A file: nothing may have changed it since Open checked it (its size and
// times to the nanosecond, as Open left them), no loop device may back
// it, no other program holds it, and it holds no signature. The
// signatures are looked for at their primary places (blkid.ScanPrimary):
// Open searched the backup copies and the partition starts, and what is
// written meanwhile is written whole, its primary with it (mkfs, sgdisk, a
// copied image). The look right before the first write, after a
// --start-at wait, costs what it did before those searches existed, and
// delays the start no more.
func (t *Target) Recheck() error {
	if t == nil || !t.Writable || t.closed {
		return nil
	}
	err := t.recheck()
	t.taint(err)
	return err
}

// taint remembers, for Close, that a check of a file found a change.
func (t *Target) taint(err error) {
	if err != nil && t.file != nil {
		t.file.tainted = true
	}
}

func (t *Target) recheck() error {
	e := t.env
	if t.Kind == KindBlock {
		if fs := append(e.inUse(t.Device), e.loopsOver(t.Device)...); len(fs) > 0 {
			return refusal(t.Path, true, fs...)
		}
		fs, unseen := e.busyWriters(t.Device, true)
		if len(fs) > 0 {
			return refusal(t.Path, true, fs...)
		}
		t.Unseen = unseen
		sigs, err := scanDeviceWith(t.FD, t.Size, t.LogicalBlock, nil, blkid.ScanPrimary)
		sigs, err = secondOpinion(e.ctx(), t.Resolved, sigs, err)
		if err == nil {
			sigs = dropOwnSectors(t.FD, sigs, t.LogicalBlock, t.SectorKey) // util-linux's too
		}
		return signatureRefusal(t.Path, sigs, err)
	}
	now, err := timesOf(t.FD)
	if err != nil {
		return refusal(t.Path, true, because(RefuseUnverifiable, "cannot stat it to tell whether it changed: "+err.Error()))
	}
	if b := t.file.base; now != b {
		return refusal(t.Path, true, because(RefuseChanged, fmt.Sprintf(
			"something else changed it after ioprobe checked it, before ioprobe wrote anything (size %d, modified %s, changed %s; it was %d, %s, %s)",
			now.size, stamp(now.mtime), stamp(now.ctime), b.size, stamp(b.mtime), stamp(b.ctime))))
	}
	var st unix.Stat_t
	if err := unix.Fstat(t.FD, &st); err != nil {
		return refusal(t.Path, true, because(RefuseUnverifiable, "cannot stat it: "+err.Error()))
	}
	if err := e.backsLoop(t.Path, &st, true); err != nil {
		return err
	}
	fs, unseen := e.fileHolders(t.Resolved, t.FD, t.file.owned, true)
	if len(fs) > 0 {
		return refusal(t.Path, true, fs...)
	}
	t.Unseen = unseen
	return refuseFileSignatures(t.Path, t.FD, now.size, t.LogicalBlock, blkid.ScanPrimary, t.SectorKey)
}

// CheckSignatures looks for signatures on the target open for writing,
// reading only the few dozen blocks the probes ask for at their primary
// places (blkid.ScanPrimary: no backup search, no partition starts; and
// no second opinion: it would start two programs): the runner calls it at
// the end of every measured interval and stops writing when it finds one.
// What appears while ioprobe writes was written by something that writes
// a primary (mkfs, pvcreate, sgdisk, qemu-img convert), and the backups
// and partition starts were searched when the target was opened, so
// the look costs what it did before they were. It does nothing for a
// target open for reading. What it finds is a *SafetyError with the
// signature's reasons.
//
// The reads it makes are added to c (if set), for the result: they reach
// the device, and the kernel's counters in summary.device include them.
// They carry ioprobe's own mark (internal/ownio), so that the
// device-latency programs count them apart from the workload's requests.
func (t *Target) CheckSignatures(c *ReadCount) error {
	if t == nil || !t.Writable || t.closed {
		return nil
	}
	_, err := ownio.Do(func() error { return t.checkSignatures(c) })
	return err
}

func (t *Target) checkSignatures(c *ReadCount) error {
	if t.Kind == KindBlock {
		sigs, err := scanDeviceWith(t.FD, t.Size, t.LogicalBlock, c, blkid.ScanPrimary)
		if err == nil {
			sigs = dropOwnSectors(t.FD, sigs, t.LogicalBlock, t.SectorKey)
		}
		return signatureRefusal(t.Path, sigs, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(t.FD, &st); err != nil {
		return refusal(t.Path, true, because(RefuseUnverifiable, "cannot stat it: "+err.Error()))
	}
	sigs, err := scanFileWith(t.FD, st.Size, t.LogicalBlock, c, blkid.ScanPrimary)
	if err == nil {
		sigs = dropOwnSectors(t.FD, sigs, t.LogicalBlock, t.SectorKey)
	}
	if err = signatureRefusal(t.Path, sigs, err); err != nil {
		t.taint(err)
	}
	return err
}

// signatureRefusal is the refusal for what a signature scan found (or
// could not read), nil for nothing.
func signatureRefusal(path string, sigs []Signature, err error) error {
	if err != nil {
		return refusal(path, true, because(RefuseSignature, "cannot read it to look for filesystems and labels: "+err.Error()))
	}
	if len(sigs) == 0 {
		return nil
	}
	var fs []finding
	for _, r := range signatureReasons(sigs) {
		fs = append(fs, because(RefuseSignature, r))
	}
	return refusal(path, true, fs...)
}

// dropOwnSectors leaves out of sigs (found on fd, direct-I/O block lbs)
// those whose magic lies in one of ioprobe's own sectors, stamped for its
// place under key (a device's and a foreign file's: 0): within the 16
// bytes of its header that say so (magic and offset), or anywhere in a
// sector whose checksum holds. ioprobe's sectors are random, and a probe
// that wants two bytes at a sector's start (JMicron's "JM" in the last
// sector) matches one in tens of thousands by chance; bytes someone else
// wrote do not make an ioprobe sector, so nothing of theirs is dropped.
//
// keys are every key the sectors may be stamped under (a copy of an
// ioprobe file: its original's).
func dropOwnSectors(fd int, sigs []Signature, lbs int64, keys ...uint64) []Signature {
	var out []Signature
	for _, s := range sigs {
		if s.Offset >= 0 && slices.ContainsFunc(keys, func(k uint64) bool { return ownSector(fd, s.Offset, k, lbs) }) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// ownKept is blkid.ScanKeeping keeping what dropOwnSectors keeps: a
// magic that lies in one of ioprobe's own sectors (fd, direct-I/O block
// lbs, stamped under one of keys) is not a signature, and does not keep
// the search from its next rounds either.
func ownKept(fd int, lbs int64, keys ...uint64) blkidScan {
	return func(r io.ReaderAt, size, sectorSize int64) []Signature {
		return blkid.ScanKeeping(r, size, sectorSize, func(s Signature) bool {
			return len(dropOwnSectors(fd, []Signature{s}, lbs, keys...)) == 1
		})
	}
}

// ownSector says whether byte off of fd lies in ioprobe's own part of one
// of its sectors (see dropOwnSectors).
func ownSector(fd int, off int64, key uint64, lbs int64) bool {
	lbs = max(lbs, verify.SectorSize)
	blk := off / lbs * lbs
	p, err := readDirect(fd, blk, int(lbs))
	if err != nil {
		return false
	}
	sec := off / verify.SectorSize * verify.SectorSize
	b := p[sec-blk : sec-blk+verify.SectorSize]
	if verify.Recognise(b, sec, key).Problem != verify.OK {
		return false
	}
	if off-sec < 16 {
		return true
	}
	_, _, summed := verify.Stamp(b, key)
	return summed && verify.Check(b, sec, key).Problem == verify.OK
}
