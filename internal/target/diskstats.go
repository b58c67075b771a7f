package target

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// SectorSize is the unit of the sector counters in /sys/block/DEV/stat:
// always 512 bytes, whatever the device's logical block size.
const SectorSize = 512

// DiskStats is one reading of /sys/class/block/DEV/stat, the kernel's
// block-layer counters (Documentation/block/stat.rst). Times are in
// milliseconds. Kernels before 4.18 have no discard fields and kernels
// before 5.5 no flush fields; those read as 0.
type DiskStats struct {
	ReadOps        uint64 // read I/Os completed
	ReadMerges     uint64 // read I/Os merged with one already queued
	ReadSectors    uint64 // 512-byte sectors read
	ReadTicks      uint64 // ms spent waiting for reads
	WriteOps       uint64
	WriteMerges    uint64
	WriteSectors   uint64
	WriteTicks     uint64
	InFlight       uint64 // I/Os in flight now (a gauge, not a counter)
	IOTicks        uint64 // ms the device had I/O in flight
	QueueTicks     uint64 // ms of I/O in flight, weighted by the number in flight
	DiscardOps     uint64
	DiscardMerges  uint64
	DiscardSectors uint64
	DiscardTicks   uint64
	FlushOps       uint64
	FlushTicks     uint64
}

// ReadBytes is ReadSectors in bytes.
func (s DiskStats) ReadBytes() uint64 { return s.ReadSectors * SectorSize }

// WriteBytes is WriteSectors in bytes.
func (s DiskStats) WriteBytes() uint64 { return s.WriteSectors * SectorSize }

// Sub returns the counters' growth since prev (a counter that went
// backwards, as when the device was re-created, gives 0). InFlight is a
// gauge and keeps s's value.
func (s DiskStats) Sub(prev DiskStats) DiskStats {
	d := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return DiskStats{
		ReadOps: d(s.ReadOps, prev.ReadOps), ReadMerges: d(s.ReadMerges, prev.ReadMerges),
		ReadSectors: d(s.ReadSectors, prev.ReadSectors), ReadTicks: d(s.ReadTicks, prev.ReadTicks),
		WriteOps: d(s.WriteOps, prev.WriteOps), WriteMerges: d(s.WriteMerges, prev.WriteMerges),
		WriteSectors: d(s.WriteSectors, prev.WriteSectors), WriteTicks: d(s.WriteTicks, prev.WriteTicks),
		InFlight: s.InFlight,
		IOTicks:  d(s.IOTicks, prev.IOTicks), QueueTicks: d(s.QueueTicks, prev.QueueTicks),
		DiscardOps: d(s.DiscardOps, prev.DiscardOps), DiscardMerges: d(s.DiscardMerges, prev.DiscardMerges),
		DiscardSectors: d(s.DiscardSectors, prev.DiscardSectors), DiscardTicks: d(s.DiscardTicks, prev.DiscardTicks),
		FlushOps: d(s.FlushOps, prev.FlushOps), FlushTicks: d(s.FlushTicks, prev.FlushTicks),
	}
}

// ReadDiskStats reads SYSROOT/class/block/DEV/stat; sysRoot "" means "/sys".
// dev is a kernel block device name such as Target.Device.
func ReadDiskStats(sysRoot, dev string) (DiskStats, error) {
	if dev == "" || dev == "." || dev == ".." || strings.ContainsRune(dev, '/') {
		return DiskStats{}, fmt.Errorf("diskstats: bad device name %q", dev)
	}
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	b, err := hostfs.ReadFile(filepath.Join(sysRoot, "class", "block", dev, "stat"), hostfs.LimitAttr)
	if err != nil {
		return DiskStats{}, fmt.Errorf("diskstats: %w", err)
	}
	s, err := parseDiskStats(bytes.NewReader(b))
	if err != nil {
		return DiskStats{}, fmt.Errorf("diskstats %s: %w", dev, err)
	}
	return s, nil
}

// parseDiskStats parses the one line of a block device's stat file: 11, 15
// or 17 (or, on future kernels, more) unsigned decimal fields.
func parseDiskStats(r io.Reader) (DiskStats, error) {
	b, err := io.ReadAll(io.LimitReader(r, 4096))
	if err != nil {
		return DiskStats{}, err
	}
	f := strings.Fields(string(b))
	if len(f) < 11 {
		return DiskStats{}, fmt.Errorf("stat has %d fields, want at least 11", len(f))
	}
	var s DiskStats
	dst := []*uint64{
		&s.ReadOps, &s.ReadMerges, &s.ReadSectors, &s.ReadTicks,
		&s.WriteOps, &s.WriteMerges, &s.WriteSectors, &s.WriteTicks,
		&s.InFlight, &s.IOTicks, &s.QueueTicks,
		&s.DiscardOps, &s.DiscardMerges, &s.DiscardSectors, &s.DiscardTicks,
		&s.FlushOps, &s.FlushTicks,
	}
	for i, field := range f {
		v, err := strconv.ParseUint(field, 10, 64)
		if err != nil {
			return DiskStats{}, fmt.Errorf("stat field %d: %q is not an unsigned number", i+1, field)
		}
		if i < len(dst) {
			*dst[i] = v
		}
	}
	return s, nil
}

// MaxRequestBytes is the largest request the block layer sends device
// dev (its queue's max_sectors_kb; a partition's is its disk's): a
// larger I/O reaches the device as several requests. 0 when it cannot be
// read.
func MaxRequestBytes(sysRoot, dev string) int64 {
	if dev == "" || dev == "." || dev == ".." || strings.ContainsRune(dev, '/') {
		return 0
	}
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	base := filepath.Join(sysRoot, "class", "block", dev)
	// A partition's entry is a link into its disk's directory: ".." is
	// the disk once the kernel follows it (filepath.Join would drop it).
	for _, p := range []string{filepath.Join(base, "queue", "max_sectors_kb"), base + "/../queue/max_sectors_kb"} {
		v, err := hostfs.ReadText(p, hostfs.LimitAttr)
		if err != nil {
			continue
		}
		kb, err := strconv.ParseInt(v, 10, 64)
		if err != nil || kb <= 0 || kb > 1<<30 {
			return 0
		}
		return kb << 10
	}
	return 0
}

// FlushDisk is the device whose counters hold dev's flushes: the whole
// disk of a partition (a flush request is the disk's, and the block layer
// counts it on the disk, never on a partition: a partition's flush fields
// stay 0), dev itself otherwise. sysRoot "" means "/sys".
func FlushDisk(sysRoot, dev string) string {
	dir, err := blockDir(sysRoot, dev)
	if err != nil || !isPartitionDir(dir) {
		return dev
	}
	return filepath.Base(filepath.Dir(dir))
}
