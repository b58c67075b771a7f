package target

import "golang.org/x/sys/unix"

// DeviceName is the kernel's name of the block device whose number is dev
// (a stat's st_dev: the device a file or directory is on), for
// ReadDiskStats; "" when sysfs has none (btrfs, NFS, tmpfs).
func DeviceName(dev uint64) string {
	return devName("", unix.Major(dev), unix.Minor(dev))
}
