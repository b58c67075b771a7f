package check

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// walStream appends records as etcd's WAL does (server/storage/wal):
// each Save hands one framed record to the page cache with write(2) and
// then fdatasync(2)s the segment, which is what etcd times
// (etcd_disk_wal_fsync_duration_seconds); a segment is a file of
// SegmentBytes preallocated with fallocate(2) mode 0, as
// fileutil.Preallocate(f, SegmentSizeBytes, true) does, by a pipeline
// that prepares the next one in the background; when one is full the
// stream cuts to the next as wal.cut does.
type walStream struct {
	dir    *checkDir
	rep    int
	frame  []byte // one record, framed as etcd frames it
	header []byte // a new segment's first records: crc, metadata, hard state
	seg    *ownFile
	off    int64
	seq    uint64
	pipe   *pipeline
	rate   float64 // appends a second at most; 0: closed loop
	// segBytes is SegmentBytes; tests make it small to reach a cut.
	segBytes int64

	fsync, write *result.Histogram // fdatasync (and the directory fsync of a cut); write(2)
	records      uint64
	bytes        uint64
	cuts         uint64
	appended     atomic.Uint64 // records saved: the backend commits what they put
	prealloc     string        // "fallocate", or how etcd's fallback made the segment
}

// newWAL makes the first segment (untimed, as etcd's Create) and starts
// the pipeline that prepares the next.
func newWAL(d *checkDir, rep int, rate float64, segBytes int64) (*walStream, error) {
	w := &walStream{dir: d, rep: rep, rate: rate, segBytes: segBytes, frame: make([]byte, FrameBytes),
		fsync: result.NewHistogram(), write: result.NewHistogram()}
	fillRandom(w.frame)
	binary.LittleEndian.PutUint64(w.frame, RecordBytes) // the length field: no padding, 8-byte aligned
	w.header = walHeader()
	f, err := d.create(w.segName(0), unix.O_WRONLY)
	if err != nil {
		return nil, err
	}
	if w.prealloc, err = preallocate(f.fd, segBytes); err != nil {
		return nil, fmt.Errorf("preallocate the WAL segment: %w", err)
	}
	w.seg = f
	if _, err := unix.Pwrite(f.fd, w.header, 0); err != nil {
		return nil, fmt.Errorf("WAL write: %w", err)
	}
	w.off = int64(len(w.header))
	if err := unix.Fdatasync(f.fd); err != nil {
		return nil, fmt.Errorf("WAL fdatasync: %w", err)
	}
	if err := d.fsyncDir(); err != nil {
		return nil, fmt.Errorf("fsync the directory: %w", err)
	}
	w.pipe = newPipeline(d, rep, segBytes)
	// The first prepared segment is ready before the measured window
	// opens, as it is long before etcd's first cut.
	if err := w.pipe.waitReady(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *walStream) segName(seq uint64) string {
	return w.dir.name(fmt.Sprintf("-r%d-%016x.wal", w.rep, seq))
}

// walHeader is what wal.cut writes at the start of a new segment before
// its sync: a crc record, the metadata record and the hard state, each in
// etcd's frame (an 8-byte length, the record padded to 8 bytes).
func walHeader() []byte {
	var h []byte
	for _, n := range []int{8, 32, 24} { // crc, metadata (node and cluster ids), hard state (term, vote, commit)
		frame := make([]byte, 8+n)
		binary.LittleEndian.PutUint64(frame, uint64(n))
		fillRandom(frame[8:])
		h = append(h, frame...)
	}
	return h
}

// run saves records until stop is set, pacing to w.rate when set.
func (w *walStream) run(stop *atomic.Bool) error {
	var next time.Time
	for !stop.Load() {
		if w.rate > 0 {
			if !next.IsZero() && !sleepUntil(next, stop) {
				return nil
			}
			now := time.Now()
			if next.Before(now) {
				next = now // a cap, not a catch-up: no burst after a slow fdatasync
			}
			next = next.Add(time.Duration(float64(time.Second) / w.rate))
		}
		if err := w.save(); err != nil {
			return err
		}
	}
	return nil
}

// save is wal.Save of one entry: the record, then a sync (or a cut when
// the segment is full).
func (w *walStream) save() error {
	binary.LittleEndian.PutUint64(w.frame[8:], w.records) // the entry's index: no two records alike
	w.records++
	w.appended.Add(1)
	if w.off < w.segBytes {
		return w.sync(w.frame)
	}
	return w.cut()
}

// sync is wal.sync: the buffered bytes reach the file with one write(2)
// (etcd's encoder.flush), then fdatasync(2), the call etcd times.
func (w *walStream) sync(b []byte) error {
	t0 := time.Now()
	n, err := unix.Pwrite(w.seg.fd, b, w.off)
	t1 := time.Now()
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("WAL write: %w", err)
	}
	w.off += int64(n)
	w.bytes += uint64(n)
	err = unix.Fdatasync(w.seg.fd)
	t2 := time.Now()
	if err != nil {
		return fmt.Errorf("WAL fdatasync: %w", err)
	}
	w.write.Record(int64(t1.Sub(t0)))
	w.fsync.Record(int64(t2.Sub(t1)))
	return nil
}

