package target

import (
	"errors"
	"fmt"
	"math/rand/v2"

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

// fileState is what an open file target keeps for the rest of its run.
type fileState struct {
	ref *fileRef // its directory, by descriptor, and its name there
	// owned: ioprobe's file; m is its marker as this Open left it, and
	// busy says this Open marked it busy (Close marks it ready again).
	owned bool
	m     marker
	busy  bool
	// tainted: a re-check found that something else changed the file
	// while this Open held it; Close leaves it busy, so the next run
	// reads every sector rather than take this run's times as ioprobe's.
	tainted bool
	// base is the file as it was when writes were allowed: nothing may
	// have changed it before the first write (Recheck).
	base fileTimes
	// forsaken: this Open writes content that is not ioprobe's sectors
	// (Options.ForeignContent) to a file ioprobe owned, or to one this
	// process left so: Close remembers it as it leaves it.
	forsaken bool
}

// created is a file this Open created and filled: its O_RDWR|O_DIRECT
// descriptor and its marker.
type created struct {
	fd int
	m  marker
}

// openFile opens a regular file by descriptor. c, when set, is the file
// this Open created and filled (so it is ioprobe's even where xattrs are
// missing); otherwise the existing file is opened without following a
// symlink. The Target owns r from here on, whatever happens.
func (e env) openFile(r *fileRef, opts Options, c *created) (*Target, error) {
	path := r.path
	ok := false
	var fd int
	if c != nil {
		fd = c.fd
	} else {
		var err error
		if fd, err = r.openAt(unix.O_RDONLY); err != nil {
			r.close()
			if errors.Is(err, unix.EINVAL) {
				return nil, noDirectIO(path, r.resolved())
			}
			return nil, &InputError{Path: path, Msg: "cannot open", Err: err}
		}
	}
	defer func() {
		if !ok {
			unix.Close(fd)
			r.close()
		}
	}()
	if err := checkBufferedFS(path, r.resolved(), fd); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("target %s: fstat: %w", path, err)
	}
	_, dio, err := statxFD(fd)
	if err != nil {
		return nil, fmt.Errorf("target %s: statx: %w", path, err)
	}
	if dio.known && dio.offset == 0 {
		return nil, noDirectIO(path, r.resolved())
	}
	ms, err := e.mountTable()
	if err != nil {
		ms = nil // no loop device can be placed: its checks ask them all
	}
	e.scope = fileScope(fd, &st, r.resolved(), ms)
	t := &Target{Path: path, Resolved: r.resolved(), Kind: KindFile, Size: st.Size, Device: e.devOf(&st), Created: c != nil, env: e}
	fs := &fileState{ref: r}
	t.file = fs
	g := e.fileGeometry(dio, t.Device)
	t.LogicalBlock, t.MemAlign = g.logicalBlock, g.memAlign
	o := opts
	if err := checkAlign(path, &o, g); err != nil {
		return nil, err
	}
	var own ownership
	if c != nil {
		// This Open filled every sector itself; where the filesystem
		// keeps no xattrs the marker is missing.
		me, err := identityOf(fd)
		if err != nil {
			return nil, fmt.Errorf("target %s: statx: %w", path, err)
		}
		own = ownership{marked: true, owned: true, id: c.m.id, key: me.key(c.m.id), filled: st.Size, m: c.m}
	} else {
		own = readOwnership(fd, st.Size, g.logicalBlock, func() bool { return lockedByWriter(fd) })
		if !own.owned && leftByThisProcess(fd) {
			own = ownership{owned: true, forsaken: true}
		}
	}
	fs.owned, fs.m = own.owned, own.m

	// wfd is a writable descriptor of the same file, when one is needed.
	wfd := -1
	if c != nil {
		wfd = fd
	}
	writable := func() (int, error) {
		if wfd >= 0 {
			return wfd, nil
		}
		if err := r.checkDirSafe(); err != nil {
			return -1, err
		}
		w, err := r.reopen(fd, unix.O_RDWR)
		if err != nil {
			var se *SafetyError
			if errors.As(err, &se) {
				return -1, err
			}
			return -1, &InputError{Path: path, Msg: "cannot open for writing", Err: err}
		}
		wfd = w
		return w, nil
	}
	defer func() {
		if !ok && wfd >= 0 && wfd != fd {
			unix.Close(wfd)
		}
	}()

	if own.owned && !own.forsaken && (o.Region > t.Size || own.filled < t.Size) {
		// Ours but too small, or a fill of it was killed: check the
		// bigger region, then extend and fill only the new part.
		size := max(o.Region, t.Size)
		if _, err := checkRegion(path, size, size, o); err != nil {
			return nil, err
		}
		if err := r.checkDirSafe(); err != nil {
			return nil, err
		}
		if r.viaLink {
			return nil, refusal(path, true, because(RefuseSymlink,
				fmt.Sprintf("it is a symbolic link to %s, which ioprobe would have to extend to %d bytes, and ioprobe never writes a file through a link (point --target at %s itself)", r.resolved(), size, r.resolved())))
		}
		if e.checkOnly {
			// Check changes nothing: it only asks whether the extension
			// would fit.
			if err := e.checkSpace(path, r.dir, fd, size-t.Size); err != nil {
				return nil, err
			}
		} else {
			w, err := writable()
			if err != nil {
				return nil, err
			}
			if fs.m, err = e.extend(path, r, w, own.filled, t.Size, size, own.m, o); err != nil {
				return nil, err
			}
			own.scanned = false // marked ready by the extension
			if err := r.stillNames(w); err != nil {
				return nil, err
			}
		}
		if c == nil {
			t.GrownFrom = t.Size
		}
		t.Size, t.Extended, own.filled = size, c == nil, size
	}
	if t.Region, err = checkRegion(path, o.Region, t.Size, o); err != nil {
		return nil, err
	}
	if err := e.backsLoop(path, &st, o.Write); err != nil {
		return nil, err
	}
	if o.Write {
		// What no flag lifts (active swap, a signature) first, for every
		// file: an ioprobe file is scanned like any other, and what the
		// scan finds is somebody's data whatever the marker says. What
		// the file holds now (Check does not extend it).
		var now unix.Stat_t
		if err := unix.Fstat(fd, &now); err != nil {
			return nil, fmt.Errorf("target %s: fstat: %w", path, err)
		}
		if err := e.refuseForeignFileData(path, fd, &now, now.Size, t.LogicalBlock, own.owned, own.key, own.otherKey); err != nil {
			return nil, err
		}
		if c == nil {
			// Somebody's file in use (a VM's image, a database's file),
			// or ioprobe's held by another program. One this Open made
			// nobody else holds.
			fs, unseen := e.fileHolders(r.resolved(), fd, own.owned, false)
			if len(fs) > 0 {
				return nil, refusal(path, true, fs...)
			}
			t.Unseen = unseen
		}
		if !own.owned && !o.AllowDestructive {
			reason := "it is an existing file that ioprobe did not create, and writes would overwrite its contents"
			if own.why != "" {
				reason = own.why
			}
			return nil, refusal(path, true, because(RefuseForeignFile, reason))
		}
		w, err := writable()
		if err != nil {
			return nil, err
		}
		if err := lockWriters(path, w, o.Exclusive); err != nil {
			return nil, err
		}
		switch {
		case !own.owned || e.checkOnly:
		case own.forsaken || o.ForeignContent:
			// Content that is not ioprobe's sectors: the file stops
			// being ioprobe's before the first write, so that a run
			// killed from here on leaves one the next refuses.
			if err := forsakeMarker(w); err != nil {
				return nil, fmt.Errorf("target %s: %w", path, err)
			}
			fs.forsaken = true
		default:
			// Busy before the first write: a run killed from here on
			// leaves a file the next run knows to be ioprobe's.
			if fs.m, err = markBusy(w, fs.m); err != nil {
				return nil, fmt.Errorf("target %s: %w", path, err)
			}
			fs.busy = true
		}
		if fs.base, err = timesOf(w); err != nil {
			return nil, fmt.Errorf("target %s: statx: %w", path, err)
		}
		if err := r.stillNames(w); err != nil {
			return nil, err
		}
		if fd != w {
			unix.Close(fd)
		}
		fd, wfd = w, -1
		t.Writable = true
	} else {
		if own.scanned && !e.checkOnly {
			// Read every sector to tell it is ours: say so in the
			// marker, so the next run need not, where it may write it.
			if w, err := writable(); err == nil && tryLockAlone(w) {
				if m, err := markReady(w, fs.m); err == nil {
					fs.m = m
				}
			}
		}
		if wfd == fd {
			// Created by this Open for a read run: read through a
			// read-only descriptor of the same file.
			rfd, err := r.reopen(fd, unix.O_RDONLY)
			if err != nil {
				return nil, err
			}
			unix.Close(fd)
			fd, wfd = rfd, -1
		}
	}
	if wfd >= 0 && wfd != fd {
		unix.Close(wfd) // used to extend or re-mark it only
	}
	t.FD = fd
	// Reads are judged where ioprobe wrote every sector, even when its
	// content shows that something else changed it since (that is what
	// --verify is for); writes keep the format under the file's key.
	t.Formatted, t.SectorKey = own.marked && t.Region <= own.filled, own.key
	ok = true
	return t, nil
}

