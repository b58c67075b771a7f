#!/usr/bin/python3
"""A FUSE passthrough whose every fsync sleeps first: a slow-flush device.

    slowflush.py ROOT MOUNTPOINT DELAYFILE

mounts ROOT at MOUNTPOINT. Every fsync and fdatasync of a file under
MOUNTPOINT sleeps for the number of milliseconds DELAYFILE holds (read at
each call, so a test changes the delay without remounting; a missing or
empty file is 0), then calls the same fsync/fdatasync on the real file.
Everything else is passed through unchanged.

A loop device over a file here is a block device whose every flush (the
REQ_PREFLUSH a journal commit or an fdatasync sends: the loop driver turns
it into vfs_fsync of its backing file) takes that much longer: the kernel
has no dm-delay here. It serves test/check_etcd_test.go, run by Debian's
/usr/bin/python3 with python3-fusepy (import fusepy). Runs in the
foreground until unmounted (fusermount -u / umount MOUNTPOINT).
"""
import errno
import os
import sys
import time

from fusepy import FUSE, FuseOSError, Operations


class SlowFlush(Operations):
    def __init__(self, root, delayfile):
        self.root = os.path.realpath(root)
        self.delayfile = delayfile

    def _full(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def _delay(self):
        try:
            with open(self.delayfile) as f:
                text = f.read().strip()
        except OSError:
            return 0.0
        return float(text) / 1000.0 if text else 0.0

    # --- the one change: a slower flush -----------------------------------
    def fsync(self, path, datasync, fh):
        d = self._delay()
        if d > 0:
            time.sleep(d)
        if datasync:
            os.fdatasync(fh)
        else:
            os.fsync(fh)
        return 0

    # --- passthrough -------------------------------------------------------
    def getattr(self, path, fh=None):
        try:
            st = os.lstat(self._full(path))
        except OSError as e:
            raise FuseOSError(e.errno)
        return {k: getattr(st, k) for k in (
            "st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime",
            "st_nlink", "st_size", "st_uid", "st_blocks")}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._full(path))

    def statfs(self, path):
        s = os.statvfs(self._full(path))
        return {k: getattr(s, k) for k in (
            "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail",
            "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def open(self, path, flags):
        return os.open(self._full(path), flags)

    def create(self, path, mode, fi=None):
        return os.open(self._full(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        return os.pwrite(fh, data, offset)

    def truncate(self, path, length, fh=None):
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            os.truncate(self._full(path), length)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        os.close(fh)
        return 0

    def unlink(self, path):
        os.unlink(self._full(path))

    def chmod(self, path, mode):
        os.chmod(self._full(path), mode)

    def chown(self, path, uid, gid):
        os.chown(self._full(path), uid, gid)

    def utimens(self, path, times=None):
        os.utime(self._full(path), times)

    def mkdir(self, path, mode):
        os.mkdir(self._full(path), mode)

    def rmdir(self, path):
        os.rmdir(self._full(path))

    def rename(self, old, new):
        os.rename(self._full(old), self._full(new))

    def fallocate(self, path, mode, offset, length, fh):
        raise FuseOSError(errno.EOPNOTSUPP)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: slowflush.py ROOT MOUNTPOINT DELAYFILE")
    FUSE(SlowFlush(sys.argv[1], sys.argv[3]), sys.argv[2],
         foreground=True, nothreads=False, allow_other=True, big_writes=True)
