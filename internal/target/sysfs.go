package target

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// blockDev is a block device as sysfs names it.
type blockDev struct {
	Name         string
	Major, Minor uint32
}

// blockFamily is a block device with its relatives: the whole disk it is a
// partition of, and that disk's partitions. A write to any member can
// destroy what another member holds, so the safety checks look at them all.
type blockFamily struct {
	Self       blockDev
	Disk       *blockDev  // the whole disk when Self is a partition
	Partitions []blockDev // the partitions of the whole disk (Self's own when Self is a disk)
}

// Members is Self, the disk and every partition, without repeats.
func (f blockFamily) Members() []blockDev {
	out := []blockDev{f.Self}
	if f.Disk != nil {
		out = append(out, *f.Disk)
	}
	for _, p := range f.Partitions {
		if p.Name != f.Self.Name {
			out = append(out, p)
		}
	}
	return out
}

// Overlaps is Self and the members whose bytes overlap Self's: a
// partition and its whole disk, or a whole disk and its partitions. A
// sibling partition is left out: writing one partition cannot reach what
// another holds (mkfs on sdb2 while sdb1 is mounted is ordinary work).
func (f blockFamily) Overlaps() []blockDev {
	if f.Disk != nil {
		return []blockDev{f.Self, *f.Disk}
	}
	return f.Members()
}

func sysRootOr(sysRoot string) string {
	if sysRoot == "" {
		return "/sys"
	}
	return sysRoot
}

// devName returns the kernel name of block device maj:min, or "" when sysfs
// has none (an anonymous device such as btrfs's or tmpfs's st_dev).
func devName(sysRoot string, maj, min uint32) string {
	p, err := filepath.EvalSymlinks(filepath.Join(sysRootOr(sysRoot), "dev", "block", fmt.Sprintf("%d:%d", maj, min)))
	if err != nil {
		return ""
	}
	return filepath.Base(p)
}

// blockDir is the sysfs directory of block device name.
func blockDir(sysRoot, name string) (string, error) {
	if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return "", fmt.Errorf("bad block device name %q", name)
	}
	return filepath.EvalSymlinks(filepath.Join(sysRootOr(sysRoot), "class", "block", name))
}

func readBlockDev(dir string) (blockDev, error) {
	b, err := hostfs.ReadText(filepath.Join(dir, "dev"), hostfs.LimitAttr)
	if err != nil {
		return blockDev{}, err
	}
	d, err := hostfs.ParseDevNum(b)
	if err != nil {
		return blockDev{}, fmt.Errorf("%s: %w", dir, err)
	}
	return blockDev{Name: filepath.Base(dir), Major: d.Major, Minor: d.Minor}, nil
}

func isPartitionDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "partition"))
	return err == nil
}

// partitionsIn lists the partitions of the disk whose sysfs directory is dir.
func partitionsIn(dir string) ([]blockDev, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var parts []blockDev
	for _, e := range ents {
		sub := filepath.Join(dir, e.Name())
		if !e.IsDir() || !isPartitionDir(sub) {
			continue
		}
		p, err := readBlockDev(sub)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// readFamily describes block device name and its relatives from sysfs.
func readFamily(sysRoot, name string) (blockFamily, error) {
	dir, err := blockDir(sysRoot, name)
	if err != nil {
		return blockFamily{}, err
	}
	self, err := readBlockDev(dir)
	if err != nil {
		return blockFamily{}, err
	}
	fam := blockFamily{Self: self}
	diskDir := dir
	if isPartitionDir(dir) {
		diskDir = filepath.Dir(dir)
		disk, err := readBlockDev(diskDir)
		if err != nil {
			return blockFamily{}, fmt.Errorf("disk of partition %s: %w", name, err)
		}
		fam.Disk = &disk
	}
	if fam.Partitions, err = partitionsIn(diskDir); err != nil {
		return blockFamily{}, err
	}
	return fam, nil
}

// holders lists what the kernel stacks on block device name (device-mapper,
// md, bcache): the entries of its holders directory.
func holders(sysRoot, name string) ([]string, error) {
	dir, err := blockDir(sysRoot, name)
	if err != nil {
		return nil, err
	}
	names, err := hostfs.ReadDirNames(filepath.Join(dir, "holders"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return names, err
}

// sysLogicalBlock is the logical block size of block device name (a
// partition's is its disk's), or 0 when sysfs does not say.
func sysLogicalBlock(sysRoot, name string) int64 {
	dir, err := blockDir(sysRoot, name)
	if err != nil {
		return 0
	}
	if isPartitionDir(dir) {
		dir = filepath.Dir(dir)
	}
	b, err := hostfs.ReadText(filepath.Join(dir, "queue", "logical_block_size"), hostfs.LimitAttr)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(b, 10, 64)
	if err != nil || v <= 0 {
		return 0
	}
	return v
}

// sysSize is the size in bytes of block device name (sysfs counts 512-byte
// sectors whatever the logical block size), or -1 when sysfs does not say.
func sysSize(sysRoot, name string) int64 {
	dir, err := blockDir(sysRoot, name)
	if err != nil {
		return -1
	}
	b, err := hostfs.ReadText(filepath.Join(dir, "size"), hostfs.LimitAttr)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(b, 10, 64)
	if err != nil {
		return -1
	}
	return n * 512
}
