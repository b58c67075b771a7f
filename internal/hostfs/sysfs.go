package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// The block devices of sysfs. A name is a kernel name ("sda", "nvme0n1p2",
// "loop3", "dm-0"); every read is of a file the kernel writes and bounded
// by LimitAttr. Nothing here asks a filesystem other than sysfs.

// BlockDir is the sysfs directory of block device name, links resolved
// (/sys/devices/.../block/sda/sda1 for a partition).
func (h *Host) BlockDir(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return "", fmt.Errorf("bad block device name %q", name)
	}
	return filepath.EvalSymlinks(h.SysPath("class", "block", name))
}

// BlockAttr is the text of attribute attr ("size", "queue/rotational",
// "loop/backing_file") of block device name, white space trimmed.
func (h *Host) BlockAttr(name, attr string) (string, error) {
	dir, err := h.BlockDir(name)
	if err != nil {
		return "", err
	}
	return ReadText(filepath.Join(dir, attr), LimitAttr)
}

// BlockAttrUint is a numeric attribute of block device name.
func (h *Host) BlockAttrUint(name, attr string) (uint64, error) {
	s, err := h.BlockAttr(name, attr)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s of %s: %w", attr, name, err)
	}
	return v, nil
}

// BlockDevNum is the device number of block device name (its dev
// attribute).
func (h *Host) BlockDevNum(name string) (DevNum, error) {
	s, err := h.BlockAttr(name, "dev")
	if err != nil {
		return DevNum{}, err
	}
	return ParseDevNum(s)
}

// BlockName is the kernel name of block device d, from /sys/dev/block;
// false when sysfs has none (the anonymous device of a btrfs, tmpfs or
// FUSE mount).
func (h *Host) BlockName(d DevNum) (string, bool) {
	p, err := filepath.EvalSymlinks(h.SysPath("dev", "block", d.String()))
	if err != nil {
		return "", false
	}
	return filepath.Base(p), true
}

// BlockDevices lists the whole disks of /sys/block ("sda", "loop0",
// "dm-0"; partitions are under their disk's directory).
func (h *Host) BlockDevices() ([]string, error) {
	return ReadDirNames(h.SysPath("block"))
}

// IsPartition says whether block device name is a partition.
func (h *Host) IsPartition(name string) bool {
	dir, err := h.BlockDir(name)
	if err != nil {
		return false
	}
	_, err = ReadText(filepath.Join(dir, "partition"), LimitAttr)
	return err == nil
}

// Holders lists what the kernel stacks on block device name
// (device-mapper, md, bcache: its holders directory); Slaves what name is
// stacked on (a dm or md device's members).
func (h *Host) Holders(name string) ([]string, error) { return h.links(name, "holders") }

// Slaves: see Holders.
func (h *Host) Slaves(name string) ([]string, error) { return h.links(name, "slaves") }

func (h *Host) links(name, sub string) ([]string, error) {
	dir, err := h.BlockDir(name)
	if err != nil {
		return nil, err
	}
	names, err := ReadDirNames(filepath.Join(dir, sub))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return names, err
}

// ParseScheduler reads a queue/scheduler file: the schedulers the kernel
// offers for the queue, in its order, and the active one — the one in
// brackets ("none [mq-deadline] kyber bfq"), or the only one listed
// ("none", a queue that offers no other, which cannot be switched:
// tunable false). Without brackets among several, the active one is not
// known ("").
func ParseScheduler(text string) (current string, offered []string, tunable bool) {
	for _, f := range strings.Fields(text) {
		if n, ok := strings.CutPrefix(f, "["); ok {
			n = strings.TrimSuffix(n, "]")
			current, tunable = n, true
			f = n
		}
		offered = append(offered, f)
	}
	if !tunable && len(offered) == 1 {
		current = offered[0]
	}
	return current, offered, tunable
}
