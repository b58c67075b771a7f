package workload

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSpecFieldsAreSpelledEverywhere: every field has its flag, config key
// and run API key, and no two share a flag.
func TestSpecFieldsAreSpelledEverywhere(t *testing.T) {
	flags := map[string]SpecField{}
	for _, f := range SpecFields() {
		require.NotEmpty(t, f.Flag(), f)
		require.NotEmpty(t, f.ConfigKey(), f)
		require.NotEmpty(t, f.APIKey(), f)
		require.NotContains(t, flags, f.Flag(), "%s and %s share a flag", f, flags[f.Flag()])
		flags[f.Flag()] = f
	}
	require.Len(t, spellings, len(SpecFields()))
}

// TestValidateNamesTheSpecField: each bad field's error carries which field
// it is, for the config and the run API to name it in their words.
func TestValidateNamesTheSpecField(t *testing.T) {
	good := Spec{BlockSizes: []BlockSize{{4096, 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: 1, Workers: 1,
		Duration: time.Second, Engine: EngineAuto}
	require.NoError(t, good.Validate())
	for want, bad := range map[SpecField]func(s *Spec){
		FieldBlockSizes: func(s *Spec) { s.BlockSizes = nil },
		FieldReadPct:    func(s *Spec) { s.ReadPct = 101 },
		FieldRandomPct:  func(s *Spec) { s.RandomPct = -1 },
		FieldAlign:      func(s *Spec) { s.Align = 100 },
		FieldQueueDepth: func(s *Spec) { s.QueueDepth = 0 },
		FieldWorkers:    func(s *Spec) { s.Workers = 0 },
		FieldDuration:   func(s *Spec) { s.Duration = 0 },
		FieldRamp:       func(s *Spec) { s.Ramp = -time.Second },
		FieldRateIOPS:   func(s *Spec) { s.RateIOPS = -1 },
		FieldEngine:     func(s *Spec) { s.Engine = "spdk" },
		FieldFsync:      func(s *Spec) { s.Fsync = -1 },
		FieldFdatasync:  func(s *Spec) { s.Fdatasync = -1 },
		FieldSync:       func(s *Spec) { s.Sync = "always" },
		FieldRegion:     func(s *Spec) { s.RegionBytes = -1 },
		FieldLines: func(s *Spec) {
			s.BlockSizes, s.ReadPct, s.RandomPct, s.Lines = nil, 0, 0, []Line{{Bytes: 4096, Share: 100, ReadPct: 101}}
		},
	} {
		s := good
		bad(&s)
		var fe *FieldError
		require.True(t, errors.As(s.Validate(), &fe), want)
		require.Equal(t, want, fe.Spec)
		require.Equal(t, want.Flag(), fe.Field[:len(want.Flag())], "the command line's name stays the flag")
		if want == FieldLines {
			require.Equal(t, 1, fe.Line)
		}
	}
}
