package workload

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNormalizedOneLineForm(t *testing.T) {
	s := Spec{BlockSizes: []BlockSize{{4 * KiB, 70}, {64 * KiB, 30}}, ReadPct: 67, RandomPct: 75, Align: 8 * KiB}
	require.Equal(t, []Line{
		{Bytes: 4 * KiB, Share: 70, ReadPct: 67, RandomPct: 75, Align: 8 * KiB},
		{Bytes: 64 * KiB, Share: 30, ReadPct: 67, RandomPct: 75, Align: 8 * KiB},
	}, s.Normalized())
	require.True(t, s.OneLineForm())

	got := s.Normalized()
	got[0].Bytes = 1
	require.Equal(t, 4*KiB, s.BlockSizes[0].Bytes, "Normalized returns the caller's copy")

	l := lineSpec(Line{Bytes: 8 * KiB, Share: 100, ReadPct: 50, RandomPct: 50})
	require.Equal(t, l.Lines, l.Normalized())
}

func TestOneLineFormTellsWhatOnlyLinesCanSay(t *testing.T) {
	base := []Line{{Bytes: 4 * KiB, Share: 50, ReadPct: 67, RandomPct: 100}, {Bytes: 8 * KiB, Share: 50, ReadPct: 67, RandomPct: 100}}
	s := lineSpec(base...)
	require.True(t, s.OneLineForm())
	for name, mod := range map[string]func(*Line){
		"read":   func(l *Line) { l.ReadPct = 0 },
		"random": func(l *Line) { l.RandomPct = 0 },
		"align":  func(l *Line) { l.Align = 4 * KiB },
		"delay":  func(l *Line) { l.DelayMs = 1 },
		"burst":  func(l *Line) { l.Burst = 2 },
		"size":   func(l *Line) { l.Bytes = 4 * KiB },
	} {
		s := lineSpec(base...)
		mod(&s.Lines[1])
		require.False(t, s.OneLineForm(), name)
	}
	one := lineSpec(Line{Bytes: 4 * KiB, Burst: 1, ReadPct: 1})
	require.True(t, one.OneLineForm(), "burst 1 is the default burst")
}

func TestLinesJSONRoundTrip(t *testing.T) {
	s := lineSpec(
		Line{Bytes: 512, Share: 25, ReadPct: 100, RandomPct: 0, Align: 4 * KiB, DelayMs: 10, Burst: 4},
		Line{Bytes: 64 * KiB, Share: 75, ReadPct: 0, RandomPct: 100},
	)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	require.Contains(t, string(b), `"lines":[{"bytes":512,"share":25,"read_pct":100,"random_pct":0,"align_bytes":4096,"delay_ms":10,"burst":4},{"bytes":65536,"share":75,"read_pct":0,"random_pct":100}]`)
	var back Spec
	require.NoError(t, json.Unmarshal(b, &back))
	back.Duration = s.Duration
	require.Equal(t, s, back)

	old := valid()
	b, err = json.Marshal(old)
	require.NoError(t, err)
	require.NotContains(t, string(b), "lines", "today's specs keep today's JSON")
}

func TestLinesWithDefaults(t *testing.T) {
	s := Spec{Lines: []Line{{Bytes: 4 * KiB, ReadPct: 100}}}.WithDefaults()
	require.Equal(t, 100, s.Lines[0].Share, "a single line is the whole specification")
	require.Empty(t, s.BlockSizes, "a spec written as lines gets no default block size")
	require.Equal(t, DefaultQueueDepth, s.QueueDepth)

	in := []Line{{Bytes: 4 * KiB, Share: 40}, {Bytes: 8 * KiB, Share: 60}}
	s = Spec{Lines: in}.WithDefaults()
	s.Lines[0].Share = 1
	require.Equal(t, 40, in[0].Share, "WithDefaults copies the lines")
}

