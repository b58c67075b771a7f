package check

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// pathPages are the pages besides the puts' that every commit rewrites.
const pathPages = 4

// backendStream commits as etcd's backend does: every BatchInterval
// (etcd's --backend-batch-interval) the puts the WAL saved since the
// last commit go into bbolt, whose Tx.Commit (go.etcd.io/bbolt tx.go)
// grows the file when it must (ftruncate and fsync), writes the dirty
// pages with pwrite in page order, fdatasyncs, writes the meta page and
// fdatasyncs again. etcd times the whole Commit
// (etcd_disk_backend_commit_duration_seconds), and so does the check.
//
// What a commit writes: every put is a key-value pair about a WAL
// record's size, and bbolt keeps at least two keys in a leaf, so two
// 2.3 KB values make a leaf of two 4 KiB pages — one new page a put,
// written at the end of the used pages (the keys are revisions, which
// only grow); the copy-on-write path to them (the key bucket's branch,
// the meta bucket's leaf with etcd's consistent index, the root) and the
// freelist (etcd leaves bbolt's NoFreelistSync off, so every commit
// writes it) are pathPages pages rewritten where the commit before the
// last one freed them.
type backendStream struct {
	f      *ownFile
	size   int64 // file size
	hwm    int64 // pages in use: the next new page's id
	sets   [2]int64
	txid   uint64
	leaf   []byte // two pages: a leaf of two puts
	page   []byte
	meta   []byte
	src    *atomic.Uint64 // puts saved by the WAL
	taken  uint64
	commit *result.Histogram

	commits    uint64
	progress   atomic.Uint64 // commits, for the progress line
	fdatasyncs uint64
	pages      uint64
	grows      uint64
}

// newBackend creates the database file as bbolt's init does (two meta
// pages, a freelist page, an empty leaf; written, then fdatasync), before
// the measured window.
func newBackend(d *checkDir, rep int, src *atomic.Uint64) (*backendStream, error) {
	f, err := d.create(d.name(fmt.Sprintf("-r%d-backend.db", rep)), unix.O_RDWR)
	if err != nil {
		return nil, err
	}
	b := &backendStream{f: f, src: src, commit: result.NewHistogram(), sets: [2]int64{-1, -1},
		leaf: make([]byte, 2*PageBytes), page: make([]byte, PageBytes), meta: make([]byte, PageBytes)}
	fillRandom(b.leaf)
	fillRandom(b.page)
	fillRandom(b.meta)
	initial := make([]byte, 4*PageBytes)
	fillRandom(initial)
	if _, err := unix.Pwrite(f.fd, initial, 0); err != nil {
		return nil, fmt.Errorf("backend write: %w", err)
	}
	if err := unix.Fdatasync(f.fd); err != nil {
		return nil, fmt.Errorf("backend fdatasync: %w", err)
	}
	b.size, b.hwm, b.txid = int64(len(initial)), 4, 1
	return b, nil
}

// run commits every BatchInterval after the last commit ended, as etcd's
// backend loop resets its timer after each commit, until stop is set.
// An interval with no new put commits nothing (etcd skips it too).
func (b *backendStream) run(stop *atomic.Bool) error {
	for sleepUntil(time.Now().Add(BatchInterval), stop) {
		n := b.src.Load() - b.taken
		if n == 0 {
			continue
		}
		b.taken += n
		t0 := time.Now()
		if err := b.commitPuts(int64(n)); err != nil {
			return err
		}
		b.commit.Record(int64(time.Since(t0)))
		b.commits++
		b.progress.Add(1)
	}
	return nil
}

// commitPuts is one Tx.Commit of n puts.
func (b *backendStream) commitPuts(n int64) error {
	s := b.txid % 2
	if b.sets[s] < 0 { // the first two commits allocate the path's pages
		b.sets[s] = b.hwm
		b.hwm += pathPages
	}
	first := b.hwm
	b.hwm += n
	// db.grow: past the file's end, truncate to the need plus AllocSize
	// (etcd maps far more than AllocSize), then fsync.
	if need := (b.hwm + 1) * PageBytes; need > b.size {
		b.size = need + AllocSize
		if err := unix.Ftruncate(b.f.fd, b.size); err != nil {
			return fmt.Errorf("backend grow: %w", err)
		}
		if err := unix.Fsync(b.f.fd); err != nil {
			return fmt.Errorf("backend grow fsync: %w", err)
		}
		b.grows++
	}
	// tx.write: the dirty pages in page order, each with its overflow in
	// one write.
	for i := int64(0); i < pathPages; i++ {
		if err := b.pwrite(b.page, (b.sets[s]+i)*PageBytes); err != nil {
			return err
		}
	}
	for p := first; p < b.hwm; p += 2 {
		buf := b.leaf
		if b.hwm-p == 1 {
			buf = b.leaf[:PageBytes]
		}
		binary.LittleEndian.PutUint64(buf, uint64(p)) // the page id: no two pages alike
		if err := b.pwrite(buf, p*PageBytes); err != nil {
			return err
		}
	}
	b.pages += uint64(pathPages + n)
	if err := b.fdatasync(); err != nil {
		return err
	}
	// tx.writeMeta: meta page txid%2, then fdatasync.
	binary.LittleEndian.PutUint64(b.meta, b.txid)
	if err := b.pwrite(b.meta, int64(b.txid%2)*PageBytes); err != nil {
		return err
	}
	b.pages++
	b.txid++
	return b.fdatasync()
}

func (b *backendStream) pwrite(buf []byte, off int64) error {
	n, err := unix.Pwrite(b.f.fd, buf, off)
	if err == nil && n < len(buf) {
		err = fmt.Errorf("short write: %d of %d bytes", n, len(buf))
	}
	if err != nil {
		return fmt.Errorf("backend write: %w", err)
	}
	return nil
}

func (b *backendStream) fdatasync() error {
	if err := unix.Fdatasync(b.f.fd); err != nil {
		return fmt.Errorf("backend fdatasync: %w", err)
	}
	b.fdatasyncs++
	return nil
}

// fillRandom fills b with incompressible bytes.
func fillRandom(b []byte) { _, _ = rand.Read(b) }
