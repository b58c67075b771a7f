package workload

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  string
	}{
		{"512", 512, ""},
		{"4k", 4096, ""},
		{"4K", 4096, ""},
		{"4KiB", 4096, ""},
		{"4kib", 4096, ""},
		{"1.5GiB", 3 << 29, ""},
		{"1g", 1 << 30, ""},
		{"64m", 64 << 20, ""},
		{"2T", 2 << 40, ""},
		{"100MB", 100_000_000, ""},
		{"4kB", 4000, ""},
		{" 8k ", 8192, ""},
		{"", 0, "empty size"},
		{"k", 0, `size "k": no number`},
		{"4x", 0, `unknown unit "x"`},
		{"1.3k", 0, "not a whole number of bytes"},
		{"-4k", 0, "must not be negative"},
		{"99999999999999999999", 0, "out of range"},
		{"9000000000P", 0, "out of range"},
		{"1.2.3k", 0, "bad number"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseSize(c.in)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestFormatSizeRoundTrips(t *testing.T) {
	for _, n := range []int64{512, 1536, 4096, 65536, 3 << 29, 1 << 30, 1 << 40, 12345} {
		back, err := ParseSize(FormatSize(n))
		require.NoError(t, err)
		require.Equal(t, n, back, FormatSize(n))
	}
	require.Equal(t, "4KiB", FormatSize(4096))
	require.Equal(t, "512B", FormatSize(512))
	require.Equal(t, "64 KiB", ShortSize(64*KiB))
	require.Equal(t, "1 MiB", ShortSize(MiB))
	require.Equal(t, "512 B", ShortSize(512))
}

// TestShortSizeReadsBackAsTheSizeThatRan: a label in a table or a chart,
// typed back on the command line, is the size that ran. The reports'
// "4KB" was not: ParseSize reads it as 4000 bytes, as fio does.
func TestShortSizeReadsBackAsTheSizeThatRan(t *testing.T) {
	for _, n := range []int64{512, 1024, 1536, 4096, 8192, 65536, 512 * KiB, MiB, 4 * MiB, 12345} {
		back, err := ParseSize(ShortSize(n))
		require.NoError(t, err, ShortSize(n))
		require.Equal(t, n, back, ShortSize(n))
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"512", "4k", "4KiB", "1.5GiB", "100MB", "", "k", "1e3", "0.5k", "18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d: negative", s, n)
		}
		back, err := ParseSize(FormatSize(n))
		if err != nil || back != n {
			t.Fatalf("FormatSize(%d) = %q does not round-trip: %d, %v", n, FormatSize(n), back, err)
		}
	})
}

func FuzzParseBlockSizes(f *testing.F) {
	for _, s := range []string{"4k", "4k:70,64k:30", "512,1k,2k", "4k:0", ":", "4k:70,,", "8k:10000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bs, err := ParseBlockSizes(s)
		if err != nil {
			return
		}
		spec := Spec{BlockSizes: bs, ReadPct: 50, RandomPct: 50, Duration: 1}.WithDefaults()
		if spec.Validate() != nil {
			return
		}
		// A valid mix drives a generator that stays in bounds, in whole
		// sectors; random offsets keep the alignment (the smallest size),
		// sequential ones follow each other (7k after 0 with 7k,2k).
		region := Region{Start: 0, Len: spec.MaxBlock() * 8}
		g, err := NewGenerator(&spec, region, nil, 1)
		if err != nil {
			t.Fatalf("valid spec %q: %v", s, err)
		}
		var op Op
		for i := 0; i < 64; i++ {
			g.Next(&op)
			if op.Offset < 0 || op.Offset+op.Len > region.Len || op.Offset%512 != 0 || (op.Random && op.Offset%spec.Alignment() != 0) {
				t.Fatalf("%q: op %+v out of region %+v", s, op, region)
			}
		}
	})
}