// createFile creates, preallocates, fills and marks a new file target, by
// descriptor: created with O_EXCL|O_NOFOLLOW in the directory r opened,
// filled and marked through that one descriptor. All checks that can be
// made before it exists are made first; on any failure afterwards the
// partial file is removed (only if its name still is that file).
func (e env) createFile(r *fileRef, opts Options) (*Target, error) {
	path := r.path
	size, o, err := e.checkNew(r, opts)
	if err != nil {
		r.close()
		return nil, err
	}
	fd, err := openRetry2(r.dirfd, r.name, unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err != nil {
		r.close()
		if errors.Is(err, unix.EEXIST) {
			return nil, inputErr(path, "cannot create it: %s appeared while ioprobe was about to create it", r.resolved())
		}
		return nil, &InputError{Path: path, Msg: "cannot create", Err: err}
	}
	// O_DIRECT is set on the descriptor just made (the kernel checks it
	// only after making the file): no second open by name.
	if err := setDirect(fd); err != nil {
		e.discard(r, fd)
		if errors.Is(err, unix.EINVAL) {
			return nil, noDirectIO(path, r.dir)
		}
		return nil, &InputError{Path: path, Msg: "cannot switch the new file to O_DIRECT", Err: err}
	}
	m := marker{id: rand.Uint64() | 1}
	if m, err = e.prepare(path, r, fd, size, m, o); err != nil {
		e.discard(r, fd)
		return nil, err
	}
	// The fill went to this file whatever happened to its name; a name
	// that no longer is this file means someone swapped it meanwhile.
	if err := r.stillNames(fd); err != nil {
		forsake(fd)
		r.close()
		return nil, err
	}
	return e.openFile(r, opts, &created{fd: fd, m: m})
}

// discard removes a file this Open created and could not prepare (if its
// name still is that file), and closes fd and r.
func (e env) discard(r *fileRef, fd int) {
	if r.stillNames(fd) != nil || RemoveIfSame(r.dirfd, r.name, fd) != nil {
		forsake(fd)
	}
	unix.Close(fd)
	r.close()
}

// forsake empties a file ioprobe created whose name was taken from it:
// its space goes back, and nothing of it looks like ioprobe's any more.
func forsake(fd int) {
	_ = unix.Fremovexattr(fd, markerXattr)
	_ = unix.Ftruncate(fd, 0)
}

// setDirect adds O_DIRECT (and O_NOATIME, allowed on a file ioprobe
// owns) to the open file fd.
func setDirect(fd int) error {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_DIRECT|unix.O_NOATIME); err == nil {
		return nil
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_DIRECT)
	return err
}

