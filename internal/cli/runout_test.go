package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// run --out writes the result to the file and nothing to stdout, however
// the run was given (flags, an fio job file, an Iometer file); an --out
// whose directory is missing is bad input before anything is created (a
// Kubernetes Job's pod, without a shell to redirect, relies on it).
func TestRunOut(t *testing.T) {
	if testing.Short() {
		t.Skip("runs I/O") //hygiene:skip -short leaves out the tests that run I/O
	}
	for _, tc := range []struct {
		name string
		args func(t *testing.T, dir, tgt string) []string
	}{
		{"flags", func(t *testing.T, dir, tgt string) []string {
			return []string{"--target", tgt, "--size", "1MiB", "--duration", "50ms", "--ramp", "0s"}
		}},
		{"fio-job", func(t *testing.T, dir, tgt string) []string {
			job := filepath.Join(dir, "j.fio")
			require.NoError(t, os.WriteFile(job, []byte("[rr]\ntime_based\nruntime=50ms\nsize=1m\nrw=randread\nbs=4k\ndirect=1\n"), 0o600))
			return []string{"--fio-job", job, "--target", tgt}
		}},
		{"icf", func(t *testing.T, dir, tgt string) []string {
			file := filepath.Join(dir, "two.icf")
			require.NoError(t, os.WriteFile(file, []byte(twoLineICF), 0o600))
			return []string{"--icf", file, "--target", tgt, "--engine", "sync"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tgt := filepath.Join(dir, "p.dat")
			args := append([]string{"run"}, tc.args(t, dir, tgt)...)
			args = append(args, "--output", "json")

			code, stdout, stderr := runCLI(t, append(args, "--out", filepath.Join(dir, "missing", "r.json"))...)
			require.Equal(t, ExitBadInput, code, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, "--out")
			require.NoFileExists(t, tgt)

			out := filepath.Join(dir, "r.json")
			code, stdout, stderr = runCLI(t, append(args, "--out", out)...)
			require.Equal(t, 0, code, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, "wrote "+out)
			f, err := os.Open(out)
			require.NoError(t, err)
			defer f.Close()
			_, rs, err := result.Decode(f)
			require.NoError(t, err)
			require.Len(t, rs, 1)
			require.Equal(t, tgt, rs[0].Targets[0].Path) // what it measured, however little 50ms holds
		})
	}
}
