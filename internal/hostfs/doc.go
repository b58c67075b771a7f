// Package hostfs is where ioprobe reads the host it runs on: sysfs
// (/sys/block, /sys/class/block, /sys/dev/block and each device's
// attributes), procfs (/proc/self/mountinfo, /proc/stat, /proc/diskstats,
// /proc/PID), and the questions only a system call answers (a loop
// device's LOOP_GET_STATUS64, a stat of a file on another filesystem).
// The safety checks of internal/target, the runner's guard, the device
// latency of internal/devlat, the CPU accounting of internal/cpuacct and
// the description of a target's storage stack all read the host through
// it.
//
// It owns two promises:
//
//   - Every read is bounded. A sysfs attribute is at most a page (the
//     kernel's own limit), a /proc table at most a few MiB (Limit* below);
//     a file that is larger is an error that names the file and the bound,
//     never an allocation the size of whatever the file claims to be.
//
//   - No call waits on another filesystem without a deadline. A stat or an
//     ioctl that the kernel answers by asking another filesystem (the
//     loop driver stats its backing file to answer LOOP_GET_STATUS64; a
//     stat of a file on NFS or FUSE asks the server) blocks for as long as
//     that filesystem does not answer: a hung NFS server, a FUSE daemon
//     that stopped reading its requests. Such calls go through Calls: each
//     runs on a goroutine of its own and the caller waits for it only
//     until its deadline (or its context) ends, then gets a *NoAnswerError
//     naming what did not answer (the loop device, the mount of its
//     backing file). A goroutine stuck in the kernel cannot be killed, so
//     Calls keeps at most one per object (a later call for the same object
//     waits for the answer of the one pending, and starts nothing) and at
//     most MaxPending in all (beyond that a call fails at once).
//
// The sources that cannot block come first: sysfs names a loop device's
// backing file, its offset and size limit (Loops) without asking the
// file's filesystem, and the mount table (Mounts) says which filesystem a
// path lies on. A backing file on a filesystem whose device differs from
// a target's cannot be that target, so only a candidate on the same
// filesystem needs the system call (target's loop checks). A thread stuck
// in such a call also holds up the end of the process until the kernel
// lets it go (a FUSE request its daemon has read is not interruptible),
// which is one more reason to ask only the candidates.
//
// Parsing is kept apart from I/O (ParseMountInfo takes a reader) and every
// root is configurable (Host), so tests read fixtures.
package hostfs