func TestValidateNamesTheLine(t *testing.T) {
	good := func() Spec {
		return lineSpec(Line{Bytes: 4 * KiB, Share: 60, ReadPct: 67, RandomPct: 100}, Line{Bytes: 64 * KiB, Share: 40})
	}
	s := good()
	require.NoError(t, s.Validate())
	cases := []fieldCase{
		{"size", func(s *Spec) { s.Lines[1].Bytes = 256 }, "--line 2 256B: transfer size must be between 512B and 64MiB"},
		{"sector", func(s *Spec) { s.Lines[0].Bytes = 1000 }, "--line 1 1000B: transfer size must be a multiple of 512 bytes"},
		{"share", func(s *Spec) { s.Lines[1].Share = 101 }, "--line 2 share=101: must be between 0 and 100"},
		{"sum", func(s *Spec) { s.Lines[1].Share = 30 }, "--line share=60+30: the shares sum to 90, must sum to 100"},
		{"read", func(s *Spec) { s.Lines[1].ReadPct = -1 }, "--line 2 read=-1: must be between 0 and 100"},
		{"random", func(s *Spec) { s.Lines[0].RandomPct = 150 }, "--line 1 random=150: must be between 0 and 100"},
		{"align", func(s *Spec) { s.Lines[1].Align = 1000 }, "--line 2 align=1000B: must be a multiple of 512 bytes"},
		{"delay", func(s *Spec) { s.Lines[1].DelayMs = -3 }, "--line 2 delay=-3: must be between 0 and"},
		{"burst", func(s *Spec) { s.Lines[0].Burst = -1 }, "--line 1 burst=-1: must be between 0 and"},
		{"with bs", func(s *Spec) { s.BlockSizes = one(4 * KiB) }, "cannot be combined with --bs"},
		{"with read-pct", func(s *Spec) { s.ReadPct = 50 }, "cannot be combined with --read-pct"},
		{"too many", func(s *Spec) { s.Lines = make([]Line, MaxLines+1) }, "--line 101: at most 100 lines"},
		{"run fields still checked", func(s *Spec) { s.QueueDepth = -1 }, "--qd -1"},
		{"region", func(s *Spec) { s.RegionBytes = 8 * KiB }, "--size 8KiB: must hold at least one transfer of 64KiB"},
	}
	requireFieldErrors(t, good, cases)
}

func TestParseLine(t *testing.T) {
	l, err := ParseLine("4k,share=10,read=67,random=100,align=8k,delay=5,burst=3")
	require.NoError(t, err)
	require.Equal(t, Line{Bytes: 4 * KiB, Share: 10, ReadPct: 67, RandomPct: 100, Align: 8 * KiB, DelayMs: 5, Burst: 3}, l)
	back, err := ParseLine(FormatLine(l))
	require.NoError(t, err)
	require.Equal(t, l, back)

	l, err = ParseLine("64KiB, READ=0 ,random=0%")
	require.NoError(t, err)
	require.Equal(t, Line{Bytes: 64 * KiB, Share: 100, ReadPct: 0, RandomPct: 0}, l, "keys are case-insensitive; share defaults to the whole spec")
	l, err = ParseLine("512")
	require.NoError(t, err)
	require.Equal(t, Line{Bytes: 512, Share: 100, ReadPct: 100, RandomPct: 100}, l, "ioprobe's default pattern: random read")

	for in, want := range map[string]string{
		"":                 "must start with a transfer size",
		"share=10":         "must start with a transfer size",
		"4q":               `unknown unit "q"`,
		"4k,share":         `"share" is not key=value`,
		"4k,size=3":        `unknown key "size"`,
		"4k,read=1,read=2": "read given twice",
		"4k,read=half":     "read=half is not a whole number",
		"4k,align=3x":      "align: size",
		"4k,reply=0":       `unknown key "reply"`,
	} {
		_, err := ParseLine(in)
		require.Error(t, err, in)
		require.Contains(t, err.Error(), want, in)
		require.Contains(t, err.Error(), "--line", in)
	}
}

func TestMixSummarisesLines(t *testing.T) {
	s := lineSpec(
		Line{Bytes: 4 * KiB, Share: 50, ReadPct: 100, RandomPct: 100},
		Line{Bytes: 4 * KiB, Share: 25, ReadPct: 0, RandomPct: 0},
		Line{Bytes: 64 * KiB, Share: 25, ReadPct: 0, RandomPct: 100},
	)
	bs, r, rnd := s.Mix()
	require.Equal(t, []BlockSize{{4 * KiB, 75}, {64 * KiB, 25}}, bs)
	require.Equal(t, 50, r)
	require.Equal(t, 75, rnd)
	require.True(t, s.WritesData())
	require.Equal(t, int64(4*KiB), s.MinBlock())
	require.Equal(t, int64(64*KiB), s.MaxBlock())
	require.Equal(t, "3 lines, 4KiB-64KiB", s.Describe())

	burst := lineSpec(Line{Bytes: 4 * KiB, Share: 60, ReadPct: 100, RandomPct: 100}, Line{Bytes: 64 * KiB, Share: 40, Burst: 4})
	bs, r, rnd = burst.Mix()
	require.Equal(t, []BlockSize{{4 * KiB, 60}, {64 * KiB, 160}}, bs, "a line is drawn per burst: share × burst")
	require.Equal(t, 27, r) // 60 of 220
	require.Equal(t, 27, rnd)

	reads := lineSpec(Line{Bytes: 4 * KiB, Share: 100, ReadPct: 100}, Line{Bytes: 8 * KiB, ReadPct: 0})
	require.False(t, reads.WritesData(), "a line with no share issues nothing")

	old := Spec{BlockSizes: one(8 * KiB), ReadPct: 67, RandomPct: 100}
	bs, r, rnd = old.Mix()
	require.Equal(t, one(8*KiB), bs)
	require.Equal(t, 67, r)
	require.Equal(t, 100, rnd)
}