// checkNew makes every check that can be made before a new file target
// exists, and returns its size and the options with alignment resolved.
func (e env) checkNew(r *fileRef, opts Options) (int64, Options, error) {
	path := r.path
	if err := checkBufferedFS(path, r.dir, r.dirfd); err != nil {
		return 0, opts, err
	}
	size := opts.Region
	if size == 0 {
		size = opts.DefaultFileSize
	}
	if size <= 0 {
		return 0, opts, inputErr(path, "does not exist, and no size was given to create it with (--size)")
	}
	if err := r.checkDirSafe(); err != nil {
		return 0, opts, err
	}
	g, err := e.probeDir(r)
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
	if err := e.checkSpace(path, r.dir, r.dirfd, size); err != nil {
		return 0, opts, err
	}
	return size, o, nil
}

// prepare preallocates, fills, syncs and marks a freshly created file
// (marker m: its id) through fd, and returns the marker it left.
func (e env) prepare(path string, r *fileRef, fd int, size int64, m marker, o Options) (marker, error) {
	_, dio, err := statxFD(fd)
	if err != nil {
		return m, fmt.Errorf("target %s: statx: %w", path, err)
	}
	if dio.known && dio.offset == 0 {
		return m, noDirectIO(path, r.dir)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return m, fmt.Errorf("target %s: fstat: %w", path, err)
	}
	// The directory probe may have guessed; the file itself decides.
	if err := checkAlign(path, &o, e.fileGeometry(dio, e.devOf(&st))); err != nil {
		return m, err
	}
	if m, err = e.grow(path, r, fd, 0, size, m, o); err != nil {
		if se := (*SafetyError)(nil); errors.As(err, &se) {
			return m, err // its name was taken: nothing of it is removed by name
		}
		return m, fmt.Errorf("%w (removed the partial file %s)", err, r.resolved())
	}
	return m, nil
}

