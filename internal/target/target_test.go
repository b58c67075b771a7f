package target

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSafetyErrorText(t *testing.T) {
	tests := []struct {
		err  *SafetyError
		want string
	}{
		{&SafetyError{Path: "/dev/loop3", Write: true, Reason: "it holds an ext4 filesystem (signature at byte 1080)"},
			"refusing to write to /dev/loop3: it holds an ext4 filesystem (signature at byte 1080) (--allow-destructive does not lift this refusal)"},
		{&SafetyError{Path: "/dev/loop3", Write: true, Reason: "block devices are read-only by default, and no filesystem, partition table or other signature was found on it", Override: "--allow-destructive"},
			"refusing to write to /dev/loop3: block devices are read-only by default, and no filesystem, partition table or other signature was found on it (--allow-destructive overrides this)"},
		{&SafetyError{Path: "/dev/shm/x", Reason: "it is on tmpfs"},
			"refusing to use /dev/shm/x: it is on tmpfs"},
	}
	for _, tc := range tests {
		require.EqualError(t, tc.err, tc.want)
	}
}

func TestIsBadInput(t *testing.T) {
	require.True(t, IsBadInput(&SafetyError{Path: "p", Reason: "r"}))
	require.True(t, IsBadInput(fmt.Errorf("wrapped: %w", &InputError{Path: "p", Msg: "m"})))
	require.False(t, IsBadInput(errors.New("EIO")))
	require.False(t, IsBadInput(nil))
	require.ErrorIs(t, &InputError{Path: "p", Msg: "m", Err: errors.ErrUnsupported}, errors.ErrUnsupported)
	require.EqualError(t, &InputError{Path: "p", Msg: "m", Err: errors.New("x")}, "target p: m: x")
}

func TestCheckAlign(t *testing.T) {
	g := geometry{logicalBlock: 512, memAlign: 512, pageSize: 4096}
	tests := []struct {
		name      string
		opts      Options
		g         geometry
		wantAlign int64
		wantMax   int64
		wantErr   string
	}{
		{name: "defaults", opts: Options{}, g: g, wantAlign: 512, wantMax: 512},
		{name: "4k and 64k", opts: Options{Align: 4096, MaxBlock: 65536}, g: g, wantAlign: 4096, wantMax: 65536},
		{name: "max defaults to align", opts: Options{Align: 8192}, g: g, wantAlign: 8192, wantMax: 8192},
		{name: "align not a multiple", opts: Options{Align: 1000}, g: g, wantErr: "target x: alignment 1000B is not a multiple of the logical block size 512B"},
		{name: "512 on a 4k device", opts: Options{Align: 512}, g: geometry{logicalBlock: 4096, memAlign: 4096, pageSize: 4096}, wantErr: "alignment 512B is not a multiple of the logical block size 4KiB"},
		{name: "transfer not a multiple", opts: Options{Align: 512, MaxBlock: 1500}, g: g, wantErr: "transfer size 1500B is not a multiple of the logical block size 512B"},
		{name: "max below align", opts: Options{Align: 4096, MaxBlock: 1024}, g: g, wantErr: "largest transfer 1KiB is smaller than the alignment 4KiB"},
		{name: "negative", opts: Options{Region: -1}, g: g, wantErr: "negative size"},
		{name: "memory alignment above a page", opts: Options{}, g: geometry{logicalBlock: 512, memAlign: 8192, pageSize: 4096}, wantErr: "aligned to 8192 bytes, more than a page (4096)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			err := checkAlign("x", &o, tc.g)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.True(t, IsBadInput(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantAlign, o.Align)
			require.Equal(t, tc.wantMax, o.MaxBlock)
		})
	}
}

func TestCheckRegion(t *testing.T) {
	o := Options{Align: 4096, MaxBlock: 65536}
	tests := []struct {
		name         string
		region, size int64
		want         int64
		wantErr      string
	}{
		{"whole target", 0, 1 << 20, 1 << 20, ""},
		{"whole target rounded down to the alignment", 0, 1<<20 + 1000, 1 << 20, ""},
		{"part", 512 << 10, 1 << 20, 512 << 10, ""},
		{"exactly the size", 1 << 20, 1 << 20, 1 << 20, ""},
		{"larger than the target", 2 << 20, 1 << 20, 0, "region 2MiB is larger than the target's size 1MiB"},
		{"not a multiple of the alignment", 1<<20 - 512, 1 << 20, 0, "region 1048064B is not a multiple of the alignment 4KiB"},
		{"smaller than a transfer", 8192, 1 << 20, 0, "region 8KiB is smaller than the largest transfer 64KiB"},
		{"target smaller than the alignment", 0, 1000, 0, "size 1000B is smaller than the alignment 4KiB"},
		{"empty target", 0, 0, 0, "target x: is empty (0 bytes)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checkRegion("x", tc.region, tc.size, o)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
