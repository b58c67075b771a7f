// Package target opens the things ioprobe measures, a regular file or a block
// device, for O_DIRECT I/O, and it is where every safety rule (README.md
// "Safety": a probe must never destroy data) is enforced.
//
// It owns:
//
//   - resolving and classifying a target (file, block device; anything else
//     is refused), its size, logical block size, memory alignment and the
//     kernel name of the block device under it;
//   - checking alignment, transfer sizes and the access region against the
//     target before anything is created or opened for writing;
//   - preparing file targets: creating, preallocating, filling with
//     incompressible data through O_DIRECT from mmap'd memory, and marking
//     them (xattr user.ioprobe) so later runs reuse them without refilling;
//   - ownership: a file is ioprobe's only while its marker names this very
//     file and its content (first and last 64 KiB, a random sample) is
//     still ioprobe's sectors under the file's key (owner_linux.go); the
//     key goes to the engines, which stamp every write with it;
//   - the refusals: writes to files ioprobe did not create, to block devices
//     without --allow-destructive, and, whatever the flags, to devices that
//     are mounted, in use by the kernel, partitioned, or hold a partition
//     table, filesystem, LVM, RAID or other signature (a block device probed
//     with its logical sector size, a file with 512-byte sectors, as
//     libblkid does); targets on tmpfs, ramfs, or filesystems that refuse
//     O_DIRECT; devices under a loop device that is in use or holds a
//     signature, loop devices whose backing (at any depth) holds one
//     anywhere (loopview_linux.go), files that back a loop device, devices
//     another process holds open for writing or locks in any way
//     (holders_linux.go, procscan_linux.go: descriptors in any thread's
//     table, shared writable mappings, io_uring registrations; the same
//     for a file ioprobe did not create; ioprobe takes LOCK_EX itself
//     while it writes), and such writes when ioprobe cannot see every
//     process (procview_linux.go; a look that does not answer in time
//     refuses too: lookguard_linux.go).
//     The refusals no flag lifts are looked for before --allow-destructive
//     is offered. A refusal is a *SafetyError whose
//     reasons carry ids from Refusals, the list README and docs/output.md
//     document (a test keeps the three in step); bad input is an
//     *InputError; IsBadInput tells the CLI which errors mean exit status 2;
//   - the kernel's block-layer counters (/sys/class/block/DEV/stat) for the
//     device a target reaches, so a run can report what the device really saw.
//
// What the checks read of the host (sysfs, /proc, the mount table, loop
// devices) goes through internal/hostfs, bounded; a check asks a loop
// device what backs it only when its backing file may be the target (its
// filesystem is the target's: loopask_linux.go), with hostfs's deadline,
// and refuses (unverifiable) naming the loop device and the mount that
// did not answer in time. Options.Cancel ends those waits too.
//
// Detection and parsing (signatures, diskstats, sysfs) are pure
// functions over bytes, readers and a sysfs root, testable with fixtures;
// the system calls live in *_linux.go. On other systems Open reports that
// it is unsupported.
package target
