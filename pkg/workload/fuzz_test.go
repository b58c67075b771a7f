package workload

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// FuzzParseCycle: a --cycle value is refused with a *FieldError, or gives
// at most MaxCycleValues distinct values valid for the dimension, in a
// form that reads back the same.
func FuzzParseCycle(f *testing.F) {
	for _, s := range []string{"qd=1,2,4,8", "qd=1..32*2", "workers=1..8+1", "bs=4k..1m*2", "bs=4k..64k+4k", "QD = 1..1024*2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCycle(s)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "--cycle" {
				t.Fatalf("ParseCycle(%q): %v is not a --cycle FieldError", s, err)
			}
			return
		}
		var lo, hi int64
		switch c.Dim {
		case CycleQD:
			lo, hi = 1, MaxQueueDepth
		case CycleWorkers:
			lo, hi = 1, MaxWorkers
		case CycleBS:
			lo, hi = MinBlockSize, MaxBlockSize
		default:
			t.Fatalf("ParseCycle(%q): dimension %q", s, c.Dim)
		}
		if len(c.Values) == 0 || len(c.Values) > MaxCycleValues {
			t.Fatalf("ParseCycle(%q): %d values", s, len(c.Values))
		}
		seen := map[int64]bool{}
		for _, v := range c.Values {
			if v < lo || v > hi || seen[v] || (c.Dim == CycleBS && v%512 != 0) {
				t.Fatalf("ParseCycle(%q): value %d", s, v)
			}
			seen[v] = true
		}
		back, err := ParseCycle(c.String())
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("ParseCycle(%q) = %v does not read back from %q: %v, %v", s, c, c.String(), back, err)
		}
	})
}

// FuzzSpecValidate: Validate names a field for any values, never panics,
// and a spec it accepts can be described and drives a generator whose
// I/Os stay inside the region in whole sectors (direct I/O needs them).
func FuzzSpecValidate(f *testing.F) {
	f.Add(int64(4096), 1, int64(65536), 0, 70, 100, 16, 1, int64(time.Second), int64(0), 0, int64(0), int64(0), "auto")
	f.Add(int64(512), 10000, int64(64<<20), 1, 0, 0, 1024, 1024, int64(MaxDuration), int64(MaxDuration), MaxRateIOPS, int64(64<<20), int64(1<<40), "sync")
	f.Add(int64(-1), -1, int64(0), 0, -1, 101, 0, -5, int64(-1), int64(-1), -1, int64(-512), int64(-1), "")
	f.Add(int64(4096), 1, int64(4096), 1, 50, 50, 1, 1, int64(1), int64(0), 0, int64(0), int64(4097), "uring")
	f.Fuzz(func(t *testing.T, bs1 int64, w1 int, bs2 int64, w2, readPct, randomPct, qd, workers int,
		duration, ramp int64, rate int, align, region int64, engine string) {
		s := Spec{BlockSizes: []BlockSize{{bs1, w1}}, ReadPct: readPct, RandomPct: randomPct, QueueDepth: qd, Workers: workers,
			Duration: time.Duration(duration), Ramp: time.Duration(ramp), RateIOPS: rate, Align: align, RegionBytes: region, Engine: EngineName(engine)}
		if bs2 != 0 {
			s.BlockSizes = append(s.BlockSizes, BlockSize{bs2, w2})
		}
		err := s.Validate()
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Reason == "" {
				t.Fatalf("%+v: %v does not name a field", s, err)
			}
			return
		}
		_ = s.Describe()
		_ = PatternLabel(s.ReadPct, s.RandomPct)
		if back, err := ParseBlockSizes(FormatBlockSizes(s.BlockSizes)); err != nil || (len(s.BlockSizes) > 1 && !reflect.DeepEqual(back, s.BlockSizes)) {
			t.Fatalf("block sizes %v do not read back: %v %v", s.BlockSizes, back, err)
		}
		if d := s.WithDefaults(); d.Validate() != nil {
			t.Fatalf("%+v: valid, but not with defaults applied", s)
		}
		r := Region{Len: s.RegionBytes}
		if r.Len == 0 {
			r.Len = s.MaxBlock() * 8
			r.Len -= r.Len % s.Alignment()
		}
		if r.Len < s.MaxBlock() {
			return // an alignment coarser than the default region: the target's size decides
		}
		g, err := NewGenerator(&s, r, nil, 1)
		if err != nil {
			t.Fatalf("valid spec %+v, region %+v: %v", s, r, err)
		}
		var op Op
		for i := 0; i < 32; i++ {
			g.Next(&op)
			// Random offsets keep the alignment; sequential ones follow each
			// other, in whole sectors.
			if op.Offset < 0 || op.Offset+op.Len > r.Len || op.Offset%512 != 0 || (op.Random && op.Offset%s.Alignment() != 0) {
				t.Fatalf("%+v: op %+v out of region %+v", s, op, r)
			}
		}
	})
}

