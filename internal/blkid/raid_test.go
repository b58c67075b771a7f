package blkid

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
)

// patchedDev is a device of size bytes whose background is pseudo-random
// (a function of the offset, so nothing is allocated for the gigabytes
// nobody reads) with patches written over it.
type patchedDev struct {
	size int64
	ps   []handmade.Patch
}

func (p patchedDev) ReadAt(b []byte, off int64) (int, error) {
	for i := range b {
		x := uint64(off+int64(i)) * 0x9E3779B97F4A7C15
		b[i] = byte(x >> 56)
	}
	for _, q := range p.ps {
		lo, hi := max(off, q.Off), min(off+int64(len(b)), q.Off+int64(len(q.Data)))
		if lo < hi {
			copy(b[lo-off:hi-off], q.Data[lo-q.Off:hi-q.Off])
		}
	}
	return len(b), nil
}

// TestHandmadeHeaders: every hand-built header is found where libblkid
// 2.38.1 finds it (the offsets below are wipefs's, from the differential
// test in test/blkid_other_test.go), plus what ioprobe looks for beyond
// libblkid (a BSD label on a whole disk, a Minix table inside its DOS
// partition, UnixWare's real d_magic, each Stratis copy).
func TestHandmadeHeaders(t *testing.T) {
	want := map[string][]string{
		"md-0.90-le":           {"linux_raid_member@67043328"},
		"md-0.90-be":           {"linux_raid_member@67043328"},
		"md-1.0":               {"linux_raid_member@67100672"},
		"md-1.1":               {"linux_raid_member@0"},
		"md-1.2":               {"linux_raid_member@4096"},
		"ddf":                  {"ddf_raid_member@67108352"},
		"isw":                  {"isw_raid_member@67107840"},
		"lsi":                  {"lsi_mega_raid_member@67108352"},
		"via":                  {"via_raid_member@67108352"},
		"via-bad-checksum":     {"via_raid_member@67108352"},
		"silicon":              {"silicon_medley_raid_member@67108448"},
		"nvidia":               {"nvidia_raid_member@67107840"},
		"promise":              {"promise_fasttrack_raid_member@67076608"},
		"hpt45x":               {"hpt45x_raid_member@67103232"},
		"hpt37x":               {"hpt37x_raid_member@4640"},
		"adaptec":              {"adaptec_raid_member@67108352"},
		"jmicron":              {"jmicron_raid_member@67108352"},
		"ceph-bluestore":       {"ceph_bluestore@0"},
		"drbdmanage":           {"drbdmanage_control_volume@0"},
		"drbdproxy-datalog":    {"drbdproxy_datalog@0"},
		"lvm1":                 {"LVM1_member@0"},
		"dm-snapshot-cow":      {"DM_snapshot_cow@0"},
		"vmfs-volume":          {"VMFS_volume_member@1048576"},
		"vdo":                  {"vdo@0"},
		"stratis":              {"stratis@516", "stratis@4612"},
		"stratis-second-copy":  {"stratis@4612"},
		"dm-integrity":         {"DM_integrity@0"},
		"bitlocker-vista":      {"BitLocker@0"},
		"bitlocker-win7":       {"BitLocker@0", "dos@510"},
		"bitlocker-togo":       {"BitLocker@0", "dos@510"},
		"swap-v0":              {"swap@4086"},
		"swsuspend-S1SUSPEND":  {"swsuspend@4086"},
		"swsuspend-S2SUSPEND":  {"swsuspend@4086"},
		"swsuspend-ULSUSPEND":  {"swsuspend@4086"},
		"swsuspend-LINHIB0001": {"swsuspend@4086"},
		"swsuspend-8k":         {"swsuspend@8182"},
		"swsuspend-16k":        {"swsuspend@16374"},
		"swsuspend-32k":        {"swsuspend@32758"},
		"swsuspend-64k":        {"swsuspend@65526"},
		"swsuspend-tuxonice":   {"swsuspend@0", "swap@4086"},
		"zfs-label0-only":      {"zfs_member@134144"},
		"zfs-label1-only":      {"zfs_member@396288"},
		"zfs-label2-only":      {"zfs_member@100273152"},
		"zfs-label3-only":      {"zfs_member@100535296"},
		"aix":                  {"aix@0"},
		"pmbr-without-gpt":     {"PMBR@510"},
		"unixware":             {"unixware@14852", "unixware@29174"},
		"solaris-x86":          {"solaris@524"},
		"atari":                {"atari@454"},
		"ultrix":               {"ultrix@16312"},
		"bsd-sector1":          {"bsd@512"},
		"bsd-offset64":         {"bsd@64"},
		"minix-in-dos":         {"dos@510", "minix@1049086"},
	}
	seen := 0
	for _, h := range handmade.Headers() {
		w, ok := want[h.Name]
		if !ok {
			continue // a filesystem header: fs_test.go
		}
		seen++
		require.Equal(t, w, scanOther(h.Size, 512, h.Build(h.Size)), h.Name)
	}
	require.Equal(t, len(want), seen, "every header in the table is built by handmade")
}

