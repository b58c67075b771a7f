package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseDiskStats(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    DiskStats
		wantErr string
	}{
		{
			name: "17 fields (5.5+), padded as the kernel prints them",
			text: "   37707     6231  1556594    10833    26236    30205  3392936    13559        2     7776    25240     8589       37   727568      633     4147      214\n",
			want: DiskStats{ReadOps: 37707, ReadMerges: 6231, ReadSectors: 1556594, ReadTicks: 10833,
				WriteOps: 26236, WriteMerges: 30205, WriteSectors: 3392936, WriteTicks: 13559,
				InFlight: 2, IOTicks: 7776, QueueTicks: 25240,
				DiscardOps: 8589, DiscardMerges: 37, DiscardSectors: 727568, DiscardTicks: 633,
				FlushOps: 4147, FlushTicks: 214},
		},
		{
			name: "15 fields (4.18+)",
			text: "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n",
			want: DiskStats{ReadOps: 1, ReadMerges: 2, ReadSectors: 3, ReadTicks: 4, WriteOps: 5, WriteMerges: 6, WriteSectors: 7, WriteTicks: 8,
				InFlight: 9, IOTicks: 10, QueueTicks: 11, DiscardOps: 12, DiscardMerges: 13, DiscardSectors: 14, DiscardTicks: 15},
		},
		{
			name: "11 fields (old kernels)",
			text: "1 2 3 4 5 6 7 8 9 10 11",
			want: DiskStats{ReadOps: 1, ReadMerges: 2, ReadSectors: 3, ReadTicks: 4, WriteOps: 5, WriteMerges: 6, WriteSectors: 7, WriteTicks: 8,
				InFlight: 9, IOTicks: 10, QueueTicks: 11},
		},
		{
			name: "future kernels with more fields",
			text: "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
			want: DiskStats{ReadOps: 1, ReadMerges: 2, ReadSectors: 3, ReadTicks: 4, WriteOps: 5, WriteMerges: 6, WriteSectors: 7, WriteTicks: 8,
				InFlight: 9, IOTicks: 10, QueueTicks: 11, DiscardOps: 12, DiscardMerges: 13, DiscardSectors: 14, DiscardTicks: 15, FlushOps: 16, FlushTicks: 17},
		},
		{
			name: "64-bit counters",
			text: "18446744073709551615 0 0 0 0 0 0 0 0 0 0",
			want: DiskStats{ReadOps: 18446744073709551615},
		},
		{name: "too few fields", text: "1 2 3 4 5 6 7 8 9 10", wantErr: "stat has 10 fields, want at least 11"},
		{name: "empty", text: "", wantErr: "stat has 0 fields"},
		{name: "not a number", text: "1 2 3 4 5 6 x 8 9 10 11", wantErr: `stat field 7: "x" is not an unsigned number`},
		{name: "negative", text: "1 2 3 4 5 6 7 8 -9 10 11", wantErr: `stat field 9: "-9"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDiskStats(strings.NewReader(tc.text))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestDiskStatsSubAndBytes(t *testing.T) {
	prev := DiskStats{ReadOps: 10, ReadSectors: 80, WriteOps: 5, WriteSectors: 40, InFlight: 3, FlushOps: 7}
	cur := DiskStats{ReadOps: 15, ReadSectors: 120, WriteOps: 9, WriteSectors: 72, InFlight: 1, FlushOps: 2}
	d := cur.Sub(prev)
	require.Equal(t, DiskStats{ReadOps: 5, ReadSectors: 40, WriteOps: 4, WriteSectors: 32, InFlight: 1}, d,
		"InFlight is a gauge; a counter that went back (device re-created) gives 0")
	require.Equal(t, uint64(40*512), d.ReadBytes())
	require.Equal(t, uint64(32*512), d.WriteBytes())
}

func TestReadDiskStats(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "class", "block", "nvme0n1p2")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte("1 2 3 4 5 6 7 8 9 10 11\n"), 0o644))

	got, err := ReadDiskStats(root, "nvme0n1p2")
	require.NoError(t, err)
	require.Equal(t, uint64(3), got.ReadSectors)
	require.Equal(t, uint64(7), got.WriteSectors)

	for _, bad := range []string{"", "..", "../../etc", "a/b"} {
		_, err := ReadDiskStats(root, bad)
		require.ErrorContains(t, err, "bad device name", bad)
	}
	_, err = ReadDiskStats(root, "sdz")
	require.ErrorContains(t, err, "no such file")
}

func TestReadDiskStatsLive(t *testing.T) {
	ents, err := os.ReadDir("/sys/class/block")
	if err != nil || len(ents) == 0 {
		t.Skip("no /sys/class/block here") //hygiene:skip not Linux
	}
	_, err = ReadDiskStats("", ents[0].Name())
	require.NoError(t, err)
}
