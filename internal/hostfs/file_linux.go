package hostfs

import (
	"context"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FileInfo is what the kernel says of a file and of its filesystem
// without reading the file's data: its size and the blocks allocated to
// it, how many extents map it, and its filesystem's type and block size.
type FileInfo struct {
	Dev, Ino uint64
	Rdev     uint64
	Mode     uint32
	Size     int64
	// Blocks counts the 512-byte units allocated (st_blocks): fewer than
	// the size needs is a sparse file, holes the first write fills.
	Blocks int64
	// Extents is the number of extents that map the file (FIEMAP, asked
	// for the count only); -1 when the filesystem does not say (tmpfs,
	// FUSE) or the file is not a regular file.
	Extents int64
	FSType  int64 // statfs f_type, the filesystem's magic number
	FSBlock int64 // statfs f_bsize: the filesystem's block size
	// MountID is the id of the mount the file was reached through
	// (statx's stx_mnt_id; Mounts.ByID), 0 when the kernel does not say.
	MountID int
}

// FileInfo asks about the file at path through Calls with the Host's
// deadline: the open, the stat, the statfs and FIEMAP all ask the file's
// filesystem (a FUSE daemon, an NFS server), which may not answer. what
// names the file in the error.
func (h *Host) FileInfo(ctx context.Context, path, what string) (FileInfo, error) {
	return Do(ctx, h.calls(), "file\x00"+path, what, h.deadline(), func() (FileInfo, error) {
		if a, ok, err := viaHelper("file", path); ok {
			return FileInfo{Dev: a.Dev, Ino: a.Ino, Rdev: a.Rdev, Mode: a.Mode, Size: a.Size, Blocks: a.Blocks,
				Extents: a.Extents, FSType: a.FSType, FSBlock: a.FSBlock, MountID: a.MountID}, err
		}
		return fileInfoHere(path)
	})
}

// fsIocFiemap is FS_IOC_FIEMAP, _IOWR('f', 11, struct fiemap): x/sys/unix
// does not define it.
const fsIocFiemap = 0xC020660B

// fiemapHead is struct fiemap without its extents: with fm_extent_count
// 0 the kernel only counts the extents (fm_mapped_extents), copying none.
type fiemapHead struct {
	Start, Length uint64
	Flags         uint32
	Mapped        uint32
	Count         uint32
	Reserved      uint32
}

// fileInfoHere is FileInfo made by this process. The file is opened
// read-only and non-blocking (a FIFO named as a target must not hold the
// call) and nothing is read from it; FIEMAP without FIEMAP_FLAG_SYNC
// writes nothing back.
func fileInfoHere(path string) (FileInfo, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return FileInfo{}, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return FileInfo{}, err
	}
	fi := FileInfo{Dev: st.Dev, Ino: st.Ino, Rdev: st.Rdev, Mode: st.Mode, Size: st.Size, Blocks: st.Blocks, Extents: -1}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return FileInfo{}, err
	}
	fi.FSType, fi.FSBlock = int64(sfs.Type), int64(sfs.Bsize)
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &stx) == nil && stx.Mask&unix.STATX_MNT_ID != 0 {
		fi.MountID = int(stx.Mnt_id)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		fm := fiemapHead{Length: ^uint64(0)}
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFiemap, uintptr(unsafe.Pointer(&fm))); errno == 0 {
			fi.Extents = int64(fm.Mapped)
		}
	}
	return fi, nil
}
