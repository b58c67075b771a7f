package devlat

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// sources are the files the objects are built from.
var sources = []string{"bpf/devlat.c", "bpf/kernel.h"}

// TestObjectsRecordTheirSource: bpf/sources.sum, written by make bpf
// beside the objects, names the sources they were built from; a source
// changed without make bpf fails here.
func TestObjectsRecordTheirSource(t *testing.T) {
	want, err := os.ReadFile("bpf/sources.sum")
	require.NoError(t, err)
	var got strings.Builder
	for _, s := range sources {
		b, err := os.ReadFile(s)
		require.NoError(t, err)
		fmt.Fprintf(&got, "%x  %s\n", sha256.Sum256(b), s)
	}
	require.Equal(t, string(want), got.String(), "the BPF sources changed since make bpf built the objects: run it")
}

// TestObjectsAreFromTheSource builds the objects again from the
// committed sources with the same clang and bpf2go, into a temporary
// directory, and compares them byte for byte with the committed ones.
func TestObjectsAreFromTheSource(t *testing.T) {
	testdeps.Need(t, testdeps.Tool("clang-14"))
	gobin := testdeps.LookPath(t, "go") // to run bpf2go
	dir := t.TempDir()
	gen, err := os.ReadFile("gen.go")
	require.NoError(t, err)
	var args []string
	for _, l := range strings.Split(string(gen), "\n") {
		if rest, ok := strings.CutPrefix(l, "//go:generate go tool bpf2go "); ok {
			args = splitQuoted(rest)
		}
	}
	require.NotEmpty(t, args, "gen.go runs bpf2go")
	cmd := exec.Command(gobin, append([]string{"tool", "bpf2go", "-output-dir", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GOPACKAGE=devlat")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, f := range []string{"devlat_bpfel.o", "devlat_bpfel.go"} {
		want, err := os.ReadFile(f)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "%s differs from what make bpf builds from bpf/: run it", f)
	}
}

// splitQuoted splits a go:generate line as go generate does: at spaces,
// a double-quoted string kept whole.
func splitQuoted(s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			out = append(out, s[1:end+1])
			s = s[end+2:]
			continue
		}
		word, rest, _ := strings.Cut(s, " ")
		out = append(out, word)
		s = rest
	}
	return out
}
