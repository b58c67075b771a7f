package workload

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fieldCase is a spec spoilt by mod and the FieldError text Validate must give.
type fieldCase struct {
	name string
	mod  func(*Spec)
	want string
}

func TestValidateNamesTheField(t *testing.T) {
	cases := []fieldCase{
		{"bs too small", func(s *Spec) { s.BlockSizes = []BlockSize{{256, 1}} }, "--bs 256B: must be between 512B and 64MiB"},
		{"bs too big", func(s *Spec) { s.BlockSizes = []BlockSize{{128 * MiB, 1}} }, "--bs 128MiB: must be between 512B and 64MiB"},
		{"bs not sector", func(s *Spec) { s.BlockSizes = []BlockSize{{1000, 1}} }, "--bs 1000B: must be a multiple of 512 bytes"},
		{"bs twice", func(s *Spec) { s.BlockSizes = []BlockSize{{4096, 1}, {4096, 2}} }, "--bs 4KiB: listed twice"},
		{"read pct", func(s *Spec) { s.ReadPct = 101 }, "--read-pct 101: must be between 0 and 100"},
		{"random pct", func(s *Spec) { s.RandomPct = -1 }, "--random-pct -1: must be between 0 and 100"},
		{"qd", func(s *Spec) { s.QueueDepth = 5000 }, "--qd 5000: must be between 1 and 1024"},
		{"workers", func(s *Spec) { s.Workers = -2 }, "--workers -2: must be between 1 and 1024"},
		{"duration", func(s *Spec) { s.Duration = 0 }, "--duration 0s: must be more than 0"},
		{"ramp", func(s *Spec) { s.Ramp = -time.Second }, "--ramp -1s: must be between 0 and 8760h"},
		{"rate", func(s *Spec) { s.RateIOPS = -5 }, "--rate-iops -5"},
		{"region small", func(s *Spec) { s.RegionBytes = 2048 }, "--size 2KiB: must hold at least one transfer of 4KiB"},
		{"region misaligned", func(s *Spec) { s.RegionBytes = 4096*10 + 512 }, "must be a multiple of the alignment 4KiB"},
		{"engine", func(s *Spec) { s.Engine = "aio" }, "--engine aio: must be one of auto, sync, uring"},
		{"align", func(s *Spec) { s.Align = 100 }, "--align 100B: must be a multiple of 512 bytes"},
		{"fsync", func(s *Spec) { s.Fsync = -1 }, "--fsync -1: must be between 0 (never) and"},
		{"fdatasync", func(s *Spec) { s.Fdatasync = MaxFlushEvery + 1 }, "--fdatasync 1073741825: must be between 0 (never) and"},
		{"both flushes", func(s *Spec) { s.Fsync, s.Fdatasync = 4, 1 }, "--fdatasync 1: cannot be combined with --fsync 4"},
		{"sync mode", func(s *Spec) { s.Sync = "o_dsync" }, `--sync "o_dsync": must be one of none, dsync, sync`},
		{"submit mode", func(s *Spec) { s.SubmitMode = "batched" }, `submit_mode "batched": must be "adaptive" or "fio"`},
		{"adaptive with a batch", func(s *Spec) { s.SubmitMode, s.SubmitBatch = SubmitAdaptive, 8 }, "submit_mode adaptive: the adaptive rule cannot be combined with fio's batch sizes"},
	}
	requireFieldErrors(t, valid, cases)
	s := valid()
	require.NoError(t, s.Validate())
}

// TestDecimalSizeRefusalSaysTheBinaryOne: 4KB is 4000 bytes here, which
// direct I/O refuses; the refusal says what to type for the 4096 bytes
// the user most likely meant, in one line.
func TestDecimalSizeRefusalSaysTheBinaryOne(t *testing.T) {
	for in, want := range map[string]string{
		"4KB":  "--bs 4000B: must be a multiple of 512 bytes (direct I/O needs whole sectors; --buffered runs any size); KB is 1000 bytes here: for 4096 bytes write 4k or 4KiB",
		"20kB": "KB is 1000 bytes here: for 20480 bytes write 20k or 20KiB",
		"1MB":  "MB is 10^6 bytes here: for 1048576 bytes write 1m or 1MiB",
		"1000": "for 1024 bytes write 1k or 1KiB",
	} {
		s := valid()
		bs, err := ParseBlockSizes(in)
		require.NoError(t, err, in)
		s.BlockSizes = bs
		err = s.Validate()
		require.Error(t, err, in)
		require.Contains(t, err.Error(), want, in)
		require.NotContains(t, err.Error(), "\n", in)
	}
	s := valid()
	s.BlockSizes = []BlockSize{{1500, 1}}
	require.NotContains(t, s.Validate().Error(), "write", "1500 bytes is no whole number of kB: no guess")
}

