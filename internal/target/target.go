package target

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Kind says what a target is.
type Kind string

// Target kinds, as the result JSON spells them.
const (
	KindFile  Kind = "file"
	KindBlock Kind = "block"
)

// Options says what a run will do with a target; Open checks the target
// against it before anything is created or opened for writing.
type Options struct {
	// Write is set when the workload issues writes.
	Write bool
	// AllowDestructive is --allow-destructive: writes to a block device or
	// to a file ioprobe did not create. It never overrides the refusals that
	// protect data that is in use or recognisably there (mounts,
	// partitions, partition tables, filesystem, LVM or RAID signatures).
	AllowDestructive bool
	// Region is the number of bytes, from offset 0, that I/O will touch.
	// 0 means the whole target (rounded down to Align), or DefaultFileSize
	// for a file ioprobe creates.
	Region int64
	// DefaultFileSize is the size of a file ioprobe creates when Region is 0.
	DefaultFileSize int64
	// Align is the alignment of every I/O and the smallest transfer; it must
	// be a multiple of the target's logical block size. 0 means the logical
	// block size.
	Align int64
	// MaxBlock is the largest transfer; it must be a multiple of the logical
	// block size and fit in the region. 0 means Align.
	MaxBlock int64
	// Exclusive says the run judges reads by what it wrote itself (--verify
	// with writes: a sector older than its last write is a lost write), so
	// no other run may write the file meanwhile. Every run that writes a
	// file holds a BSD flock on it for the run, shared, or exclusive with
	// this set; Open refuses a file another run holds against it.
	Exclusive bool
	// Buffered says that the I/O goes through the page cache (run
	// --buffered, fio's direct=0; the runner reopens the target without
	// O_DIRECT): transfer sizes, offsets and the region need not be
	// multiples of the logical block, and a new file is made the region
	// rounded up to whole blocks (ioprobe still fills it with O_DIRECT).
	Buffered bool
	// ForeignContent says that the writes are not ioprobe's
	// self-describing sectors (a fio job's buffer contents, written as
	// fio writes them). A file ioprobe owns may still be written, but it
	// stops being ioprobe's before the first write: the next run needs
	// --allow-destructive to write it, except in this process, which
	// takes back the files it left so while nothing else changed them.
	ForeignContent bool
	// Progress, when set, is called after each chunk while a new file (or
	// the new part of an extended one) is being filled.
	Progress func(done, total int64)
	// Cancel, when set, aborts the filling of a new file (or of the new part
	// of an extended one) once it is closed: the fill stops before its next
	// chunk, the partial file is removed (an extended one is cut back to the
	// size its marker records) and Open returns an error that wraps
	// ErrCancelled. A daemon must stop within a second of SIGTERM, and
	// filling a large file takes longer than that.
	Cancel <-chan struct{}
}

// ErrNotSameFile is wrapped by the error of RemoveIfSame (and
// CreatedFile.Remove) when the name is no longer the file ioprobe
// created: it was left where it is.
var ErrNotSameFile = errors.New("the name is no longer the file ioprobe created")

// ErrCancelled is wrapped by the error Open returns when Options.Cancel
// stopped the preparation of a file.
var ErrCancelled = errors.New("preparation cancelled")

// Target is an opened target. Its FD is what engines issue I/O on.
type Target struct {
	Path     string // as given
	Resolved string // after symlinks
	Kind     Kind
	// FD was opened with O_DIRECT: O_RDONLY unless writes are both needed
	// (Options.Write) and allowed, then O_RDWR (and O_EXCL for a device, so
	// nothing can mount or claim it while ioprobe writes).
	FD     int
	Size   int64 // bytes: the file size, or BLKGETSIZE64
	Region int64 // bytes I/O may touch, from offset 0: <= Size, a multiple of Align
	// LogicalBlock is BLKSSZGET for a device; for a file the kernel's
	// direct-I/O offset alignment (statx STATX_DIOALIGN) when it reports
	// one, else the logical block size of the device under the filesystem,
	// else 512.
	LogicalBlock int64
	MemAlign     int64 // statx dio_mem_align when known, else 4096
	// Formatted says every sector of the target is in --verify's
	// self-describing format (a file ioprobe filled), so any read of it can
	// be verified; elsewhere only what the run itself wrote can be.
	Formatted bool
	// SectorKey is the key the sectors of a file ioprobe filled are
	// stamped under (internal/verify), bound to the file's identity; 0 for
	// anything else. Engines stamp every write with it.
	SectorKey uint64
	// Device is the kernel name of the block device the I/O reaches
	// ("vda", "loop3", "nvme0n1p2"), for ReadDiskStats; "" when there is
	// none (an anonymous st_dev, as on btrfs or overlayfs).
	Device string
	// Unseen names the processes ioprobe could not look at for holders
	// of a target it writes, although it ran with every privilege that
	// gives a view of the processes: processes it descends from (the
	// supervisor or sandbox that started it, guarding itself). The write
	// was not refused for them, and the result says so (notes); any
	// other process hidden from it refuses the write (hidden-processes).
	Unseen []string

	Created  bool // ioprobe created the file in this Open
	Extended bool // ioprobe grew its own file to a larger region in this Open
	// GrownFrom is the size an Extended file had before (0 otherwise).
	GrownFrom int64
	Writable  bool

	closed bool
	env    env
	// file is a file target's state: its directory by descriptor, its
	// marker (nil for a device).
	file *fileState
	// diskLock holds the flock on the whole disk of a partition ioprobe
	// writes (the lock on the partition itself is on FD).
	diskLock   int
	diskLocked bool
}

