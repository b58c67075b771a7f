package result

// What a target was: the storage under it, from the target down to the
// disks, and the settings of each device there, as the kernel's files said
// when the run started (internal/stack reads them). Users compare results
// across machines and months; a scheduler switched, a cache mode changed
// or a file moved onto another filesystem changes the figures as much as
// the storage itself does, so compare and merge say when these differ
// (StorageSettings).

// Layer kinds (Layer.Kind), from the top down.
const (
	LayerFile       = "file"
	LayerFilesystem = "filesystem"
	LayerPartition  = "partition"
	LayerLoop       = "loop"
	LayerDM         = "dm"
	LayerMD         = "md"
	LayerDisk       = "disk"
)

// Layer is one layer of the storage under a target (targets[].stack[]),
// listed from the target down, depth first: what a layer lies on follows
// it, one deeper. A loop device over a file lies on that file, which lies
// on its filesystem, which lies on its device; a dm or md device lies on
// each of its slaves in turn.
type Layer struct {
	Kind string `json:"kind"` // file, filesystem, partition, loop, dm, md, disk
	// Name is a file's path, a filesystem's mount point, a block device's
	// kernel name ("sda", "loop3", "dm-0", "md0").
	Name string `json:"name"`
	// Depth is 0 for the target; each layer is one deeper than the layer
	// that lies on it.
	Depth int `json:"depth"`

	// A filesystem: its type, the mount's per-mount options and the
	// filesystem's own (mountinfo's super options; for ext4 every
	// option in effect, defaults too, from /proc/fs/ext4/DEV/options),
	// the mount's source as mountinfo says it, the kernel name of its
	// block device ("" for one without: tmpfs, overlay, NFS) and its
	// block size (statfs f_bsize).
	FSType       string `json:"fstype,omitempty"`
	MountOptions string `json:"mount_options,omitempty"`
	SuperOptions string `json:"super_options,omitempty"`
	FSOptions    string `json:"fs_options,omitempty"`
	Source       string `json:"source,omitempty"`
	Device       string `json:"device,omitempty"`
	BlockBytes   int64  `json:"block_bytes,omitempty"`

	// SizeBytes: a file's size, a partition's.
	SizeBytes int64 `json:"size_bytes,omitempty"`
	// A file: the bytes its filesystem allocated to it (st_blocks × 512;
	// fewer than its size is a sparse file, whose first writes allocate)
	// and how many extents map it (FIEMAP); absent when not known.
	AllocatedBytes *int64 `json:"allocated_bytes,omitempty"`
	Extents        *int64 `json:"extents,omitempty"`

	// A partition: its number and where it starts on its disk.
	Number      int   `json:"number,omitempty"`
	OffsetBytes int64 `json:"offset_bytes,omitempty"` // a partition's start, a loop device's offset into its backing

	// A loop device: its backing file or device as the kernel names it
	// (deleted: the file was removed while attached), how many bytes of
	// it are shown (0: to its end) and whether it does direct I/O to it
	// (/sys/block/loopN/loop/dio).
	Backing        string `json:"backing,omitempty"`
	BackingDeleted bool   `json:"backing_deleted,omitempty"`
	SizeLimitBytes int64  `json:"sizelimit_bytes,omitempty"`
	DirectIO       *bool  `json:"direct_io,omitempty"`

	// A dm device: its name and the prefix of its uuid, which says what
	// made it ("LVM", "CRYPT", "mpath", "part1"; the rest of the uuid
	// identifies a volume and is left out).
	DMName       string `json:"dm_name,omitempty"`
	DMUUIDPrefix string `json:"dm_uuid_prefix,omitempty"`
	// An md device: its RAID level and chunk size.
	Level      string `json:"level,omitempty"`
	ChunkBytes int64  `json:"chunk_bytes,omitempty"`
	// Slaves are what a dm or md device (or another device stacked on
	// others, such as bcache) lies on, by kernel name.
	Slaves []string `json:"slaves,omitempty"`

	// Queue is the request queue of a loop, dm or md device: its own
	// scheduler and limits, which shape the I/O before it reaches what
	// lies below. A disk's are in targets[].disk.
	Queue *Queue `json:"queue,omitempty"`
}

// Queue is a block device's request queue settings (/sys/block/X/queue
// and its size).
type Queue struct {
	SizeBytes          int64 `json:"size_bytes"`
	LogicalBlockBytes  int64 `json:"logical_block_bytes"`
	PhysicalBlockBytes int64 `json:"physical_block_bytes"`
	Rotational         bool  `json:"rotational"`
	// Scheduler is the active I/O scheduler ("none", "mq-deadline",
	// "bfq", "kyber"); "" for a device without a request queue of its
	// own (bio-based: zram, dm linear, md), which has no scheduler and no
	// nr_requests.
	Scheduler    string `json:"scheduler"`
	NrRequests   int64  `json:"nr_requests"`
	MaxSectorsKB int64  `json:"max_sectors_kb"`
	ReadAheadKB  int64  `json:"read_ahead_kb"`
	// WriteCache is "write back" (a flush is needed for durability) or
	// "write through"; FUA says the device takes writes with Forced Unit
	// Access (the kernel then sends no flush after an O_DSYNC write).
	WriteCache string `json:"write_cache"`
	FUA        bool   `json:"fua"`
	// DiscardMaxBytes is the largest discard the device takes (0: it
	// does not take discards).
	DiscardMaxBytes int64 `json:"discard_max_bytes"`
	// Zoned is the zone model when the device is zoned (host-aware,
	// host-managed); absent for a device that is not.
	Zoned string `json:"zoned,omitempty"`
}

// Disk is a disk at the bottom of a target's storage (targets[].disk,
// targets[].disks[]): what it is and its queue's settings.
type Disk struct {
	Name string `json:"name"` // kernel name: "sda", "nvme0n1", "vda", "zram0"
	// Model, Vendor, Firmware: as the device reports them (printable
	// characters, at most 128 bytes); empty where it reports none (a
	// virtio disk has no model; zram no device at all).
	Model    string `json:"model"`
	Vendor   string `json:"vendor,omitempty"`
	Firmware string `json:"firmware"`
	// Bus is the subsystem its device hangs off ("scsi", "nvme",
	// "virtio", "mmc"); absent for a disk without a device (zram, nbd).
	Bus string `json:"bus,omitempty"`
	Queue
	// NUMANode is the NUMA node of its device, where sysfs says (-1: the
	// device has no node affinity).
	NUMANode *int `json:"numa_node,omitempty"`
	// SerialSHA256 is the SHA-256 of its serial number (hex), never the
	// serial itself: it tells whether two results measured the same disk
	// without saying which. SerialFrom names where the serial was read:
	// "device/serial", "serial", "vpd_pg80" or "wwid".
	SerialSHA256 string `json:"serial_sha256,omitempty"`
	SerialFrom   string `json:"serial_from,omitempty"`
}

// AllDisks is every disk under t: Disks when there are several, else Disk.
func (t *Target) AllDisks() []Disk {
	if len(t.Disks) > 0 {
		return t.Disks
	}
	if t.Disk != nil {
		return []Disk{*t.Disk}
	}
	return nil
}

// HasStack says whether t describes its storage (results written before
// ioprobe recorded it do not).
func (t *Target) HasStack() bool { return len(t.Stack) > 0 || len(t.StackUnseen) > 0 }
