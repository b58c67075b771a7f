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
// 256 KiB, around 1-2 MiB (VMFS) and in the last MiB, so a look at the
// primary places costs a few dozen reads; the backup copies and partition
// starts, searched only on a device where nothing else was found, a
// hundred or so more (docs/signatures.md, "What the looks cost").
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

// scanSignatures runs every round of internal/blkid's search (blkid.Scan:
// the probes, then the backup copies, then the partition starts) over a
// device of size bytes read through read in chunks aligned to align, whose
// logical sectors are sectorSize bytes: a block device's own, 512 for a
// regular file (as libblkid probes a file, whatever the direct-I/O
// alignment of the filesystem under it). It returns what it found and the
// first read that failed: a device that is partly unreadable (the locked
// range of an OPAL drive) may still show what it holds where it can be
// read.
func scanSignatures(size, align, sectorSize int64, read func(off int64, n int) ([]byte, error)) ([]Signature, error) {
	return scanSignaturesWith(size, align, sectorSize, read, blkid.Scan)
}

// blkidScan is one of internal/blkid's searches: blkid.Scan, ScanPrimary,
// or Scan keeping only some findings (ownKept).
type blkidScan func(r io.ReaderAt, size, sectorSize int64) []Signature

// scanSignaturesWith is scanSignatures running scan.
func scanSignaturesWith(size, align, sectorSize int64, read func(off int64, n int) ([]byte, error), scan blkidScan) ([]Signature, error) {
	r := newChunkReader(size, align, read)
	sigs := scan(r, size, sectorSize)
	return sigs, r.err
}

// signatureFindings words what a scan of the target found (and whether it
// could read everything) as reasons to refuse.
func signatureFindings(sigs []Signature, err error) []finding {
	var fs []finding
	for _, t := range signatureTexts("it", sigs, err) {
		fs = append(fs, because(RefuseSignature, t))
	}
	return fs
}

// signatureTexts words what a scan of what subject names ("it", "its
// backing file /x") found, and whether it could read everything.
func signatureTexts(subject string, sigs []Signature, err error) []string {
	texts := signatureReasonsOf(subject, sigs)
	if subject != "it" && len(texts) > 1 {
		// One reason per backing: its long name once.
		parts := make([]string, len(texts))
		for i, t := range texts {
			parts[i] = strings.TrimPrefix(t, subject+" holds ")
		}
		texts = []string{subject + " holds " + strings.Join(parts, ", and ")}
	}
	if err != nil {
		what := "ioprobe cannot read " + subject + " to look for filesystems and labels: "
		if subject == "it" {
			what = "cannot read it to look for filesystems and labels: "
		}
		if len(sigs) > 0 {
			what = "and parts of " + subject + " cannot be read to look for more: "
		}
		texts = append(texts, what+err.Error())
	}
	return texts
}

// signatureReasons words a refusal: one reason per type found, with every
// offset where it was found ("it holds a FAT filesystem (TYPE=vfat,
// signatures at bytes 54, 0, 510)").
func signatureReasons(sigs []Signature) []string { return signatureReasonsOf("it", sigs) }

// signatureReasonsOf is signatureReasons for what subject names.
func signatureReasonsOf(subject string, sigs []Signature) []string {
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
			reasons = append(reasons, subject+" holds "+ss[0].String())
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
		reasons = append(reasons, fmt.Sprintf("%s holds %s (%s=%s, signatures at bytes %s)", subject, ss[0].What, key, typ, strings.Join(offs, ", ")))
	}
	return reasons
}
