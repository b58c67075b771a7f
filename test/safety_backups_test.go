package test

import (
	bin "encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Issue 32 items 5 and 6, end to end through the binary: data whose first
// copy of metadata was wiped, made and wiped with the real tools, on a
// loop device (and as a regular file), is refused with
// --allow-destructive, naming the copy and its offset; the device's bytes
// are unchanged; and the format's own recovery tool, the referee, still
// finds the data. internal/blkid's backup*.go and starts.go say where each
// copy lies and which tool reads it.

// backupCase is one class: make makes the data on path and wipes what the
// case wipes, returning what the refusal must say; referee shows the data
// is still there for the format's own tool.
type backupCase struct {
	name    string
	size    int64
	tools   []string
	device  bool // a block device only (pvcreate)
	make    func(t *testing.T, path string) []string
	referee func(t *testing.T, path string)
}

// runAllowFail runs a command whose exit status is the case's business
// (a referee in no-modify mode exits non-zero when it would repair), and
// returns its output and status.
func runAllowFail(t *testing.T, name string, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	require.NoError(t, err, "%s %s", name, strings.Join(args, " "))
	return string(out), 0
}

// wipeAll is what a careless administrator runs: wipefs -a, which erases
// every magic libblkid finds (-f: an image file's nested tables too).
func wipeAll(t *testing.T, path string) {
	t.Helper()
	run(t, "wipefs", "-a", "-f", path)
}

// zeroAt zeroes n bytes at off of path.
func zeroAt(t *testing.T, path string, off int64, n int) {
	t.Helper()
	writeAt(t, path, off, make([]byte, n))
}

// copyOf is a sparse copy of path's bytes in a file of the test's own, for
// a referee that repairs.
func copyOf(t *testing.T, path string) string {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy")
	run(t, "cp", "--sparse=always", path, cp)
	return cp
}

// extCopiesOf are the blocks dumpe2fs says hold superblock copies on path,
// and its block size.
func extCopiesOf(t *testing.T, path string) ([]int64, int64) {
	t.Helper()
	out := run(t, "dumpe2fs", path)
	var blocks []int64
	for _, m := range regexp.MustCompile(`Backup superblock at (\d+)`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		blocks = append(blocks, n)
	}
	m := regexp.MustCompile(`Block size:\s+(\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "%s", out)
	bs, _ := strconv.ParseInt(m[1], 10, 64)
	require.NotEmpty(t, blocks, "%s", out)
	return blocks, bs
}

// extCase is mkfs.ext4 args on a device of size bytes, the primary wiped
// and, with group1, group 1's copy too: e2fsck -b reads the next copy.
func extCase(name string, size int64, group1 bool, args ...string) backupCase {
	var copyBlock, bs int64
	return backupCase{name: name, size: size, tools: []string{"mkfs.ext4", "dumpe2fs", "wipefs", "e2fsck"},
		make: func(t *testing.T, path string) []string {
			run(t, "mkfs.ext4", append(append([]string{"-q", "-F"}, args...), path)...)
			var copies []int64
			copies, bs = extCopiesOf(t, path)
			wipeAll(t, path)
			copyBlock = copies[0]
			if group1 {
				require.GreaterOrEqual(t, len(copies), 2)
				zeroAt(t, path, copies[0]*bs, 1024)
				copyBlock = copies[1]
			}
			return []string{fmt.Sprintf("(TYPE=ext4, signature at byte %d)", copyBlock*bs+0x38), fmt.Sprintf("e2fsck -b %d -B %d reads it", copyBlock, bs)}
		},
		referee: func(t *testing.T, path string) {
			out, code := runAllowFail(t, "e2fsck", "-n", "-b", fmt.Sprint(copyBlock), "-B", fmt.Sprint(bs), path)
			require.Contains(t, []int{0, 4}, code, "%s", out) // 4: the copy's group checksums are older than the primary's
			require.Regexp(t, `\d+/\d+ files .* \d+/\d+ blocks`, out)
		}}
}

func backupCases() []backupCase {
	var ag int64
	return []backupCase{
		{name: "xfs", size: 320 << 20, tools: []string{"mkfs.xfs", "wipefs", "xfs_repair"},
			make: func(t *testing.T, path string) []string {
				run(t, "mkfs.xfs", "-q", "-f", path)
				sb := readAt(t, path, 0, 512)
				ag = int64(bin.BigEndian.Uint32(sb[84:])) * int64(bin.BigEndian.Uint32(sb[4:]))
				wipeAll(t, path)
				return []string{fmt.Sprintf("an XFS filesystem (the secondary superblock of its allocation group 1; xfs_repair finds it) (TYPE=xfs, signature at byte %d)", ag)}
			},
			referee: func(t *testing.T, path string) {
				out, _ := runAllowFail(t, "xfs_repair", append(fileFlag(path, "-f"), "-n", path)...)
				require.Contains(t, out, "verified secondary superblock")
			}},
		{name: "ntfs", size: 64 << 20, tools: []string{"mkfs.ntfs", "wipefs", "ntfsfix"},
			make: func(t *testing.T, path string) []string {
				run(t, "mkfs.ntfs", "-Q", "-F", "-q", path)
				wipeAll(t, path)
				return []string{fmt.Sprintf("its backup boot sector, in the last sector; ntfsfix restores the boot sector from it) (TYPE=ntfs, signature at byte %d)", 64<<20-512+3)}
			},
			referee: func(t *testing.T, path string) {
				out, _ := runAllowFail(t, "ntfsfix", "-n", path)
				require.Contains(t, out, "The alternate bootsector is usable")
			}},
		{name: "vfat -F 32", size: 64 << 20, tools: []string{"mkfs.vfat", "wipefs", "fsck.vfat"},
			make: func(t *testing.T, path string) []string {
				run(t, "mkfs.vfat", "-F", "32", path)
				wipeAll(t, path)
				return []string{"a FAT32 filesystem (its backup boot sector, sector 6 of 512 bytes; fsck.fat copies it back over the boot sector) (TYPE=vfat, signature at byte 3072)"}
			},
			referee: func(t *testing.T, path string) {
				out, _ := runAllowFail(t, "fsck.vfat", "-n", path)
				require.Contains(t, out, "There are differences between boot sector and its backup")
				require.Regexp(t, `\d+ files, \d+/\d+ clusters`, out)
			}},
		{name: "vfat -F 32, boot sector zeroed", size: 64 << 20, tools: []string{"mkfs.vfat", "fsck.vfat"},
			make: func(t *testing.T, path string) []string {
				run(t, "mkfs.vfat", "-F", "32", path)
				zeroAt(t, path, 0, 512)
				return []string{"(TYPE=vfat, signature at byte 3072)"}
			},
			referee: func(t *testing.T, path string) {
				// fsck.fat reads only the boot sector; restoring it from
				// sector 6, as testdisk and chkdsk do, gives the filesystem back.
				cp := copyOf(t, path)
				writeAt(t, cp, 0, readAt(t, cp, 6*512, 512))
				out, code := runAllowFail(t, "fsck.vfat", "-n", cp)
				require.Equal(t, 0, code, "%s", out)
				require.Regexp(t, `\d+ files, \d+/\d+ clusters`, out)
			}},
		{name: "exfat", size: 64 << 20, tools: []string{"mkfs.exfat", "wipefs", "fsck.exfat"},
			make: func(t *testing.T, path string) []string {
				run(t, "mkfs.exfat", path)
				wipeAll(t, path)
				return []string{"its backup boot region, from sector 12 of 512 bytes; fsck.exfat restores the boot region from it) (TYPE=exfat, signature at byte 6147)"}
			},
			referee: func(t *testing.T, path string) {
				// -n gives up at the boot sector; -b -y restores the boot
				// region from its backup, on a copy.
				cp := copyOf(t, path)
				out, code := runAllowFail(t, "fsck.exfat", "-b", "-y", cp)
				require.Contains(t, out, "restore the region from backup", "%s", out)
				require.Contains(t, out, "clean", "exit %d: %s", code, out)
			}},
		{name: "jfs", size: 64 << 20, tools: []string{"mkfs.jfs", "wipefs", "fsck.jfs"},
			make: func(t *testing.T, path string) []string {
				run(t, "mkfs.jfs", "-q", path)
				wipeAll(t, path)
				return []string{"a JFS filesystem (its secondary superblock, at 60 KiB; fsck.jfs uses it when the primary is bad) (TYPE=jfs, signature at byte 61440)"}
			},
			referee: func(t *testing.T, path string) {
				out, _ := runAllowFail(t, "fsck.jfs", "-n", path)
				require.Contains(t, out, "Primary superblock is corrupt")
				require.Contains(t, out, "Phase 5 - Check Connectivity")
			}},
		{name: "ocfs2", size: 1200 << 20, tools: []string{"mkfs.ocfs2", "wipefs", "fsck.ocfs2"},
			make: func(t *testing.T, path string) []string {
				run(t, "mkfs.ocfs2", "-q", "-F", "-M", "local", path)
				wipeAll(t, path)
				return []string{"its backup superblock 1, at 1 GiB; fsck.ocfs2 -r 1 reads it) (TYPE=ocfs2, signature at byte 1073741824)"}
			},
			referee: func(t *testing.T, path string) {
				out, _ := runAllowFail(t, "fsck.ocfs2", "-n", "-r", "1", path)
				require.Contains(t, out, fmt.Sprintf("Recover superblock information from backup block#%d", (1<<30)/4096))
			}},
		extCase("ext4 -g 4096", 64<<20, false, "-g", "4096"),
		extCase("ext4 -O bigalloc", 3<<30, false, "-O", "bigalloc"),
		extCase("ext4 -b 4096, primary and group 1's copy wiped", 512<<20, true, "-b", "4096"),
		{name: "LVM2, label sector zeroed", size: 64 << 20, tools: []string{"pvcreate", "vgcreate", "pvck"}, device: true,
			make: func(t *testing.T, path string) []string {
				vg := fmt.Sprintf("ioprobesigs%d", os.Getpid())
				lvm(t, "pvcreate", "-ff", "-y", path)
				lvm(t, "vgcreate", vg, path)
				zeroAt(t, path, 512, 512)
				return []string{fmt.Sprintf("an LVM2 physical volume whose label is gone (its metadata area at 4096 describes volume group %q; pvck --dump metadata_search finds it) (TYPE=LVM2_member, signature at byte 4100)", vg)}
			},
			referee: func(t *testing.T, path string) {
				out, _ := runAllowFail(t, "pvck", "--config", "devices { hints = \"none\" }", "--dump", "metadata_search", path)
				require.Regexp(t, fmt.Sprintf(`metadata at 4608 .* vg ioprobesigs%d `, os.Getpid()), out)
			}},
	}
}

// fileFlag is flag when path is a regular file (xfs_repair -f).
func fileFlag(path, flag string) []string {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return []string{flag}
	}
	return nil
}

// readAt reads n bytes at off of path.
func readAt(t *testing.T, path string, off int64, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	p := make([]byte, n)
	_, err = f.ReadAt(p, off)
	require.NoError(t, err)
	return p
}

// TestBackupMetadataRefused: item 5. Each class on a loop device and as a
// regular file, written with --allow-destructive: refused, naming the
// copy; nothing written; the referee finds the data.
func TestBackupMetadataRefused(t *testing.T) {
	besideOthers(t)
	for _, c := range backupCases() {
		t.Run(c.name, func(t *testing.T) {
			needTools(t, append([]string{"losetup", "wipefs"}, c.tools...)...)
			dev := randomLoop(t, c.size)
			refusedIntact(t, dev, c)
		})
		if c.device {
			continue
		}
		t.Run(c.name+" as a file", func(t *testing.T) {
			needTools(t, append([]string{"wipefs"}, c.tools...)...)
			refusedIntact(t, randomFile(t, c.size), c)
		})
	}
}

// refusedIntact makes c's data on path, runs a write there and checks the
// refusal, the bytes and the referee.
func refusedIntact(t *testing.T, path string, c backupCase) {
	t.Helper()
	wants := c.make(t, path)
	before := sha256Dev(t, path)
	o := writeRun(t, path)
	for _, w := range wants {
		noFlagOffered(t, o, w)
	}
	require.Equal(t, before, sha256Dev(t, path), "the bytes changed")
	c.referee(t, path)
}

// TestWipedPartitionTableRefused: item 6. A GPT disk whose first partition
// holds ext4, its table wiped with `wipefs -a`: the filesystem at 1 MiB is
// refused, the disk's bytes unchanged, and `blkid -p -O 1048576` still
// finds it.
func TestWipedPartitionTableRefused(t *testing.T) {
	needTools(t, "losetup", "sgdisk", "partx", "mkfs.ext4", "wipefs", "blkid")
	dev := attach(t, randomFile(t, 64<<20), "-P")
	run(t, "sgdisk", "-o", "-n", "1:2048:0", dev)
	settle()
	run(t, "partx", "-u", dev) // the kernel's re-read may have lost a race with udev
	settle()
	run(t, "mkfs.ext4", "-q", "-F", dev+"p1")
	run(t, "wipefs", "-a", dev)
	settle()
	parts, err := filepath.Glob(dev + "p*")
	require.NoError(t, err)
	require.Empty(t, parts, "wipefs -a re-read the (now empty) table")

	before := sha256Dev(t, dev)
	o := writeRun(t, dev)
	noFlagOffered(t, o, "an ext4 filesystem at byte 1048576, where a partition would start (no partition table names it; blkid -p -O 1048576 finds it) (TYPE=ext4, signature at byte 1049656)")
	require.Equal(t, before, sha256Dev(t, dev), "the disk's bytes changed")
	require.Equal(t, "ext4\n", run(t, "blkid", "-p", "-O", "1048576", "-s", "TYPE", "-o", "value", dev), "the referee")
}

// TestDiskImagesRefused: item 7. qemu-img's images of a partitioned disk
// holding ext4, copied onto a loop device (and kept as files), are
// signatures: refused with --allow-destructive, bytes unchanged, and
// `qemu-img info` still names each.
func TestDiskImagesRefused(t *testing.T) {
	besideOthers(t)
	needTools(t, "losetup", "qemu-img", "sgdisk", "mkfs.ext4")
	raw := randomFile(t, 64<<20)
	zeroAt(t, raw, 0, 1<<20)
	run(t, "sgdisk", "-o", "-n", "1:2048:0", raw)
	run(t, "mkfs.ext4", "-q", "-F", "-E", "offset=1048576", raw, "32M")
	for _, c := range []struct{ format, want string }{
		{"qcow2", "a QEMU qcow2 disk image (TYPE=qcow2, signature at byte 0)"},
		{"vmdk", "a VMware VMDK disk image (sparse extent) (TYPE=vmdk, signature at byte 0)"},
		{"vdi", "a VirtualBox VDI disk image (TYPE=vdi, signature at byte 64)"},
		{"vhdx", "a VHDX disk image (TYPE=vhdx, signature at byte 0)"},
		{"vpc", "a VHD (Virtual PC) dynamic disk image (the copy of its footer) (TYPE=vpc, signature"},
	} {
		img := filepath.Join(t.TempDir(), "disk."+c.format)
		run(t, "qemu-img", "convert", "-O", c.format, raw, img)
		t.Run(c.format, func(t *testing.T) {
			dev := randomLoop(t, 64<<20)
			writeImage(t, dev, img)
			before := sha256Dev(t, dev)
			noFlagOffered(t, writeRun(t, dev), c.want)
			require.Equal(t, before, sha256Dev(t, dev), "the device's bytes changed")
			require.Contains(t, run(t, "qemu-img", "info", dev), "file format: "+c.format)
		})
		t.Run(c.format+" as a file", func(t *testing.T) {
			before := sha256Dev(t, img)
			noFlagOffered(t, writeRun(t, img), c.want)
			require.Equal(t, before, sha256Dev(t, img), "the file's bytes changed")
			require.Contains(t, run(t, "qemu-img", "info", img), "file format: "+c.format)
		})
	}
}
