#!/usr/bin/python3
"""A FUSE passthrough that stops answering on command: a hung NFS server.

    stallfs.py ROOT MOUNTPOINT CONTROLFILE

mounts ROOT at MOUNTPOINT. Before every operation on the filesystem
(getattr, lookup, open, read, write, statfs, ...: all of them but the
mount's own init and destroy) it reads CONTROLFILE, a file outside the
mount, and does what it says:

    (missing, empty or 0)  answer at once
    N [OP ...]             sleep N milliseconds first
    hang [OP ...]          wait, without answering, until CONTROLFILE no
                           longer says so (checked every 20 ms)

where OP names the operations it applies to (getattr, read, write, ...;
none: every one), then passes the operation through to the real file
under ROOT. It mounts with attr_timeout=0 and entry_timeout=0, so that
every stat reaches the daemon (no attribute answered from the kernel's
cache), and with direct_io, so that every read and write does (no page
cache): once CONTROLFILE says hang, the next stat, read or write of any
file here blocks, as it does on a server that went away.

A loop device over a file here is what issue 31 is about: the kernel
stats a loop device's backing file to answer LOOP_GET_STATUS64, and
reading or writing the loop device reads and writes the file.

A hang never outlives the process that started the passthrough (the
test): when that process is gone (this one's parent changes), every
hang is released and no new one starts, the loop devices over files
here are detached and the mount is unmounted, so that nothing is left
that waits on a daemon nobody will release (which would hold up every
program that asks the kernel about loop devices, until a reboot). A
hang also ends by itself after MAXHANG seconds (60), for the same
reason.

Each operation that waits appends one line to CONTROLFILE.log ("hang
getattr /img pid 812", "release getattr /img pid 812": the process the
kernel asks for, 0 for the kernel's own threads), so a test can tell
that the kernel is waiting on the daemon, and for whom. Runs in the foreground, multithreaded,
until unmounted. Served by Debian's /usr/bin/python3 with python3-fusepy.
"""
import errno
import os
import subprocess
import sys
import threading
import time

from fusepy import FUSE, FuseOSError, Operations, fuse_get_context

_log_lock = threading.Lock()


MAXHANG = 60.0


class StallFS(Operations):
    def __init__(self, root, mountpoint, control):
        self.root = os.path.realpath(root)
        self.mountpoint = os.path.realpath(mountpoint)
        self.control = control
        self.log = control + ".log"
        self.parent = os.getppid()
        self.orphaned = threading.Event()

    def init(self, path):
        threading.Thread(target=self._watch_parent, daemon=True).start()

    def _watch_parent(self):
        """The dead man's switch: see the module's doc."""
        while os.getppid() == self.parent:
            time.sleep(0.1)
        self.orphaned.set()
        self._note("orphaned: releasing, detaching, unmounting")
        for name in os.listdir("/sys/block"):
            try:
                with open("/sys/block/%s/loop/backing_file" % name) as f:
                    backing = f.read().strip()
            except OSError:
                continue
            if backing.startswith(self.mountpoint + "/"):
                subprocess.run(["losetup", "-d", "/dev/" + name], check=False)
        subprocess.run(["umount", "-l", self.mountpoint], check=False)

    def _full(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def _order(self):
        if self.orphaned.is_set():
            return ""
        try:
            with open(self.control) as f:
                return f.read().strip()
        except OSError:
            return ""

    def _note(self, line):
        with _log_lock:
            with open(self.log, "a") as f:
                f.write(line + "\n")

    def _applies(self, op):
        """The order in force for op: (word, words) or None."""
        words = self._order().split()
        if not words or (words[1:] and op not in words[1:]):
            return None
        return words[0], words

    def _stall(self, op, path):
        got = self._applies(op)
        if got is None:
            return
        word, words = got
        if word == "hang":
            pid = fuse_get_context()[2]
            self._note("hang %s %s pid %d" % (op, path, pid))
            until = time.monotonic() + MAXHANG
            while self._order().split() == words and time.monotonic() < until:
                time.sleep(0.02)
            self._note("release %s %s pid %d" % (op, path, pid))
            return
        try:
            ms = float(word)
        except ValueError:
            return
        if ms > 0:
            time.sleep(ms / 1000.0)

    def __call__(self, op, *args):
        if op not in ("init", "destroy"):
            path = args[0] if args and isinstance(args[0], str) else ""
            self._stall(op, path)
        return super().__call__(op, *args)

    # --- passthrough -------------------------------------------------------
    def getattr(self, path, fh=None):
        try:
            st = os.lstat(self._full(path))
        except OSError as e:
            raise FuseOSError(e.errno)
        return {k: getattr(st, k) for k in (
            "st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime",
            "st_nlink", "st_size", "st_uid", "st_blocks")}

    def access(self, path, amode):
        if not os.access(self._full(path), amode):
            raise FuseOSError(errno.EACCES)

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._full(path))

    def statfs(self, path):
        s = os.statvfs(self._full(path))
        return {k: getattr(s, k) for k in (
            "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail",
            "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def open(self, path, flags):
        # O_DIRECT is the kernel's business here (direct_io sends every
        # read and write to the daemon); Python's buffers are not aligned
        # for it on the real file.
        return os.open(self._full(path), flags & ~os.O_DIRECT)

    def create(self, path, mode, fi=None):
        # fusepy does not pass the flags: read and write, as any open may.
        return os.open(self._full(path), os.O_RDWR | os.O_CREAT | os.O_TRUNC, mode)

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

    def fsync(self, path, datasync, fh):
        if datasync:
            os.fdatasync(fh)
        else:
            os.fsync(fh)
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
        sys.exit("usage: stallfs.py ROOT MOUNTPOINT CONTROLFILE")
    FUSE(StallFS(sys.argv[1], sys.argv[2], sys.argv[3]), sys.argv[2],
         foreground=True, nothreads=False, allow_other=True, big_writes=True,
         attr_timeout=0, entry_timeout=0, negative_timeout=0, direct_io=True)
