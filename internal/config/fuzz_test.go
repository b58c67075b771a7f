package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse: whatever the bytes, Parse never panics (nor overflows its
// stack, nor hangs), and either returns every problem as
// "FILE[:LINE]: …" — with a line wherever the problem is about a key —
// or a configuration that holds every promise Config makes. The seeds
// are the test configs and testdata/fuzz/FuzzParse (merge keys, anchors,
// odd scalars, bytes that are not YAML).
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"testdata/good/*.yaml", "testdata/bad/*.yaml"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	const file = "fuzz.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(file, data, Options{})
		if err != nil {
			if cfg != nil {
				t.Fatalf("an error and a config: %v", err)
			}
			checkError(t, file, err)
			return
		}
		checkConfig(t, file, cfg)
		again, err := Parse(file, data, Options{})
		if err != nil || !reflect.DeepEqual(cfg, again) {
			t.Fatalf("the same bytes parse differently the second time: %v", err)
		}
	})
}

func checkError(t *testing.T, file string, err error) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("not a *config.Error: %T %v", err, err)
	}
	if len(ce.Problems) == 0 || len(ce.Problems) > maxProblems+1 {
		t.Fatalf("an error with %d problems", len(ce.Problems))
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) < len(ce.Problems) {
		t.Fatalf("%d problems on %d lines:\n%s", len(ce.Problems), len(lines), err)
	}
	prev := 0
	for _, p := range ce.Problems {
		if p.File != file || p.Msg == "" {
			t.Fatalf("problem %+v: want file %q and a message", p, file)
		}
		prefix := file + ": "
		if p.Line > 0 {
			prefix = file + ":" + strconv.Itoa(p.Line) + ": "
		}
		if !strings.HasPrefix(p.String(), prefix) {
			t.Fatalf("problem %q does not start with %q", p, prefix)
		}
		if p.Path != "" && p.Line <= 0 {
			t.Fatalf("problem %q is about key %s but has no line", p, p.Path)
		}
		if p.Line > 0 && p.Line < prev {
			t.Fatalf("problems out of file order:\n%s", err)
		}
		prev = max(prev, p.Line)
	}
}

// checkConfig asserts what validation promises of a loaded config.
func checkConfig(t *testing.T, file string, cfg *Config) {
	t.Helper()
	g := cfg.Global
	switch {
	case cfg.File != file:
		t.Fatalf("File %q", cfg.File)
	case g.SnapshotInterval < minSnapshotInterval || g.SnapshotInterval > maxSnapshotInterval,
		g.RunHistory < 1 || g.RunHistory > maxRunHistory,
		g.MaxConcurrentProbes < 1 || g.MaxConcurrentProbes > maxProbes:
		t.Fatalf("global out of range: %+v", g)
	case len(cfg.Jobs)+len(cfg.Modules)+len(cfg.Devices) == 0 && cfg.lines["api"] == 0:
		t.Fatal("a config with nothing to do")
	}
	for name, tg := range cfg.Targets {
		if tg.Name != name || !filepath.IsAbs(tg.Path) || filepath.Clean(tg.Path) != tg.Path || tg.Size < 0 || tg.Size%512 != 0 {
			t.Fatalf("target %q: %+v", name, tg)
		}
	}
	for name, j := range cfg.Jobs {
		if j.Name != name || j.Target == nil || cfg.Targets[j.Target.Name] != j.Target || len(j.Points) == 0 {
			t.Fatalf("job %q: %+v", name, j)
		}
		switch j.Mode {
		case OnDemand, Continuous:
			if j.Schedule != (Schedule{}) {
				t.Fatalf("job %q: %s with a schedule %+v", name, j.Mode, j.Schedule)
			}
		case Scheduled:
			sc := j.Schedule
			if sc.Every < minEvery || sc.Jitter < 0 || sc.Jitter >= sc.Every {
				t.Fatalf("job %q: schedule %+v", name, sc)
			}
		default:
			t.Fatalf("job %q: mode %q", name, j.Mode)
		}
		for _, p := range j.Points {
			if p.Name == "" || len(p.Specs) == 0 {
				t.Fatalf("job %q: point %+v", name, p)
			}
			for _, s := range p.Specs {
				if err := s.Validate(); err != nil {
					t.Fatalf("job %q point %q: %v", name, p.Name, err)
				}
				if s.RegionBytes != j.Target.Size {
					t.Fatalf("job %q: region %d, target size %d", name, s.RegionBytes, j.Target.Size)
				}
				if j.Mode == Continuous && s.RateIOPS == 0 {
					t.Fatalf("continuous job %q without a rate", name)
				}
			}
		}
	}
	for name, m := range cfg.Modules {
		if m.Name != name || m.MaxDuration < MinProbeDuration || m.MaxDuration > MaxProbeDuration || m.Spec.Duration != m.MaxDuration {
			t.Fatalf("module %q: %+v", name, m)
		}
		if err := m.Spec.Validate(); err != nil {
			t.Fatalf("module %q: %v", name, err)
		}
	}
}