func TestAlignmentOfLines(t *testing.T) {
	s := lineSpec(Line{Bytes: 1 * KiB, Share: 50}, Line{Bytes: 64 * KiB, Share: 50, Align: 16 * KiB})
	require.Equal(t, 1*KiB, s.Alignment(), "the granularity every offset and transfer keeps")
	s = lineSpec(Line{Bytes: 4 * KiB, Share: 50, ReadPct: 1}, Line{Bytes: 6 * KiB, Share: 50})
	require.Equal(t, 2*KiB, s.Alignment())
	s = lineSpec(Line{Bytes: 2 * KiB, Share: 50}, Line{Bytes: 64 * KiB, Share: 50})
	require.Equal(t, 2*KiB, s.Alignment(), "one-line form, unset: the smallest transfer size, as today")
	s = lineSpec(Line{Bytes: 4 * KiB, Share: 50, Align: 8 * KiB}, Line{Bytes: 64 * KiB, Share: 50, Align: 8 * KiB})
	require.Equal(t, 8*KiB, s.Alignment(), "one-line form: its alignment, as --align")
}

func TestAllInOneIsIometers(t *testing.T) {
	p, err := LookupPreset("All_In_One")
	require.NoError(t, err)
	s := p.Spec
	s.Duration = time.Second
	s = s.WithDefaults()
	require.NoError(t, s.Validate())
	require.Len(t, s.Lines, 29)
	require.Equal(t, Line{Bytes: 512, Share: 4, ReadPct: 100, RandomPct: 0}, s.Lines[0])
	require.Equal(t, Line{Bytes: 4 * KiB, Share: 4, ReadPct: 0, RandomPct: 100, Align: 4 * KiB}, s.Lines[12], "the last line with 4 (100 mod 29 = 13)")
	require.Equal(t, Line{Bytes: 16 * KiB, Share: 3, ReadPct: 100}, s.Lines[13])
	require.Equal(t, Line{Bytes: 256 * KiB, Share: 3, ReadPct: 0}, s.Lines[28])
	require.True(t, s.WritesData())
	require.False(t, s.OneLineForm())
	s.Lines[0].Share = 0
	q, _ := LookupPreset("all-in-one")
	require.Equal(t, 4, q.Spec.Lines[0].Share, "a looked-up preset is the caller's copy")
}

// FuzzParseLine: any --line value either reads back through FormatLine to
// the same line or is a *FieldError naming --line (exit 2), never a panic;
// a line that reads and validates runs without leaving its region.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"4k,share=10,read=67,random=100,align=8k,delay=5,burst=3", "512", "64KiB, READ=0 ,random=0%", "4k,share", "=", ",,", "1e9k,burst=-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		l, err := ParseLine(v)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "--line" {
				t.Fatalf("%q: %v is not a --line FieldError", v, err)
			}
			return
		}
		back, err := ParseLine(FormatLine(l))
		if err != nil || back != l {
			t.Fatalf("%q: %+v reads back as %+v, %v", v, l, back, err)
		}
		l.Share = TotalShare
		s := lineSpec(l)
		if s.Validate() != nil {
			return
		}
		r := Region{Len: l.Bytes * 4}
		if a := s.Alignment(); r.Len%a != 0 {
			r.Len += a - r.Len%a
		}
		g, err := NewGenerator(&s, r, nil, 1)
		if err != nil {
			t.Fatalf("%q: valid line, region %d: %v", v, r.Len, err)
		}
		var op Op
		for i := 0; i < 16; i++ {
			g.Next(&op)
			if op.Offset < 0 || op.Offset+op.Len > r.Len {
				t.Fatalf("%q: op %+v outside the region of %d bytes", v, op, r.Len)
			}
		}
	})
}
