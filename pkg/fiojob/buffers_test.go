package fiojob

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestBufferOptionsAsFioSetsThem (issue 33 item 6): what writes carry
// after fio's option callbacks and fix-ups (options.c, init.c), which
// depend on the options' order as fio's do.
func TestBufferOptionsAsFioSetsThem(t *testing.T) {
	base := "[j]\nfilename=/dev/big\nsize=64m\nbs=64k\n"
	for _, c := range []struct {
		name, opts string
		want       *workload.BufferContent
	}{
		{"OpenZFS's random_writes", "rw=randwrite\nbuffer_compress_percentage=66\nbuffer_pattern=0xdeadbeef\nbuffer_compress_chunk=4096\n",
			&workload.BufferContent{CompressPct: 66, CompressChunk: 4096, Pattern: "deadbeef", Refill: true}},
		{"chunk default 512", "rw=write\nbuffer_compress_percentage=75\n",
			&workload.BufferContent{CompressPct: 75, CompressChunk: 512, Refill: true}},
		{"100% is zeros", "rw=write\nbuffer_compress_percentage=100\n", &workload.BufferContent{Zero: true}},
		{"100% with a pattern is the pattern", "rw=write\nbuffer_compress_percentage=100\nbuffer_pattern=\"ab\"\n",
			&workload.BufferContent{Pattern: "6162", Refill: true}},
		{"refill off by hand", "rw=write\nbuffer_compress_percentage=50\nrefill_buffers=0\n",
			&workload.BufferContent{CompressPct: 50, CompressChunk: 512}},
		{"dedupe refills", "rw=write\ndedupe_percentage=30\n",
			&workload.BufferContent{DedupePct: 30, CompressChunk: 512, Refill: true}},
		{"working set", "rw=write\ndedupe_percentage=30\ndedupe_mode=working_set\ndedupe_working_set_percentage=10\n",
			&workload.BufferContent{DedupePct: 30, CompressChunk: 512, DedupeWorkingSetPct: 10, Refill: true}},
		{"zero_buffers ends the scramble", "rw=write\nzero_buffers\n", &workload.BufferContent{Zero: true}},
		{"zero_buffers then scramble_buffers=1", "rw=write\nzero_buffers\nscramble_buffers=1\n", &workload.BufferContent{Zero: true, Scramble: true}},
		{"scramble off: one buffer written again and again", "rw=write\nscramble_buffers=0\n", &workload.BufferContent{}},
		{"refill alone: random, new each write", "rw=write\nrefill_buffers\n", &workload.BufferContent{Refill: true, Scramble: true}},
		{"fio's default", "rw=write\nscramble_buffers=1\n", nil},
		// buffer_pattern turns refill on when the job reads as far as fio
		// knows then: rw's default is read.
		{"pattern before rw", "buffer_pattern=0x01\nrw=write\n", &workload.BufferContent{Pattern: "01", Refill: true}},
		{"pattern after rw", "rw=write\nbuffer_pattern=0x01\n", &workload.BufferContent{Pattern: "01"}},
	} {
		j := one(t, base+c.opts)
		require.Equal(t, c.want, j.Spec.Buffer, c.name)
		if c.want != nil {
			require.NoError(t, j.Spec.Validate(), c.name)
		}
	}
	require.Nil(t, one(t, base+"rw=read\nbuffer_compress_percentage=50\n").Spec.Buffer, "a read job writes nothing")
	require.Contains(t, refused(t, base+"rw=write\ndedupe_percentage=10\ndedupe_global=1\n"), "job.fio:7: [j] dedupe_global:")
	require.Contains(t, refused(t, base+"rw=write\nbuffer_compress_percentage=101\n"), "between 0 and 100")
	require.Contains(t, refused(t, base+"rw=write\ndedupe_mode=other\n"), "repeat and working_set")
}

// TestBufferPatternAsFioParsesIt: fio's parse_and_fill_pattern, on the
// examples of its own comment (lib/pattern.c).
func TestBufferPatternAsFioParsesIt(t *testing.T) {
	for in, want := range map[string]string{
		`"abcd"`:         "61626364",
		"-1024":          "00fcffff",
		"66":             "42",
		"0":              "00",
		"0xFF0X1":        "ff01",
		"0xabc":          "0abc",
		`"123"0xFFeeCC`:  "313233ffeecc",
		"0xdeadbeef":     "deadbeef",
		"0xfefefefefefe": "fefefefefefe",
	} {
		got, err := parsePattern(in)
		require.NoError(t, err, in)
		require.Equal(t, want, hex.EncodeToString(got), in)
	}
	for _, in := range []string{"%o", "'file'", `"open`, "4294967296", " 0x01", "abc"} {
		_, err := parsePattern(in)
		require.Error(t, err, in)
	}
}
