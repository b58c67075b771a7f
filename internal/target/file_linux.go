package target

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// fileGeometry derives the logical block and memory alignment of a file (or
// of files in a directory) from statx, else from the device under it.
func (e env) fileGeometry(dio dioAlign, dev string) geometry {
	g := geometry{logicalBlock: 512, memAlign: 4096, pageSize: int64(unix.Getpagesize())}
	if dio.known && dio.offset > 0 {
		g.logicalBlock = dio.offset
	} else if lbs := sysLogicalBlock(e.sysRoot, dev); dev != "" && lbs > 0 {
		g.logicalBlock = lbs
	}
	if dio.known && dio.mem > 0 {
		g.memAlign = dio.mem
	}
	return g
}

func (e env) devOf(st *unix.Stat_t) string {
	return devName(e.sysRoot, unix.Major(st.Dev), unix.Minor(st.Dev))
}

// openFile opens an existing regular file. newID, when not 0, says that
// this Open created and filled it with that marker id (so it is ioprobe's
// even where xattrs are missing).
func (e env) openFile(path, resolved string, opts Options, newID uint64) (*Target, error) {
	if err := checkBufferedFS(path, resolved); err != nil {
		return nil, err
	}
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
	_, dio, err := statxFD(fd)
	if err != nil {
		return nil, fmt.Errorf("target %s: statx: %w", path, err)
	}
	if dio.known && dio.offset == 0 {
		return nil, noDirectIO(path, resolved)
	}
	t := &Target{Path: path, Resolved: resolved, Kind: KindFile, Size: st.Size, Device: e.devOf(&st), Created: newID != 0}
	g := e.fileGeometry(dio, t.Device)
	t.LogicalBlock, t.MemAlign = g.logicalBlock, g.memAlign
	o := opts
	if err := checkAlign(path, &o, g); err != nil {
		return nil, err
	}
	var own ownership
	if newID != 0 {
		// This Open filled every sector itself; where the filesystem
		// keeps no xattrs the marker is missing.
		me, err := identityOf(fd)
		if err != nil {
			return nil, fmt.Errorf("target %s: statx: %w", path, err)
		}
		own = ownership{marked: true, owned: true, id: newID, key: me.key(newID), filled: st.Size}
	} else {
		own = readOwnership(fd, st.Size, g.logicalBlock)
	}

	if own.owned && (o.Region > t.Size || own.filled < t.Size) {
		// Ours but too small, or a fill of it was killed: check the
		// bigger region, then extend and fill only the new part.
		size := max(o.Region, t.Size)
		if _, err := checkRegion(path, size, size, o); err != nil {
			return nil, err
		}
		if e.checkOnly {
			// Check changes nothing: it only asks whether the extension
			// would fit.
			if err := e.checkSpace(path, filepath.Dir(resolved), size-t.Size); err != nil {
				return nil, err
			}
		} else if err := e.extend(path, resolved, own.filled, t.Size, size, own.id, o); err != nil {
			return nil, err
		}
		t.Size, t.Extended, own.filled = size, newID == 0, size
	}
	if t.Region, err = checkRegion(path, o.Region, t.Size, o); err != nil {
		return nil, err
	}
	if err := e.backsLoop(path, &st, o.Write); err != nil {
		return nil, err
	}
	if o.Write && !own.owned {
		// What no flag lifts (active swap, a signature) first.
		if err := e.refuseForeignFileData(path, fd, &st, t.Size, t.LogicalBlock); err != nil {
			return nil, err
		}
	}
	if o.Write && !own.owned && !o.AllowDestructive {
		reason := "it is an existing file that ioprobe did not create, and writes would overwrite its contents"
		if own.why != "" {
			reason = own.why
		}
		return nil, refusal(path, true, because(RefuseForeignFile, reason))
	}
	if o.Write {
		wfd, err := openDirect(resolved, unix.O_RDWR, 0)
		if err != nil {
			return nil, &InputError{Path: path, Msg: "cannot open for writing", Err: err}
		}
		if !sameFile(fd, wfd) {
			unix.Close(wfd)
			return nil, fmt.Errorf("target %s: %s was replaced while being opened", path, resolved)
		}
		if err := lockWriters(path, wfd, o.Exclusive); err != nil {
			unix.Close(wfd)
			return nil, err
		}
		unix.Close(fd)
		fd = wfd
		t.Writable = true
	}
	t.FD = fd
	// Reads are judged where ioprobe wrote every sector, even when its
	// content shows that something else changed it since (that is what
	// --verify is for); writes keep the format under the file's key.
	t.Formatted, t.SectorKey = own.marked && t.Region <= own.filled, own.key
	ok = true
	return t, nil
}

