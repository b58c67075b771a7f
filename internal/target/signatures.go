package target

import (
	"fmt"
	"io"
	"strings"

	"github.com/ioprobe/ioprobe/internal/blkid"
)

// Signature is something recognisable on a device: a filesystem, a
// partition table, a volume-manager or RAID label, swap, named as
// util-linux's blkid names it. Finding one means the device holds data
// somebody may want, so writes are refused. internal/blkid finds them.
type Signature = blkid.Signature

// scanChunk is how much of the device one read fetches and caches: the
// probes ask for a few hundred scattered bytes each, mostly in the first
// 256 KiB, around 1-2 MiB (VMFS) and in the last MiB, so a whole scan costs
// a few dozen reads.
const scanChunk = 64 << 10

// chunkReader is an io.ReaderAt over a device that reads whole, aligned
// chunks on demand through read (O_DIRECT on Linux) and keeps them. It
// remembers the first error: a device it could not read is not a device
// without signatures.
type chunkReader struct {
	read  func(off int64, n int) ([]byte, error)
	size  int64
	align int64 // the device's logical block size: chunk ends at the device's end are rounded to it
	cache map[int64][]byte
	reads int
	err   error
}

func newChunkReader(size, align int64, read func(off int64, n int) ([]byte, error)) *chunkReader {
	if align <= 0 {
		align = 512
	}
	return &chunkReader{read: read, size: size, align: align, cache: map[int64][]byte{}}
}

func (c *chunkReader) chunk(start int64) ([]byte, error) {
	if b, ok := c.cache[start]; ok {
		return b, nil
	}
	n := min(int64(scanChunk), c.size-start)
	n = (n + c.align - 1) / c.align * c.align
	c.reads++
	b, err := c.read(start, int(n))
	if err != nil {
		if c.err == nil {
			c.err = err
		}
		return nil, err
	}
	c.cache[start] = b
	return b, nil
}

// ReadAt serves p from the chunks that cover it.
func (c *chunkReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= c.size {
		return 0, io.EOF
	}
	done := 0
	for done < len(p) && off+int64(done) < c.size {
		pos := off + int64(done)
		start := pos / scanChunk * scanChunk
		b, err := c.chunk(start)
		if err != nil {
			return done, err
		}
		k := copy(p[done:], b[pos-start:])
		if k == 0 {
			break
		}
		done += k
	}
	if done < len(p) {
		return done, io.EOF
	}
	return done, nil
}

// scanSignatures runs every probe of internal/blkid over a device of size
// bytes and logical block lbs, read through read.
func scanSignatures(size, lbs int64, read func(off int64, n int) ([]byte, error)) ([]Signature, error) {
	r := newChunkReader(size, lbs, read)
	sigs := blkid.Scan(r, size, lbs)
	if r.err != nil {
		return nil, r.err
	}
	return sigs, nil
}

// signatureReasons words a refusal: one reason per type found, with every
// offset where it was found ("it holds a FAT filesystem (TYPE=vfat,
// signatures at bytes 54, 0, 510)").
func signatureReasons(sigs []Signature) []string {
	var order []string
	byType := map[string][]Signature{}
	for _, s := range sigs {
		if _, ok := byType[s.Type]; !ok {
			order = append(order, s.Type)
		}
		byType[s.Type] = append(byType[s.Type], s)
	}
	reasons := make([]string, 0, len(order))
	for _, typ := range order {
		ss := byType[typ]
		if len(ss) == 1 {
			reasons = append(reasons, "it holds "+ss[0].String())
			continue
		}
		offs := make([]string, len(ss))
		for i, s := range ss {
			offs[i] = fmt.Sprint(s.Offset)
		}
		key := "TYPE"
		if ss[0].Usage == blkid.PartitionTable {
			key = "PTTYPE"
		}
		reasons = append(reasons, fmt.Sprintf("it holds %s (%s=%s, signatures at bytes %s)", ss[0].What, key, typ, strings.Join(offs, ", ")))
	}
	return reasons
}