// TestOtherProbesIgnoreNoise: on pseudo-random bytes, of sizes around the
// thresholds the probes test, none of them reports anything, and none
// reads outside the device.
func TestOtherProbesIgnoreNoise(t *testing.T) {
	require.Empty(t, scanOther(64<<20, 512, nil))
	require.Empty(t, scanOther(64<<20, 4096, nil))
	for _, size := range []int64{0, 1, 511, 512, 4095, 0x10000 - 1, 0x10000, 0x10000 + 512, 0x30000, 300 << 10, 1<<20 + 7} {
		data := make([]byte, size)
		_, _ = patchedDev{size: size}.ReadAt(data, 0)
		mine := otherTypes()
		for _, s := range Scan(strictReader{t, data}, size, 512) {
			require.False(t, mine[s.Type], "%d bytes of noise: %v", size, s)
		}
	}
}

// TestRaidConsistencyChecks: a magic alone is not enough where the format
// says where its header lies (md 1.x's super_offset) or sums itself up
// with few magic bits (VIA's version).
func TestRaidConsistencyChecks(t *testing.T) {
	const size = 64 << 20
	md12 := headerPatches(t, "md-1.2", size)
	binary.LittleEndian.PutUint64(md12[0].Data[144:], 0) // super_offset says sector 0, it lies at 8
	require.Empty(t, scanOther(size, 512, md12))

	via := headerPatches(t, "via", size)
	via[0].Data[2] = 3
	require.Empty(t, scanOther(size, 512, via), "a VIA header of a version that does not exist")

	// Devices too small for the firmware formats' tail metadata: nothing,
	// and no read outside them.
	for _, name := range []string{"lsi", "jmicron", "nvidia", "isw", "ddf", "adaptec"} {
		small := int64(0x8000)
		data := make([]byte, small)
		handmade.Apply(data, clip(headerPatches(t, name, small), small))
		for _, s := range Scan(strictReader{t, data}, small, 512) {
			require.False(t, otherTypes()[s.Type], "%s on a 32 KiB device: %v", name, s)
		}
	}
}

// TestLUKS2SecondaryAlone: a LUKS2 device whose primary header is
// overwritten is still found by its secondary header, at every offset
// LUKS2 may put it.
func TestLUKS2SecondaryAlone(t *testing.T) {
	for _, off := range luks2SecondaryOffsets {
		got := scanOther(64<<20, 512, []handmade.Patch{{Off: off, Data: []byte("SKUL\xba\xbe\x00\x02")}})
		require.Equal(t, []string{fmt.Sprintf("crypto_LUKS@%d", off)}, got)
	}
}

// TestZFSOneUberblock: libblkid wants four uberblocks; one surviving
// uberblock in an end label is still refused.
func TestZFSOneUberblock(t *testing.T) {
	const size = 100 << 20
	ub := make([]byte, 8)
	binary.BigEndian.PutUint64(ub, zfsUberMagic) // a big-endian pool
	off := int64(size - zfsLabelSize + zfsUberOffset + 5*zfsUberSize)
	require.Equal(t, []string{fmt.Sprintf("zfs_member@%d", off)}, scanOther(size, 512, []handmade.Patch{{Off: off, Data: ub}}))
}

// TestBitLockerToGoNeedsItsMetadata: To Go's boot sector is a FAT32 boot
// sector formatted by Windows ("MSWIN4.1"); without the FVE metadata block
// it points to, it is not BitLocker.
func TestBitLockerToGoNeedsItsMetadata(t *testing.T) {
	const size = 64 << 20
	ps := headerPatches(t, "bitlocker-togo", size)
	require.Contains(t, scanOther(size, 512, ps), "BitLocker@0")
	require.NotContains(t, scanOther(size, 512, ps[:1]), "BitLocker@0")
}

// clip drops patches that would lie outside a device of size bytes.
func clip(ps []handmade.Patch, size int64) []handmade.Patch {
	var out []handmade.Patch
	for _, p := range ps {
		if p.Off >= 0 && p.Off+int64(len(p.Data)) <= size {
			out = append(out, p)
		}
	}
	return out
}
