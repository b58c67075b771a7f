package target

import (
	"fmt"
	"math/rand/v2"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/iobuf"
	"github.com/ioprobe/ioprobe/internal/verify"
)

// identity is what makes a file this file and not a copy of it: its inode
// number and its birth time (0 where the filesystem does not report one).
// The device number is left out on purpose: it changes when the loop
// device or device-mapper table under a filesystem is set up again, and
// an ioprobe file would then look foreign after a reboot.
type identity struct {
	ino   uint64
	btime int64 // nanoseconds since the epoch
}

func identityOf(fd int) (identity, error) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_BTIME, &st); err != nil {
		return identity{}, err
	}
	id := identity{ino: st.Ino}
	if st.Mask&unix.STATX_BTIME != 0 {
		id.btime = st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
	}
	return id, nil
}

// key is the sector key of the file with this identity and marker id.
func (i identity) key(id uint64) uint64 {
	return verify.FileKey(id, i.ino, i.btime/1e9, uint32(i.btime%1e9))
}

// ownership is what an existing file's marker and content say about it.
type ownership struct {
	// marked: its marker is ioprobe's and names this very file (not a
	// copy), so every sector of [0, filled) was written by ioprobe in the
	// self-describing format under key, and --verify judges every read
	// there: a sector that is not sound was changed behind ioprobe's back.
	marked bool
	// owned: marked, nothing but ioprobe changed it since ioprobe last
	// wrote it, and its content is still ioprobe's sectors, so it may be
	// written without --allow-destructive.
	owned bool
	key   uint64 // the sectors' key (marked only)
	id    uint64 // the marker's id (marked only)
	// filled is how many bytes from offset 0 are ioprobe's sectors
	// (marked only): less than the file's size after a fill or an
	// extension that was killed, whose new part then holds ioprobe's
	// sectors or zeros only (owned), and is filled again.
	filled int64
	m      marker // the marker as read (marked only)
	// scanned: owned, and every sector was read to tell (an interrupted
	// run, an older ioprobe's marker, a change of the file's ctime only):
	// mark it ready again, so the next run need not.
	scanned bool
	why     string // why the file is not ioprobe's ("" when owned or unmarked)
	// forsaken: not ioprobe's by its content, but a file this process
	// wrote with foreign content and left unchanged since (see
	// forsake_linux.go): it may write it again.
	forsaken bool
	// otherKey is the key of the file whose marker this one carries when
	// that is another file (a copy's original): its sectors are that
	// file's, random, and no one's signature (dropOwnSectors).
	otherKey uint64
}

// samples is how many blocks between the first and the last 64 KiB of a
// file are read to tell whether its content is still ioprobe's, at random
// places each time: a cheap extra look, where the marker's record of the
// file's size and times says nothing changed it.
const (
	samples     = 64
	sampleBlock = 4096
	edgeBytes   = 64 << 10
)

// fileTimes is what a ready marker records of a file, read from fd.
type fileTimes struct {
	size, mtime, ctime int64
}

func timesOf(fd int) (fileTimes, error) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_SIZE|unix.STATX_MTIME|unix.STATX_CTIME, &st); err != nil {
		return fileTimes{}, err
	}
	return fileTimes{size: int64(st.Size), mtime: st.Mtime.Sec*1e9 + int64(st.Mtime.Nsec), ctime: st.Ctime.Sec*1e9 + int64(st.Ctime.Nsec)}, nil
}

func stamp(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z")
}