// cut is wal.cut: the full segment is cut at its end and synced with the
// pending record, the prepared segment takes the header and a sync, is
// renamed into place and the directory fsynced: etcd times all three.
func (w *walStream) cut() error {
	if err := unix.Ftruncate(w.seg.fd, w.off); err != nil {
		return fmt.Errorf("WAL truncate: %w", err)
	}
	if err := w.sync(w.frame); err != nil {
		return err
	}
	next, err := w.pipe.open()
	if err != nil {
		return err
	}
	w.seq++
	w.seg, w.off = next, 0
	if err := w.sync(w.header); err != nil {
		return err
	}
	if err := w.dir.rename(next, w.segName(w.seq)); err != nil {
		return err
	}
	t0 := time.Now()
	if err := w.dir.fsyncDir(); err != nil {
		return fmt.Errorf("fsync the WAL directory: %w", err)
	}
	w.fsync.Record(int64(time.Since(t0)))
	w.cuts++
	return nil
}

// close stops the pipeline (its prepared file stays listed for removal).
func (w *walStream) close() {
	if w != nil && w.pipe != nil {
		w.pipe.close()
	}
}

// pipeline is etcd's filePipeline: it keeps one preallocated segment
// ready, named N.tmp with N alternating so it never takes the name of the
// one last handed out.
type pipeline struct {
	dir   *checkDir
	rep   int
	size  int64
	count int
	filec chan *ownFile
	errc  chan error
	donec chan struct{}
	ready chan struct{} // closed once the first file is prepared (or failed)
}

func newPipeline(d *checkDir, rep int, size int64) *pipeline {
	p := &pipeline{dir: d, rep: rep, size: size, filec: make(chan *ownFile), errc: make(chan error, 1),
		donec: make(chan struct{}), ready: make(chan struct{})}
	go p.run()
	return p
}

func (p *pipeline) run() {
	defer close(p.errc)
	var once sync.Once
	defer once.Do(func() { close(p.ready) })
	for {
		f, err := p.alloc()
		if err != nil {
			p.errc <- err // before ready: waitReady sees it
			return
		}
		once.Do(func() { close(p.ready) })
		select {
		case p.filec <- f:
		case <-p.donec:
			return
		}
	}
}

func (p *pipeline) alloc() (*ownFile, error) {
	f, err := p.dir.create(p.dir.name(fmt.Sprintf("-r%d-%d.tmp", p.rep, p.count%2)), unix.O_WRONLY)
	if err != nil {
		return nil, err
	}
	if _, err := preallocate(f.fd, p.size); err != nil {
		return nil, fmt.Errorf("preallocate the next WAL segment: %w", err)
	}
	p.count++
	return f, nil
}

func (p *pipeline) waitReady() error {
	<-p.ready
	select {
	case err, ok := <-p.errc:
		if ok && err != nil {
			return err
		}
	default:
	}
	return nil
}

func (p *pipeline) open() (*ownFile, error) {
	select {
	case f := <-p.filec:
		return f, nil
	case err, ok := <-p.errc:
		if !ok || err == nil {
			err = errors.New("the WAL pipeline stopped")
		}
		return nil, err
	}
}

func (p *pipeline) close() {
	close(p.donec)
	for range p.errc { // wait for it to stop
	}
}

// preallocate is etcd's fileutil.Preallocate(f, size, true): fallocate(2)
// mode 0, which sets the size; where the filesystem has no fallocate (or
// it is interrupted), a truncate to the size, as etcd falls back. It says
// which it did.
func preallocate(fd int, size int64) (string, error) {
	err := unix.Fallocate(fd, 0, 0, size)
	if err == nil {
		return "fallocate", nil
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINTR) {
		if err := unix.Ftruncate(fd, size); err != nil {
			return "", err
		}
		return "ftruncate (the filesystem has no fallocate; etcd falls back the same way)", nil
	}
	return "", err
}

// sleepUntil sleeps until t, waking at least every 50 ms to see stop;
// false when stop was set.
func sleepUntil(t time.Time, stop *atomic.Bool) bool {
	for {
		if stop.Load() {
			return false
		}
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		time.Sleep(min(d, 50*time.Millisecond))
	}
}
