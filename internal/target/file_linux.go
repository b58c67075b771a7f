package target

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ownership is what the marker says about an existing file.
type ownership struct {
	owned     bool  // ioprobe created and filled it, and its size is what ioprobe left
	formatted bool  // every sector is in the verify format
	staleSize int64 // the marker's size when it no longer matches the file's (else 0)
}

func readOwnership(fd int, size int64) ownership {
	buf := make([]byte, 128)
	n, err := unix.Fgetxattr(fd, markerXattr, buf)
	if err != nil {
		return ownership{}
	}
	msize, formatted, ok := parseMarker(buf[:n])
	if !ok {
		return ownership{}
	}
	if msize != size {
		return ownership{staleSize: msize}
	}
	return ownership{owned: true, formatted: formatted}
}

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

// openFile opens an existing regular file. justCreated says that this Open
// created and filled it (so it is ioprobe's even where xattrs are missing).
func (e env) openFile(path, resolved string, opts Options, justCreated bool) (*Target, error) {
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
	t := &Target{Path: path, Resolved: resolved, Kind: KindFile, Size: st.Size, Device: e.devOf(&st), Created: justCreated}
	g := e.fileGeometry(dio, t.Device)
	t.LogicalBlock, t.MemAlign = g.logicalBlock, g.memAlign
	o := opts
	if err := checkAlign(path, &o, g); err != nil {
		return nil, err
	}
	own := readOwnership(fd, st.Size)
	if justCreated {
		// Where the filesystem keeps no xattrs the marker is missing, but
		// this Open filled every sector itself.
		own.owned, own.formatted = true, true
	}

	if own.owned && o.Region > t.Size {
		// Ours but too small: check the bigger region, then extend and fill
		// only the new part.
		if _, err := checkRegion(path, o.Region, o.Region, o); err != nil {
			return nil, err
		}
		if e.checkOnly {
			// Check changes nothing: it only asks whether the extension
			// would fit.
			if err := e.checkSpace(path, filepath.Dir(resolved), o.Region-t.Size); err != nil {
				return nil, err
			}
		} else if err := e.extend(path, resolved, t.Size, o.Region, own.formatted, o); err != nil {
			return nil, err
		}
		t.Size, t.Created = o.Region, true
	}
	if t.Region, err = checkRegion(path, o.Region, t.Size, o); err != nil {
		return nil, err
	}
	if err := e.backsLoop(path, &st, o.Write); err != nil {
		return nil, err
	}
	if o.Write && !own.owned && !o.AllowDestructive {
		reason := "it is an existing file that ioprobe did not create, and writes would overwrite its contents"
		if own.staleSize > 0 {
			reason = fmt.Sprintf("it carries ioprobe's marker, but its size changed from %d to %d bytes since ioprobe filled it, so it may now hold other data", own.staleSize, t.Size)
		}
		return nil, refusal(path, true, because(RefuseForeignFile, reason))
	}
	if o.Write && !own.owned {
		if err := refuseFileSignatures(path, fd, t.Size, t.LogicalBlock); err != nil {
			return nil, err
		}
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
		unix.Close(fd)
		fd = wfd
		t.Writable = true
	}
	t.FD = fd
	t.Formatted = own.formatted
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
	if err := e.prepare(path, resolved, fd, size, o); err != nil {
		removeIfSame(resolved, fd)
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Close(fd); err != nil {
		unix.Unlink(resolved)
		return nil, fmt.Errorf("target %s: close after filling: %w", path, err)
	}
	return e.openFile(path, resolved, opts, true)
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
	o := opts
	if err := checkAlign(path, &o, g); err != nil {
		return 0, opts, err
	}
	if _, err := checkRegion(path, size, size, o); err != nil {
		return 0, opts, err
	}
	if err := e.checkSpace(path, dir, size); err != nil {
		return 0, opts, err
	}
	return size, o, nil
}

// prepare preallocates, fills, syncs and marks a freshly created file.
func (e env) prepare(path, resolved string, fd int, size int64, o Options) error {
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
	if err := e.grow(path, fd, 0, size, true, o); err != nil {
		return fmt.Errorf("%w (removed the partial file %s)", err, resolved)
	}
	return nil
}

// grow preallocates [from, to) of fd, fills it, syncs and marks the file as
// ioprobe's with size to. formatted says whether [0, from) is in the verify
// format: the new part always is, so the whole file is when the old part
// was (or when there is no old part).
func (e env) grow(path string, fd int, from, to int64, formatted bool, o Options) error {
	err := unix.Fallocate(fd, 0, from, to-from)
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
	if err := fillDirect(fd, from, to, rand.Uint64(), o.Progress, cancelHook(o.Cancel, e.fillHook)); err != nil {
		return fmt.Errorf("target %s: fill with random data: %w", path, err)
	}
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("target %s: fsync: %w", path, err)
	}
	// Mark last: only a completely filled file is ioprobe's. Where the
	// filesystem has no user xattrs the file works for this run but will
	// look foreign to the next.
	err = unix.Fsetxattr(fd, markerXattr, []byte(formatMarker(to, formatted || from == 0)), 0)
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

// extend grows a file ioprobe filled from oldSize to newSize bytes, filling
// only the new part; on failure the file is cut back to oldSize, so it stays
// exactly what its marker describes.
func (e env) extend(path, resolved string, oldSize, newSize int64, formatted bool, o Options) error {
	if err := e.checkSpace(path, filepath.Dir(resolved), newSize-oldSize); err != nil {
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
	if err := e.grow(path, fd, oldSize, newSize, formatted, o); err != nil {
		if terr := unix.Ftruncate(fd, oldSize); terr != nil {
			return fmt.Errorf("%w (and cutting it back to %d bytes failed: %v)", err, oldSize, terr)
		}
		return fmt.Errorf("%w (cut it back to its previous %d bytes)", err, oldSize)
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
