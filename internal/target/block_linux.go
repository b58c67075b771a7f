package target

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// openBlock opens a block device: read-only unless writes are needed and
// allowed, and never writable while it or a relative is in use or while it
// holds anything recognisable.
func (e env) openBlock(path, resolved string, opts Options) (*Target, error) {
	fd, st, err := openReadOnly(path, resolved)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			unix.Close(fd)
		}
	}()
	t := &Target{Path: path, Resolved: resolved, Kind: KindBlock,
		Device: devName(e.sysRoot, unix.Major(st.Rdev), unix.Minor(st.Rdev))}
	e.scope = blockScope(t.Device)
	t.env = e
	if t.Size, err = blkSize64(fd); err != nil {
		return nil, fmt.Errorf("target %s: BLKGETSIZE64: %w", path, err)
	}
	lbs, err := unix.IoctlGetInt(fd, unix.BLKSSZGET)
	if err != nil || lbs <= 0 {
		return nil, fmt.Errorf("target %s: BLKSSZGET: %v", path, err)
	}
	g := geometry{logicalBlock: int64(lbs), memAlign: 4096, pageSize: int64(unix.Getpagesize())}
	if _, dio, err := statxFD(fd); err == nil && dio.known && dio.mem > 0 {
		g.memAlign = dio.mem
	}
	t.LogicalBlock, t.MemAlign = g.logicalBlock, g.memAlign
	o := opts
	if err := checkAlign(path, &o, g); err != nil {
		return nil, err
	}
	if t.Region, err = checkRegion(path, o.Region, t.Size, o); err != nil {
		return nil, err
	}
	if o.Write {
		wfd, err := e.writableBlock(path, resolved, t, fd, o)
		if err != nil {
			return nil, err
		}
		unix.Close(fd)
		fd = wfd
		t.Writable = true
	}
	t.FD = fd
	ok = true
	return t, nil
}

// writableBlock runs every check a device must pass before ioprobe writes
// to it and returns an O_RDWR|O_EXCL descriptor. The checks that no flag
// overrides come first, so the user hears the real reason, not just
// "read-only by default".
func (e env) writableBlock(path, resolved string, t *Target, rfd int, o Options) (int, error) {
	if fs := append(e.inUse(t.Device), e.loopsOver(t.Device)...); len(fs) > 0 {
		return -1, refusal(path, true, fs...)
	}
	fs, unseen := e.busyWriters(t.Device, false)
	if len(fs) > 0 {
		return -1, refusal(path, true, fs...)
	}
	t.Unseen = unseen
	sigFD, wfd := rfd, -1
	if !o.AllowDestructive {
		// Claimed is a refusal no flag lifts: say it now rather than offer
		// --allow-destructive and refuse again once it is given. A
		// read-only exclusive open claims as a writable one does, and is
		// let go at once.
		cfd, err := openDirect(resolved, unix.O_RDONLY|unix.O_EXCL, 0)
		if errors.Is(err, unix.EBUSY) {
			return -1, refusal(path, true, because(RefuseClaimed, claimedText))
		}
		if err == nil {
			unix.Close(cfd)
		}
	}
	if o.AllowDestructive {
		// O_EXCL on a block device claims it: it fails with EBUSY when a
		// filesystem, swap, device-mapper or md holds it (in any mount
		// namespace), and nothing can claim it while ioprobe writes.
		var err error
		wfd, err = openDirect(resolved, unix.O_RDWR|unix.O_EXCL, 0)
		if errors.Is(err, unix.EBUSY) {
			return -1, refusal(path, true, because(RefuseClaimed, claimedText))
		}
		if err != nil {
			return -1, &InputError{Path: path, Msg: "cannot open for writing", Err: err}
		}
		var a, b unix.Stat_t
		if unix.Fstat(rfd, &a) != nil || unix.Fstat(wfd, &b) != nil || a.Rdev != b.Rdev {
			unix.Close(wfd)
			return -1, fmt.Errorf("target %s: %s changed while being opened", path, resolved)
		}
		sigFD = wfd // read what is there now that nobody else can claim it
	}
	// Lock before looking: nobody who follows the convention starts on the
	// device between the checks and the run. The locks last until the
	// target is closed; without --allow-destructive they only tell.
	diskLock, found := e.lockForWrite(sigFD, t.Device)
	if found != nil {
		if wfd >= 0 {
			unix.Close(wfd)
		}
		return -1, refusal(path, true, *found)
	}
	if diskLock >= 0 {
		t.diskLock, t.diskLocked = diskLock, true
	}
	sigs, err := readSignatures(sigFD, t.Size, t.LogicalBlock, t.SectorKey)
	sigs, err = secondOpinion(e.ctx(), resolved, sigs, err)
	if err == nil {
		// A weak magic that matched by chance inside a sector a --verify
		// run wrote (its checksum holds) is ioprobe's own data, as the
		// interval re-check knows (recheck).
		sigs = dropOwnSectors(sigFD, sigs, t.LogicalBlock, t.SectorKey)
	}
	if fs := signatureFindings(sigs, err); len(fs) > 0 {
		err = refusal(path, true, fs...)
	} else if !o.AllowDestructive {
		err = refusal(path, true, because(RefuseReadOnlyDevice, "block devices are read-only by default, and no filesystem, partition table or other signature was found on it"))
	}
	if err != nil {
		if wfd >= 0 {
			unix.Close(wfd)
		}
		if t.diskLocked {
			unix.Close(t.diskLock)
			t.diskLocked = false
		}
		return -1, err
	}
	return wfd, nil
}