// The adaptive rule is the default; any of fio's batch fields, or the fio
// mode alone (--batch-complete-max 0 sets no field), gives fio's rules.
func TestSubmissionModes(t *testing.T) {
	s := valid()
	require.True(t, s.Adaptive())
	b, min, max := s.Submission(32)
	require.Equal(t, []int{32, 1, 32}, []int{b, min, max}, "the whole queue per call at most, every completion refilled")
	s.SubmitMode = SubmitAdaptive
	require.True(t, s.Adaptive())
	require.NoError(t, s.Validate())
	for _, mod := range []func(*Spec){
		func(s *Spec) { s.SubmitMode = SubmitFio },
		func(s *Spec) { s.SubmitBatch = 1 },
		func(s *Spec) { s.CompleteMin = 1 },
		func(s *Spec) { s.CompletePoll = true },
		func(s *Spec) { s.CompleteMax = 4 },
	} {
		s := valid()
		mod(&s)
		require.False(t, s.Adaptive(), "%+v", s)
		require.NoError(t, s.Validate())
	}
	s = valid()
	s.SubmitMode = SubmitFio
	b, min, max = s.Submission(32)
	require.Equal(t, []int{1, 1, 1}, []int{b, min, max}, "fio's defaults: one I/O per call, one completion refilled")
}

func TestFlushSettings(t *testing.T) {
	s := valid()
	n, datasync := s.FlushEvery()
	require.Zero(t, n, "no flush by default")
	require.False(t, datasync)
	s.Fdatasync = 8
	n, datasync = s.FlushEvery()
	require.Equal(t, 8, n)
	require.True(t, datasync)
	s.Fdatasync, s.Fsync = 0, 32
	n, datasync = s.FlushEvery()
	require.Equal(t, 32, n)
	require.False(t, datasync)
	for _, m := range []string{"none", "dsync", "sync"} {
		s.Sync = NormalizeSync(m)
		require.NoError(t, s.Validate(), m)
	}
	require.Equal(t, SyncNone, NormalizeSync("none"))
}

func TestParseBlockSizes(t *testing.T) {
	bs, err := ParseBlockSizes("4k:70,64k:30")
	require.NoError(t, err)
	require.Equal(t, []BlockSize{{4096, 70}, {65536, 30}}, bs)
	require.Equal(t, "4KiB:70,64KiB:30", FormatBlockSizes(bs))
	bs, err = ParseBlockSizes("8k")
	require.NoError(t, err)
	require.Equal(t, []BlockSize{{8192, 1}}, bs)
	for _, bad := range []string{"", "4k:0", "4k:x", "4q", "4k:70,"} {
		_, err := ParseBlockSizes(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "--bs")
	}
	// Equal shares without weights.
	bs, err = ParseBlockSizes("4k,64k")
	require.NoError(t, err)
	require.Equal(t, []BlockSize{{4096, 1}, {65536, 1}}, bs)
	// All weights or none: the size without one is named.
	_, err = ParseBlockSizes("4k:70,64k")
	require.EqualError(t, err, `--bs "64k": has no weight while "4k:70" has one: give every size a weight (4k:70,64k:30) or none (equal shares)`)
	_, err = ParseBlockSizes("4k,64k:30")
	require.EqualError(t, err, `--bs "4k": has no weight while "64k:30" has one: give every size a weight (4k:70,64k:30) or none (equal shares)`)
	_, err = ParseBlockSizes("4k:70,8k:20,64k")
	require.ErrorContains(t, err, `--bs "64k"`)
}

func TestPresets(t *testing.T) {
	p, err := LookupPreset("OLTP")
	require.NoError(t, err)
	require.Equal(t, 67, p.Spec.ReadPct)
	require.Equal(t, 100, p.Spec.RandomPct)
	require.Equal(t, int64(8*KiB), p.Spec.BlockSizes[0].Bytes)
	require.Equal(t, "oltp", p.Spec.Name)
	_, err = LookupPreset("nope")
	require.ErrorContains(t, err, "unknown profile (known: ")
	for _, p := range Presets() {
		s := p.Spec
		s.Duration = time.Second
		s = s.WithDefaults()
		require.NoError(t, s.Validate(), p.Name)
	}
	// The esg appendix workloads, exactly as the report lists them.
	for name, want := range map[string][3]int64{
		"file-server": {8 * KiB, 90, 75}, "oltp": {8 * KiB, 67, 100}, "exchange-db": {4 * KiB, 67, 100},
		"log": {64 * KiB, 0, 0}, "video-on-demand": {512 * KiB, 100, 0},
	} {
		p, err := LookupPreset(name)
		require.NoError(t, err)
		require.Equal(t, want, [3]int64{p.Spec.BlockSizes[0].Bytes, int64(p.Spec.ReadPct), int64(p.Spec.RandomPct)}, name)
	}
}

func TestSameSpecs(t *testing.T) {
	a := Spec{Name: "a", BlockSizes: []BlockSize{{Bytes: 8 * KiB, Weight: 1}}, ReadPct: 100, RandomPct: 100}.WithDefaults()
	b := a
	b.Name = "b"
	require.True(t, SameSpecs([]Spec{a}, []Spec{b}), "names aside")
	b.QueueDepth++
	require.False(t, SameSpecs([]Spec{a}, []Spec{b}))
	c := a
	c.BlockSizes = []BlockSize{{Bytes: 8 * KiB, Weight: 2}}
	require.False(t, SameSpecs([]Spec{a}, []Spec{c}))
	require.False(t, SameSpecs([]Spec{a}, []Spec{a, a}))
}