// createFile creates, preallocates, fills and marks a new file target. All
// checks that can be made before it exists are made first; on any failure
// afterwards the partial file is removed.
func (e env) createFile(path, resolved string, opts Options) (*Target, error) {
	size, o, err := e.checkNew(path, resolved, opts)
	if err != nil {
		return nil, err
	}

	// Create without O_DIRECT, then reopen with it: the kernel checks
	// O_DIRECT only after making the file, and the plain descriptor lets us
	// remove exactly the file we made.
	plain, err := unix.Open(resolved, unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, &InputError{Path: path, Msg: "cannot create", Err: err}
	}
	fd, err := openDirect(resolved, unix.O_RDWR, 0)
	if err == nil && !sameFile(plain, fd) {
		unix.Close(fd)
		err = fmt.Errorf("%s was replaced while being created", resolved)
	}
	if err != nil {
		removeIfSame(resolved, plain)
		unix.Close(plain)
		if errors.Is(err, unix.EINVAL) {
			return nil, noDirectIO(path, filepath.Dir(resolved))
		}
		return nil, &InputError{Path: path, Msg: "cannot open the new file with O_DIRECT", Err: err}
	}
	unix.Close(plain)
	id := rand.Uint64() | 1
	if err := e.prepare(path, resolved, fd, size, id, o); err != nil {
		removeIfSame(resolved, fd)
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Close(fd); err != nil {
		unix.Unlink(resolved)
		return nil, fmt.Errorf("target %s: close after filling: %w", path, err)
	}
	return e.openFile(path, resolved, opts, id)
}

// checkNew makes every check that can be made before a new file target
// exists, and returns its size and the options with alignment resolved.
func (e env) checkNew(path, resolved string, opts Options) (int64, Options, error) {
	dir := filepath.Dir(resolved)
	if err := checkBufferedFS(path, dir); err != nil {
		return 0, opts, err
	}
	size := opts.Region
	if size == 0 {
		size = opts.DefaultFileSize
	}
	if size <= 0 {
		return 0, opts, inputErr(path, "does not exist, and no size was given to create it with (--size)")
	}
	g, err := e.probeDir(path, dir)
	if err != nil {
		return 0, opts, err
	}
	region := size
	if opts.Buffered {
		// ioprobe fills its files with O_DIRECT: whole blocks.
		size = (size + g.logicalBlock - 1) / g.logicalBlock * g.logicalBlock
	}
	o := opts
	if err := checkAlign(path, &o, g); err != nil {
		return 0, opts, err
	}
	if _, err := checkRegion(path, region, size, o); err != nil {
		return 0, opts, err
	}
	if err := e.checkSpace(path, dir, size); err != nil {
		return 0, opts, err
	}
	return size, o, nil
}

// prepare preallocates, fills, syncs and marks a freshly created file with
// marker id id.
func (e env) prepare(path, resolved string, fd int, size int64, id uint64, o Options) error {
	_, dio, err := statxFD(fd)
	if err != nil {
		return fmt.Errorf("target %s: statx: %w", path, err)
	}
	if dio.known && dio.offset == 0 {
		return noDirectIO(path, filepath.Dir(resolved))
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("target %s: fstat: %w", path, err)
	}
	// The directory probe may have guessed; the file itself decides.
	if err := checkAlign(path, &o, e.fileGeometry(dio, e.devOf(&st))); err != nil {
		return err
	}
	if err := e.grow(path, fd, 0, size, id, o); err != nil {
		return fmt.Errorf("%w (removed the partial file %s)", err, resolved)
	}
	return nil
}

// grow preallocates [from, to) of fd, fills it with sectors stamped under
// the file's key (from marker id id and its identity), syncs and marks
// the file as ioprobe's with size to.
func (e env) grow(path string, fd int, from, to int64, id uint64, o Options) error {
	me, err := identityOf(fd)
	if err != nil {
		return fmt.Errorf("target %s: statx: %w", path, err)
	}
	err = unix.Fallocate(fd, 0, from, to-from)
	if errors.Is(err, unix.EOPNOTSUPP) {
		// No preallocation here: filling allocates every block anyway.
		err = unix.Ftruncate(fd, to)
	}
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return fmt.Errorf("target %s: not enough space for %d bytes: %w", path, to, err)
	}
	if err != nil {
		return fmt.Errorf("target %s: preallocate %d bytes: %w", path, to-from, err)
	}
	if err := fillDirect(fd, from, to, me.key(id), rand.Uint64(), o.Progress, cancelHook(o.Cancel, e.fillHook)); err != nil {
		return fmt.Errorf("target %s: fill with random data: %w", path, err)
	}
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("target %s: fsync: %w", path, err)
	}
	// Mark last: only a completely filled file is ioprobe's. Where the
	// filesystem has no user xattrs the file works for this run but will
	// look foreign to the next.
	m := marker{size: to, id: id, ino: me.ino, btime: me.btime}
	err = unix.Fsetxattr(fd, markerXattr, []byte(m.String()), 0)
	if err != nil && !errors.Is(err, unix.ENOTSUP) {
		return fmt.Errorf("target %s: mark as ioprobe's (xattr %s): %w", path, markerXattr, err)
	}
	return nil
}

