// Package stack describes the storage under a target, from the target
// down to the disks: the file, its filesystem (type, mount options, block
// size), the partition, the loop, dm and md devices, and each disk's
// model, firmware, capacity, block sizes, scheduler, queue limits, write
// cache, discard support, NUMA node and hashed serial (the targets[].stack,
// disk and disks of a result; the exporter's ioprobe_device_info).
//
// Everything comes from sysfs, /proc and system calls, read through
// internal/hostfs: no external tool is run. Reading sysfs cannot block;
// what asks another filesystem (the stat, statfs and FIEMAP of a file,
// LOOP_GET_STATUS64 of a loop device, which stats its backing file) goes
// through hostfs's Calls with their deadline, so a filesystem that does
// not answer costs at most that deadline and is named in Unseen. What
// could not be seen is said there, never guessed: the stack ends where
// ioprobe stopped seeing.
//
// Parsing is apart from the reading (parse.go) and the roots are
// hostfs.Host's, so unit tests describe fixture trees.
package stack
