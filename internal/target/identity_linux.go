package target

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DeviceKey names the storage that I/O to path reaches, so that a scheduler
// can keep two runs off one device: the kernel name of the whole disk
// ("nvme0n1" for a file on nvme0n1p2, for /dev/nvme0n1p1 and for
// /dev/nvme0n1 alike), or, for a file on a filesystem whose st_dev is not a
// block device in sysfs (btrfs, overlayfs, NFS), "dev MAJ:MIN" of that
// filesystem. A file that does not exist yet is looked up through its
// directory. It opens nothing and changes nothing.
func DeviceKey(path string) (string, error) {
	if path == "" {
		return "", inputErr(path, "empty path")
	}
	resolved, st, exists, err := resolve(path)
	if err != nil {
		return "", err
	}
	if !exists {
		if err := unix.Stat(filepath.Dir(resolved), &st); err != nil {
			return "", &InputError{Path: path, Msg: "cannot stat its directory", Err: err}
		}
	}
	dev := st.Dev
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		dev = st.Rdev
	}
	return deviceKey("", unix.Major(dev), unix.Minor(dev)), nil
}

// deviceKey is DeviceKey for device maj:min under sysRoot.
func deviceKey(sysRoot string, maj, min uint32) string {
	name := devName(sysRoot, maj, min)
	if name == "" {
		return fmt.Sprintf("dev %d:%d", maj, min)
	}
	if dir, err := blockDir(sysRoot, name); err == nil && isPartitionDir(dir) {
		return filepath.Base(filepath.Dir(dir))
	}
	return name
}