// cancelHook makes a fill hook that fails once cancel is closed, before
// calling the test hook (if any).
func cancelHook(cancel <-chan struct{}, hook func(off int64) error) func(off int64) error {
	if cancel == nil {
		return hook
	}
	return func(off int64) error {
		select {
		case <-cancel:
			return ErrCancelled
		default:
		}
		if hook != nil {
			return hook(off)
		}
		return nil
	}
}

// extend grows a file ioprobe filled from size bytes (filled of them
// ioprobe's sectors) to newSize bytes, filling only [filled, newSize); on
// failure the file is cut back to filled, so it stays exactly what its
// marker describes.
func (e env) extend(path, resolved string, filled, size, newSize int64, id uint64, o Options) error {
	if err := e.checkSpace(path, filepath.Dir(resolved), newSize-size); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Stat(resolved, &st); err != nil {
		return &InputError{Path: path, Msg: "cannot stat to extend", Err: err}
	}
	if err := e.backsLoop(path, &st, true); err != nil {
		return err
	}
	fd, err := openDirect(resolved, unix.O_RDWR, 0)
	if err != nil {
		return &InputError{Path: path, Msg: "cannot open to extend", Err: err}
	}
	defer unix.Close(fd)
	if err := e.grow(path, fd, filled, newSize, id, o); err != nil {
		if terr := unix.Ftruncate(fd, filled); terr != nil {
			return fmt.Errorf("%w (and cutting it back to %d bytes failed: %v)", err, filled, terr)
		}
		return fmt.Errorf("%w (cut it back to its previous %d bytes)", err, filled)
	}
	return nil
}

// checkSpace refuses, before anything is written, a file the filesystem
// cannot hold.
func (e env) checkSpace(path, dir string, need int64) error {
	if !e.spaceCheck {
		return nil
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(dir, &sfs); err != nil {
		return &InputError{Path: path, Msg: "cannot statfs " + dir, Err: err}
	}
	avail := int64(sfs.Bavail) * int64(sfs.Bsize)
	if avail < need {
		return &InputError{Path: path, Err: unix.ENOSPC,
			Msg: fmt.Sprintf("not enough free space in %s: the file needs %d bytes, %d are available", dir, need, avail)}
	}
	return nil
}

// probeDir finds the direct-I/O geometry of new files in dir without
// creating a visible one: an O_TMPFILE has no name and vanishes on close.
// It also tells a filesystem that rejects O_DIRECT before anything exists.
func (e env) probeDir(path, dir string) (geometry, error) {
	var dst unix.Stat_t
	if err := unix.Stat(dir, &dst); err != nil {
		return geometry{}, &InputError{Path: path, Msg: "cannot stat " + dir, Err: err}
	}
	fallback := e.fileGeometry(dioAlign{}, e.devOf(&dst))
	fd, err := openDirect(dir, unix.O_TMPFILE|unix.O_RDWR, 0o600)
	if errors.Is(err, unix.EINVAL) {
		// Either O_DIRECT or O_TMPFILE is unsupported; without O_DIRECT we know which.
		plain, perr := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if perr == nil {
			unix.Close(plain)
			return geometry{}, noDirectIO(path, dir)
		}
		return fallback, nil
	}
	if err != nil {
		return fallback, nil // no O_TMPFILE here; the created file is checked again
	}
	defer unix.Close(fd)
	_, dio, err := statxFD(fd)
	if err != nil {
		return fallback, nil
	}
	if dio.known && dio.offset == 0 {
		return geometry{}, noDirectIO(path, dir)
	}
	return e.fileGeometry(dio, e.devOf(&dst)), nil
}

func sameFile(fd1, fd2 int) bool {
	var a, b unix.Stat_t
	return unix.Fstat(fd1, &a) == nil && unix.Fstat(fd2, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

// removeIfSame unlinks path if it is still the file open as fd, so a
// failed preparation never removes something that replaced it.
func removeIfSame(path string, fd int) {
	var a, b unix.Stat_t
	if unix.Fstat(fd, &a) != nil || unix.Lstat(path, &b) != nil {
		return
	}
	if a.Dev == b.Dev && a.Ino == b.Ino {
		unix.Unlink(path)
	}
}