// FuzzBuildSuite: any suite name and command-line options build a suite
// of at most MaxSuitePoints uniquely named, valid points, or a
// *FieldError (exit status 2), never a panic.
func FuzzBuildSuite(f *testing.F) {
	f.Add("characterize", "", "", 0, 0, 1, false, int64(time.Second), int64(0), int64(0), "4k", 100, 100)
	f.Add("peak-iops", "qd=1..64+1", "workers=1..64+1", 0, 0, 3, false, int64(time.Second), int64(time.Second), int64(1<<30), "", 0, 0)
	f.Add("custom", "bs=512..32256+512", "qd=1..32*2", 4, 2, 1, true, int64(time.Minute), int64(0), int64(64<<20), "4k:70,64k:30", 70, 100)
	f.Add("scaling", "workers=1,2,4", "workers=8", 0, 0, 1, false, int64(1), int64(-1), int64(4096), "", 0, 0)
	f.Add("business", "", "", 2000, -1, -3, true, int64(0), int64(0), int64(-1), "", 0, 0)
	f.Fuzz(func(t *testing.T, name, cycle1, cycle2 string, qd, workers, targets int, readOnly bool,
		duration, ramp, region int64, bs string, readPct, randomPct int) {
		o := SuiteOptions{Base: Spec{Duration: time.Duration(duration), Ramp: time.Duration(ramp), RegionBytes: region, Engine: "auto"},
			QueueDepth: qd, Workers: workers, Targets: min(targets, 64), ReadOnly: readOnly}
		for _, cs := range []string{cycle1, cycle2} {
			if cs == "" {
				continue
			}
			c, err := ParseCycle(cs)
			if err != nil {
				return
			}
			o.Cycles = append(o.Cycles, c)
		}
		if sizes, err := ParseBlockSizes(bs); err == nil {
			custom := o.Base
			custom.BlockSizes, custom.ReadPct, custom.RandomPct = sizes, readPct, randomPct
			custom = custom.WithDefaults()
			o.Custom = &custom
		}
		s, err := BuildSuite(name, o)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("BuildSuite(%q, %+v): %v is not a FieldError", name, o, err)
			}
			return
		}
		if len(s.Points) == 0 || len(s.Points) > MaxSuitePoints {
			t.Fatalf("BuildSuite(%q): %d points", name, len(s.Points))
		}
		seen := map[string]bool{}
		for _, p := range s.Points {
			if p.Name == "" || seen[p.Name] || p.Pattern == "" || p.Section == "" || len(p.Specs) == 0 || p.Span < 0 {
				t.Fatalf("BuildSuite(%q): point %+v", name, p)
			}
			seen[p.Name] = true
			if readOnly && p.WritesData() {
				t.Fatalf("BuildSuite(%q): read-only, but %s writes", name, p.Name)
			}
			for i := range p.Specs {
				if err := p.Specs[i].Validate(); err != nil {
					t.Fatalf("BuildSuite(%q): point %s: %v", name, p.Name, err)
				}
			}
		}
	})
}