// readOwnership decides whether the file open as fd (size bytes, direct-I/O
// offset alignment align) is ioprobe's: its marker must name this file.
// A ready marker must record the file's size and modification time
// exactly and its change time within ctimeSlack: then its first and last
// 64 KiB and a random sample in between must be ioprobe's sectors stamped
// under this file's key. Where only the change time moved (a rename, a
// chmod), where a run that wrote it was interrupted (busy, and no writer
// holds its lock: live says whether one does) or the marker is an older
// ioprobe's, every sector is read instead.
func readOwnership(fd int, size, align int64, live func() bool) ownership {
	buf := make([]byte, 512)
	n, err := unix.Fgetxattr(fd, markerXattr, buf)
	if err != nil {
		return ownership{}
	}
	if isForsaken(buf[:n]) {
		return ownership{why: forsakenWhy}
	}
	m, v1, ok := parseMarker(buf[:n])
	switch {
	case v1:
		return ownership{why: "it carries the marker of an older ioprobe, which does not prove that its content is still ioprobe's (delete the file and ioprobe fills it anew)"}
	case !ok:
		return ownership{why: "it carries a damaged ioprobe marker"}
	}
	me, err := identityOf(fd)
	if err != nil {
		return ownership{why: fmt.Sprintf("its identity cannot be read (statx: %v)", err)}
	}
	if me.ino != m.ino || me.btime != m.btime {
		return ownership{otherKey: identity{ino: m.ino, btime: m.btime}.key(m.id),
			why: fmt.Sprintf("it carries the marker of another file (inode %d), so it is a copy or a replacement of an ioprobe file, not one", m.ino)}
	}
	if m.size > size {
		return ownership{why: fmt.Sprintf("it carries ioprobe's marker, but its size changed from %d to %d bytes since ioprobe filled it, so it may now hold other data", m.size, size)}
	}
	marked := ownership{marked: true, key: me.key(m.id), id: m.id, filled: m.size, m: m}
	full := m.legacy
	switch {
	case m.legacy:
	case m.busy:
		full = !live()
	default:
		now, err := timesOf(fd)
		switch {
		case err != nil:
			marked.why = fmt.Sprintf("it carries ioprobe's marker, but its times cannot be read (statx: %v)", err)
			return marked
		case now.size != m.size:
			marked.why = fmt.Sprintf("it carries ioprobe's marker, but its size changed from %d to %d bytes since ioprobe last wrote it, so it may now hold other data", m.size, now.size)
			return marked
		case now.mtime != m.mtime:
			marked.why = fmt.Sprintf("it carries ioprobe's marker, but something else modified it since ioprobe last wrote it (modified %s, ioprobe left it at %s), so it may hold other data now", stamp(now.mtime), stamp(m.mtime))
			return marked
		case now.ctime < m.ctime || now.ctime > m.ctime+int64(ctimeSlack):
			full = true // its status changed: only its content can tell
		}
	}
	mem, err := iobuf.New(1, fullChunk, 0)
	if err != nil {
		marked.why = err.Error()
		return marked
	}
	defer mem.Close()
	if full {
		if bad, err := scanAll(fd, mem.Memory(), m.size, size, marked.key); err != nil || bad >= 0 {
			marked.why = contentWhy(bad, err)
			return marked
		}
		marked.owned, marked.scanned = true, true
		return marked
	}
	if bad, err := foreignAt(fd, mem.Memory()[:edgeBytes], 0, m.size, align, marked.key, false); err != nil || bad >= 0 {
		marked.why = contentWhy(bad, err)
		return marked
	}
	if m.size < size {
		// Only a fill that a live run is doing leaves more than the
		// marker says: the rest is ioprobe's sectors or the zeros of
		// preallocation.
		if bad, err := foreignAt(fd, mem.Memory()[:edgeBytes], m.size, size, align, marked.key, true); err != nil || bad >= 0 {
			marked.why = fmt.Sprintf("it carries ioprobe's marker, but its size changed from %d to %d bytes since ioprobe filled it, and %s", m.size, size, contentWhy(bad, err)[len("it carries ioprobe's marker, but "):])
			return marked
		}
	}
	marked.owned = true
	return marked
}

// fullChunk is how much scanAll reads at a time.
const fullChunk = 4 << 20

