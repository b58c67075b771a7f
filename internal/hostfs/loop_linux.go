package hostfs

import (
	"context"

	"golang.org/x/sys/unix"
)

// LoopBacking is what backs a loop device, as the kernel says.
type LoopBacking struct {
	Dev, Ino uint64 // st_dev and st_ino of the backing file (or device node)
	Rdev     uint64 // the backing block device, 0 for a file
	Offset   uint64
	Limit    uint64
}

// LoopStatus asks loop device l, whose device node is node, what backs
// it (LOOP_GET_STATUS64). The kernel stats the backing file to answer, so
// the call waits on the backing file's filesystem: it runs through Calls
// with the Host's deadline, and what did not answer is named after l and
// the mount of its backing file (ms, may be nil).
func (h *Host) LoopStatus(ctx context.Context, l Loop, node string, ms Mounts) (LoopBacking, error) {
	key := "loop-status\x00" + l.Name + "\x00" + l.Dev.String() + "\x00" + l.BackingFile
	return Do(ctx, h.calls(), key, l.Describe(ms), h.deadline(), func() (LoopBacking, error) {
		if a, ok, err := viaHelper("loop", node); ok {
			return LoopBacking{Dev: a.Dev, Ino: a.Ino, Rdev: a.Rdev, Offset: a.Off, Limit: a.Lim}, err
		}
		return loopStatusHere(node)
	})
}

// loopStatusHere is LOOP_GET_STATUS64 of the loop device node, made by
// this process.
func loopStatusHere(node string) (LoopBacking, error) {
	fd, err := unix.Open(node, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return LoopBacking{}, err
	}
	defer unix.Close(fd)
	info, err := unix.IoctlLoopGetStatus64(fd)
	if err != nil {
		return LoopBacking{}, err
	}
	return LoopBacking{Dev: info.Device, Ino: info.Inode, Rdev: info.Rdevice, Offset: info.Offset, Limit: info.Sizelimit}, nil
}

// Stat stats path, which may lie on a filesystem that does not answer,
// through Calls with the Host's deadline; what names it in the error.
func (h *Host) Stat(ctx context.Context, path, what string) (unix.Stat_t, error) {
	return Do(ctx, h.calls(), "stat\x00"+path, what, h.deadline(), func() (unix.Stat_t, error) {
		var st unix.Stat_t
		if a, ok, err := viaHelper("stat", path); ok {
			st.Dev, st.Ino, st.Rdev, st.Mode, st.Size = a.Dev, a.Ino, a.Rdev, a.Mode, a.Size
			return st, err
		}
		err := unix.Stat(path, &st)
		return st, err
	})
}