// ReadCount counts the reads a check made: system calls and bytes, and
// tells Each (when set) of every one as it completes.
type ReadCount struct {
	Ops, Bytes uint64
	Each       func(bytes int)
}

// SafetyError is a refusal to use or to write to a target. The CLI maps it
// to exit status 2.
type SafetyError struct {
	Path  string // the target as given
	Write bool   // the refusal is about writing; false: about using it at all
	// Reason says what was found and where, e.g. "it holds an ext4
	// filesystem (signature at byte 1080)"; several reasons are joined by "; ".
	Reason string
	// Override is the flag that would override this refusal, "" when nothing
	// may override it.
	Override string
	// IDs names each reason found, from Refusals (the docs' list).
	IDs []RefusalID
}

func (e *SafetyError) Error() string {
	verb := "use"
	if e.Write {
		verb = "write to"
	}
	msg := fmt.Sprintf("refusing to %s %s: %s", verb, e.Path, e.Reason)
	switch {
	case e.Override != "":
		msg += fmt.Sprintf(" (%s overrides this)", e.Override)
	case e.Write:
		// The flag a user reaches for first: say that it would not help.
		msg += " (" + NoOverride + ")"
	}
	return msg
}

// NoOverride ends a refusal to write that no flag lifts.
const NoOverride = "--allow-destructive does not lift this refusal"

// InputError is bad input: a path that is not a usable target, or sizes and
// alignments that do not fit it. Nothing has been created or changed when
// Open returns one.
type InputError struct {
	Path string
	Msg  string
	Err  error // the underlying error, if any
}

func (e *InputError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("target %s: %s: %v", e.Path, e.Msg, e.Err)
	}
	return fmt.Sprintf("target %s: %s", e.Path, e.Msg)
}

func (e *InputError) Unwrap() error { return e.Err }

// IsBadInput reports whether err is a refusal or bad input (exit status 2)
// rather than a failure of the system (I/O error, out of space while filling).
func IsBadInput(err error) bool {
	var s *SafetyError
	var in *InputError
	return errors.As(err, &s) || errors.As(err, &in)
}

// ErrUnsupported is returned by Open where O_DIRECT targets are not
// implemented (every system but Linux).
var ErrUnsupported = fmt.Errorf("target: O_DIRECT targets are supported only on Linux: %w", errors.ErrUnsupported)

func inputErr(path, format string, args ...any) *InputError {
	return &InputError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// geometry is what Open checks the options against.
type geometry struct {
	logicalBlock int64
	memAlign     int64
	pageSize     int64
}

// checkSigns refuses negative sizes, first of all.
func checkSigns(path string, o Options) error {
	if o.Align < 0 || o.MaxBlock < 0 || o.Region < 0 || o.DefaultFileSize < 0 {
		return inputErr(path, "negative size in options (align %d, max block %d, region %d, default file size %d)",
			o.Align, o.MaxBlock, o.Region, o.DefaultFileSize)
	}
	return nil
}

// checkAlign normalises Align and MaxBlock (0: defaults) and checks them
// against the logical block size and the memory alignment.
func checkAlign(path string, o *Options, g geometry) error {
	if err := checkSigns(path, *o); err != nil {
		return err
	}
	if g.memAlign > g.pageSize && !o.Buffered {
		return inputErr(path, "the kernel wants direct-I/O buffers aligned to %d bytes, more than a page (%d)", g.memAlign, g.pageSize)
	}
	if o.Align == 0 {
		o.Align = g.logicalBlock
	}
	if o.Buffered {
		g.logicalBlock = 1 // the page cache takes any offset and length
	}
	if o.MaxBlock == 0 {
		o.MaxBlock = o.Align
	}
	if o.Align%g.logicalBlock != 0 {
		return inputErr(path, "alignment %s is not a multiple of the logical block size %s", workload.FormatSize(o.Align), workload.FormatSize(g.logicalBlock))
	}
	if o.MaxBlock%g.logicalBlock != 0 {
		return inputErr(path, "transfer size %s is not a multiple of the logical block size %s", workload.FormatSize(o.MaxBlock), workload.FormatSize(g.logicalBlock))
	}
	if o.MaxBlock < o.Align {
		return inputErr(path, "largest transfer %s is smaller than the alignment %s", workload.FormatSize(o.MaxBlock), workload.FormatSize(o.Align))
	}
	return nil
}

// checkRegion resolves the region for a target of size bytes (region 0: the
// whole target rounded down to the alignment) and checks it.
func checkRegion(path string, region, size int64, o Options) (int64, error) {
	if size == 0 {
		return 0, inputErr(path, "is empty (0 bytes)")
	}
	if region == 0 {
		region = size / o.Align * o.Align
		if region == 0 {
			return 0, inputErr(path, "size %s is smaller than the alignment %s", workload.FormatSize(size), workload.FormatSize(o.Align))
		}
	}
	if region > size {
		return 0, inputErr(path, "region %s is larger than the target's size %s", workload.FormatSize(region), workload.FormatSize(size))
	}
	if region%o.Align != 0 {
		return 0, inputErr(path, "region %s is not a multiple of the alignment %s", workload.FormatSize(region), workload.FormatSize(o.Align))
	}
	if region < o.MaxBlock {
		return 0, inputErr(path, "region %s is smaller than the largest transfer %s", workload.FormatSize(region), workload.FormatSize(o.MaxBlock))
	}
	return region, nil
}

// joinReasons joins findings into one SafetyError reason.
func joinReasons(reasons []string) string { return strings.Join(reasons, "; ") }