// grow preallocates [from, to) of fd, fills it with sectors stamped under
// the file's key (from its marker's id and its identity), syncs it and
// marks the file ready with size to. Before the first byte it marks the
// file busy, so a fill that is killed leaves a file the next run knows
// as ioprobe's (and fills again).
//
// After every chunk it checks that the name in r still is this file: a
// swap stops the fill at once, with a refusal that names it (the fill
// went to this file, never to what took its name).
func (e env) grow(path string, r *fileRef, fd int, from, to int64, m marker, o Options) (marker, error) {
	me, err := identityOf(fd)
	if err != nil {
		return m, fmt.Errorf("target %s: statx: %w", path, err)
	}
	m.size, m.ino, m.btime = from, me.ino, me.btime
	if m, err = markBusy(fd, m); err != nil {
		return m, fmt.Errorf("target %s: %w", path, err)
	}
	err = unix.Fallocate(fd, 0, from, to-from)
	if errors.Is(err, unix.EOPNOTSUPP) {
		// No preallocation here: filling allocates every block anyway.
		err = unix.Ftruncate(fd, to)
	}
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return m, fmt.Errorf("target %s: not enough space for %d bytes: %w", path, to, err)
	}
	if err != nil {
		return m, fmt.Errorf("target %s: preallocate %d bytes: %w", path, to-from, err)
	}
	hook := cancelHook(o.Cancel, e.fillHook)
	names := func(off int64) error {
		if hook != nil {
			if err := hook(off); err != nil {
				return err
			}
		}
		return r.stillNames(fd)
	}
	if err := fillDirect(fd, from, to, me.key(m.id), rand.Uint64(), o.Progress, names); err != nil {
		if se := (*SafetyError)(nil); errors.As(err, &se) {
			return m, se
		}
		return m, fmt.Errorf("target %s: fill with random data: %w", path, err)
	}
	if err := unix.Fsync(fd); err != nil {
		return m, fmt.Errorf("target %s: fsync: %w", path, err)
	}
	// Ready last: only a completely filled file is ioprobe's. Where the
	// filesystem has no user xattrs the file works for this run but will
	// look foreign to the next.
	m.size = to
	if m, err = markReady(fd, m); err != nil {
		return m, fmt.Errorf("target %s: %w", path, err)
	}
	return m, nil
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