// scanAll reads every sector of the file open as fd (O_DIRECT) and
// returns the offset of the first one that is not ioprobe's under key:
// before filled, a stamped sector for its offset; from filled to size,
// that or zeros. -1 when all are.
func scanAll(fd int, mem []byte, filled, size int64, key uint64) (int64, error) {
	if size%verify.SectorSize != 0 {
		return size / verify.SectorSize * verify.SectorSize, nil // ioprobe's files end on a sector
	}
	for off := int64(0); off < size; {
		n := min(int64(len(mem)), size-off)
		p := mem[:n]
		if err := preadFull(fd, p, off); err != nil {
			return 0, err
		}
		for s := int64(0); s < n; s += verify.SectorSize {
			sec := p[s : s+verify.SectorSize]
			at := off + s
			if verify.Recognise(sec, at, key).Problem != verify.OK && !(at >= filled && allZero(sec)) {
				return at, nil
			}
		}
		off += n
	}
	return -1, nil
}

// preadFull reads len(p) bytes at off of fd (O_DIRECT, p mmap'd).
func preadFull(fd int, p []byte, off int64) error {
	n := int64(len(p))
	for done := int64(0); done < n; {
		got, err := unix.Pread(fd, p[done:], off+done)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %d bytes at %d: %w", n-done, off+done, err)
		}
		if got == 0 {
			return fmt.Errorf("read at %d: unexpected end of file", off+done)
		}
		done += int64(got)
	}
	return nil
}

func contentWhy(bad int64, err error) string {
	if err != nil {
		return fmt.Sprintf("it carries ioprobe's marker, but its content cannot be read to check it is still ioprobe's: %v", err)
	}
	return fmt.Sprintf("it carries ioprobe's marker, but its content is no longer ioprobe's (byte %d), so it holds other data now", bad)
}

// foreignAt reads the first and last edgeBytes of [from, to) of fd, and
// samples blocks at random places in between, into mem (mmap'd, at least
// edgeBytes), and returns the offset of the first sector that is not one
// of ioprobe's under key (with zeros: nor all zeros), or -1 when every
// sector read is. Offsets are rounded to align, the direct-I/O alignment.
func foreignAt(fd int, mem []byte, from, to, align int64, key uint64, zeros bool) (int64, error) {
	align = max(align, verify.SectorSize)
	from = from / align * align
	span := (to - from) / align * align
	if span <= 0 {
		return -1, nil
	}
	edge := min(int64(edgeBytes)/align*align, span)
	blk := min(max(sampleBlock/align, 1)*align, span, int64(len(mem))/align*align)
	check := func(off, n int64) (int64, error) {
		p := mem[:n]
		if err := preadFull(fd, p, off); err != nil {
			return 0, err
		}
		for s := int64(0); s+verify.SectorSize <= n; s += verify.SectorSize {
			sec := p[s : s+verify.SectorSize]
			if verify.Recognise(sec, off+s, key).Problem != verify.OK && !(zeros && allZero(sec)) {
				return off + s, nil
			}
		}
		return -1, nil
	}
	spots := []int64{from, from + span - edge}
	for i := 0; i < samples && span > 2*edge; i++ {
		spots = append(spots, from+rand.Int64N((span-blk)/align+1)*align)
	}
	for i, off := range spots {
		n := edge
		if i >= 2 {
			n = blk
		}
		if bad, err := check(off, n); err != nil || bad >= 0 {
			return bad, err
		}
	}
	return -1, nil
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// lockWriters takes the writers' flock on fd, a file opened for writing
// (see Options.Exclusive), for as long as fd is open. A --verify run that
// writes must be the only writer, or another run's sectors would read as
// its own lost writes.
func lockWriters(path string, fd int, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case err == unix.EINTR:
			continue
		case err == unix.EWOULDBLOCK && exclusive:
			return refusal(path, true, because(RefuseLocked, "another run is writing to it, and --verify cannot tell that run's writes from lost ones; run it after that one"))
		case err == unix.EWOULDBLOCK:
			return refusal(path, true, because(RefuseLocked, "a run with --verify is writing to it, and would take this run's writes for lost ones; run it after that one"))
		default:
			return fmt.Errorf("target %s: flock: %w", path, err)
		}
	}
}