// claimedText is the reason for RefuseClaimed.
const claimedText = "it is in use: the kernel refused exclusive access (mounted, active swap, or claimed by device-mapper, md or another program, possibly in another mount namespace)"

// readSignatures looks for signatures on the device with O_DIRECT reads
// of only what internal/blkid's probes ask for: every round of its
// search. With keys (the keys ioprobe's own sectors may be stamped
// under), a magic in one of ioprobe's sectors does not count, nor keep
// the backup copies and partition starts from being searched (ownKept).
func readSignatures(fd int, size, lbs int64, keys ...uint64) ([]Signature, error) {
	if len(keys) == 0 {
		return scanDevice(fd, size, lbs)
	}
	return scanDeviceWith(fd, size, lbs, nil, ownKept(fd, lbs, keys...))
}

// inUse lists why the device (named dev, in sysfs) or a device whose bytes
// overlap it (its whole disk, or its partitions) is in use: mounted, active
// swap, held by another block driver, or partitioned. A sibling partition
// in use is no reason: writing a blank partition of a disk whose other
// partition is mounted is allowed. It fails closed: what it cannot check
// is a reason.
func (e env) inUse(dev string) []finding {
	if dev == "" {
		return []finding{because(RefuseUnverifiable, "it has no entry under "+filepath.Join(e.sysRoot, "dev/block")+", so ioprobe cannot tell whether it is mounted or in use")}
	}
	fam, err := readFamily(e.sysRoot, dev)
	if err != nil {
		return []finding{because(RefuseUnverifiable, fmt.Sprintf("cannot read its sysfs entry to check whether it is in use: %v", err))}
	}
	subject := func(m blockDev) string {
		switch {
		case m.Name == fam.Self.Name:
			return "it"
		case fam.Disk != nil && m.Name == fam.Disk.Name:
			return "it is a partition of " + m.Name + ", and that disk"
		default:
			return "its partition " + m.Name
		}
	}
	members := fam.Overlaps()
	var reasons []finding

	mounts, err := e.mountTable()
	if err != nil {
		reasons = append(reasons, because(RefuseUnverifiable, "cannot read the mount table: "+err.Error()))
	}
	swaps, _ := readSwapDevs(e.swaps) // absent without CONFIG_SWAP: nothing is swap then
	sources := map[string]blockDev{}
	for _, mt := range mounts {
		d, ok, err := e.devNode(mt.Source, mounts)
		if err != nil {
			reasons = append(reasons, because(RefuseUnverifiable, "cannot tell what the source of "+mt.String()+" is: "+err.Error()))
		}
		if ok {
			sources[mt.Source] = d
		}
	}
	for _, m := range members {
		for _, mt := range mounts {
			src, ok := sources[mt.Source]
			if mt.Major == m.Major && mt.Minor == m.Minor || ok && src.Major == m.Major && src.Minor == m.Minor {
				reasons = append(reasons, because(RefuseMounted, fmt.Sprintf("%s is mounted at %s (%s)", subject(m), mt.MountPoint, mt.FSType)))
			}
		}
		for _, s := range swaps {
			d, ok, err := e.devNode(s, mounts)
			if err != nil {
				reasons = append(reasons, because(RefuseUnverifiable, "cannot tell what swap area "+s+" is: "+err.Error()))
			}
			if ok && d.Major == m.Major && d.Minor == m.Minor {
				reasons = append(reasons, because(RefuseSwap, fmt.Sprintf("%s is active swap (%s)", subject(m), s)))
			}
		}
		hs, err := holders(e.sysRoot, m.Name)
		if err != nil {
			reasons = append(reasons, because(RefuseUnverifiable, fmt.Sprintf("cannot list the holders of %s: %v", m.Name, err)))
		} else if len(hs) > 0 {
			reasons = append(reasons, because(RefuseHeld, fmt.Sprintf("%s is held by %s (device-mapper/LVM, md RAID or bcache is using it)", subject(m), strings.Join(hs, ", "))))
		}
	}
	if fam.Disk == nil && len(fam.Partitions) > 0 {
		names := make([]string, len(fam.Partitions))
		for i, p := range fam.Partitions {
			names[i] = p.Name
		}
		reasons = append(reasons, because(RefusePartitioned, "it has partitions ("+strings.Join(names, ", ")+")"))
	}
	return reasons
}

func readSwapDevs(path string) ([]string, error) {
	b, err := hostfs.ReadFile(path, hostfs.LimitTable)
	if err != nil {
		return nil, err
	}
	return parseSwaps(bytes.NewReader(b))
}

// devNode returns the block device that name (a mount's source, a swap
// area's file name) is a node of: btrfs mounts show an anonymous
// major:minor, so their source is the only link to the device. A name
// the mount table places on a mount without device nodes (nodev) is
// none; the others are stat'ed through hostfs, with its deadline: a name
// whose filesystem does not answer is an error, which the caller counts
// as a reason to refuse.
func (e env) devNode(name string, ms hostfs.Mounts) (blockDev, bool, error) {
	if !strings.HasPrefix(name, "/") {
		return blockDev{}, false, nil
	}
	if under := ms.Under(name); len(under) > 0 && !slices.ContainsFunc(under, func(m hostfs.Mount) bool { return !m.HasOption("nodev") }) {
		return blockDev{}, false, nil
	}
	st, err := e.host().Stat(e.ctx(), name, name)
	if errors.Is(err, hostfs.ErrNoAnswer) || err != nil && e.ctx().Err() != nil {
		return blockDev{}, false, err
	}
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return blockDev{}, false, nil
	}
	return blockDev{Name: name, Major: unix.Major(st.Rdev), Minor: unix.Minor(st.Rdev)}, true, nil
}