// extend grows a file ioprobe filled, open for writing as fd, from size
// bytes (filled of them ioprobe's sectors) to newSize bytes, filling only
// [filled, newSize); on failure the file is cut back to filled, so it
// stays exactly what its marker describes. It returns the marker it left.
func (e env) extend(path string, r *fileRef, fd int, filled, size, newSize int64, m marker, o Options) (marker, error) {
	if err := e.checkSpace(path, r.dir, fd, newSize-size); err != nil {
		return m, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return m, fmt.Errorf("target %s: fstat: %w", path, err)
	}
	if err := e.backsLoop(path, &st, true); err != nil {
		return m, err
	}
	if !tryLockAlone(fd) {
		return m, refusal(path, true, because(RefuseLocked, "another run is writing to it, and it must be extended first; run this one after that one"))
	}
	defer unix.Flock(fd, unix.LOCK_UN)
	grown, err := e.grow(path, r, fd, filled, newSize, m, o)
	if err != nil {
		if terr := unix.Ftruncate(fd, filled); terr != nil {
			return m, fmt.Errorf("%w (and cutting it back to %d bytes failed: %v)", err, filled, terr)
		}
		m.size = filled
		if mm, merr := markReady(fd, m); merr == nil {
			m = mm
		}
		if se := (*SafetyError)(nil); errors.As(err, &se) {
			return m, err
		}
		return m, fmt.Errorf("%w (cut it back to its previous %d bytes)", err, filled)
	}
	return grown, nil
}

// checkSpace refuses, before anything is written, a file the filesystem
// cannot hold. fd is any descriptor on the filesystem (dir names it).
func (e env) checkSpace(path, dir string, fd int, need int64) error {
	if !e.spaceCheck {
		return nil
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return &InputError{Path: path, Msg: "cannot statfs " + dir, Err: err}
	}
	avail := int64(sfs.Bavail) * int64(sfs.Bsize)
	if avail < need {
		return &InputError{Path: path, Err: unix.ENOSPC,
			Msg: fmt.Sprintf("not enough free space in %s: the file needs %d bytes, %d are available", dir, need, avail)}
	}
	return nil
}

// probeDir finds the direct-I/O geometry of new files in r's directory
// without creating a visible one: an O_TMPFILE has no name and vanishes on
// close. It also tells a filesystem that rejects O_DIRECT before anything
// exists.
func (e env) probeDir(r *fileRef) (geometry, error) {
	var dst unix.Stat_t
	if err := unix.Fstat(r.dirfd, &dst); err != nil {
		return geometry{}, &InputError{Path: r.path, Msg: "cannot stat " + r.dir, Err: err}
	}
	fallback := e.fileGeometry(dioAlign{}, e.devOf(&dst))
	fd, err := openRetry2(r.dirfd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.EINVAL) {
		// Either O_DIRECT or O_TMPFILE is unsupported; without O_DIRECT we know which.
		plain, perr := openRetry2(r.dirfd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if perr == nil {
			unix.Close(plain)
			return geometry{}, noDirectIO(r.path, r.dir)
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
		return geometry{}, noDirectIO(r.path, r.dir)
	}
	return e.fileGeometry(dio, e.devOf(&dst)), nil
}

func sameFile(fd1, fd2 int) bool {
	var a, b unix.Stat_t
	return unix.Fstat(fd1, &a) == nil && unix.Fstat(fd2, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}
