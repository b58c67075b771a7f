package fiojob

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// unitRows are sizes as fio 3.33 reads them (fio --parse-only
// --debug=parse, "out=": TestUnitsAsFioReadsThem checks every row against
// the fio installed here), kb_base=1024 unless the row says 1000.
var unitRows = []struct {
	in     string
	kbBase int64
	want   int64
}{
	{"4096", 1024, 4096}, {"4k", 1024, 4096}, {"4K", 1024, 4096}, {"4kb", 1024, 4096}, {"4KB", 1024, 4096},
	// "ki", "mi", "gi" without "b" are the k, m, g prefixes (the i is
	// ignored): powers of 1024 by default.
	{"4ki", 1024, 4096}, {"4Ki", 1024, 4096}, {"1Gi", 1024, 1 << 30}, {"1gi", 1024, 1 << 30}, {"32mi", 1024, 32 << 20},
	// "kib", "mib", "gib" are the other base: fio's compatibility mode.
	{"4KiB", 1024, 4000}, {"4kib", 1024, 4000}, {"1GiB", 1024, 1e9}, {"1MiB", 1024, 1e6}, {"1Pib", 1024, 1e15},
	{"1m", 1024, 1 << 20}, {"1M", 1024, 1 << 20}, {"1mb", 1024, 1 << 20}, {"1g", 1024, 1 << 30}, {"1t", 1024, 1 << 40},
	{"1p", 1024, 1 << 50}, {"1pi", 1024, 1 << 50}, {"4096b", 1024, 4096}, {"1b", 1024, 1}, {"1B", 1024, 1},
	// Hexadecimal wherever "0x" appears; the unit read after the digits.
	{"0x1000", 1024, 4096}, {"0x10k", 1024, 16}, {"10x", 1024, 16}, {"0X1F", 1024, 31}, {"00x10", 1024, 0},
	// Letters fio does not know count for 1; a dot ends the number.
	{"4x", 1024, 4}, {"4kk", 1024, 4096}, {"1.5g", 1024, 1}, {"1e3", 1024, 1}, {"7bytes", 1024, 7},
	{"2kbps", 1024, 2048}, {"9ms", 1024, 9 << 20}, {"1s", 1024, 1}, {"+4k", 1024, 4096},
	// A blank before the unit hides it, as fio keeps "bs = 4k" as " 4k".
	{" 4k", 1024, 4},
	// kb_base=1000: the standards' meaning.
	{"4k", 1000, 4000}, {"4KiB", 1000, 4096}, {"4ki", 1000, 4000}, {"1mib", 1000, 1 << 20}, {"1m", 1000, 1e6}, {"1Gi", 1000, 1e9},
}

func TestParseNumber(t *testing.T) {
	for _, c := range unitRows {
		n, err := parseNumber(c.in, c.kbBase)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, n.val, "%q with kb_base=%d", c.in, c.kbBase)
		require.False(t, n.percent)
	}
	n, err := parseNumber("50%", 1024)
	require.NoError(t, err)
	require.Equal(t, number{val: 50, percent: true}, n)
	for _, bad := range []string{"", "k", "x", "-4k", "150%", "(4*1024)", "99999999999999999999"} {
		_, err := parseNumber(bad, 1024)
		require.Error(t, err, bad)
	}
	// What fio's reading ignored is kept for a note.
	n, _ = parseNumber("1.5g", 1024)
	require.Equal(t, ".5g", n.ignored)
	n, _ = parseNumber("4ki", 1024)
	require.Equal(t, "i", n.ignored)
	for _, clean := range []string{"4k", "4KiB", "4096b", "1m", "4kb"} {
		n, _ = parseNumber(clean, 1024)
		require.Empty(t, n.ignored, clean)
	}
}

// timeRows are times as fio 3.33 reads them, in µs: runtime (a bare
// number is seconds) and thinktime (a bare number is µs).
var timeRows = []struct {
	in               string
	runtime, thinkUs int64
}{
	{"10", 10e6, 10}, {"10s", 10e6, 10e6}, {"10m", 600e6, 600e6}, {"2h", 7200e6, 7200e6}, {"3d", 259200e6, 259200e6},
	{"500ms", 500e3, 500e3}, {"10us", 10, 10}, {"250usec", 250, 250}, {"5msec", 5000, 5000},
	// fio's quirks: only exactly s, m, h, d are those units; other
	// letters are µs; a dot ends the number.
	{"10sec", 10, 10}, {"1min", 1, 1}, {"1.5s", 1e6, 1}, {"10x", 16, 16}, {" 10", 10e6, 10},
}

func TestParseTime(t *testing.T) {
	for _, c := range timeRows {
		us, _, err := parseTimeUs(c.in, true)
		require.NoError(t, err, c.in)
		require.Equal(t, c.runtime, us, "runtime=%s", c.in)
		us, _, err = parseTimeUs(c.in, false)
		require.NoError(t, err, c.in)
		require.Equal(t, c.thinkUs, us, "thinktime=%s", c.in)
	}
	_, note, _ := parseTimeUs("10sec", true)
	require.Contains(t, note, "microseconds")
}

func TestSplitDirections(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [3]string
		ok   [3]bool
	}{
		{"300", [3]string{"300", "300", "300"}, [3]bool{true, true, true}},
		{"300,100", [3]string{"300", "100", "100"}, [3]bool{true, true, true}},
		{",100", [3]string{"", "100", "100"}, [3]bool{true, true, true}},
		{"300,", [3]string{"300", "300", "300"}, [3]bool{true, true, true}},
		{"4k:8k", [3]string{"4k", "8k", "8k"}, [3]bool{true, true, true}},
		{"4k-8k", [3]string{"4k", "8k", "8k"}, [3]bool{true, true, true}},
		{"1,2,3", [3]string{"1", "2", "3"}, [3]bool{true, true, true}},
	} {
		got, ok := splitDirections(c.in)
		require.Equal(t, c.want, got, c.in)
		require.Equal(t, c.ok, ok, c.in)
	}
}

// TestUnitsAsFioReadsThem asks the fio installed here (scripts/test-deps.sh
// installs it) what each row of unitRows and timeRows is, from its parser's
// own debug output, so the tables are fio's behaviour and not our reading
// of its source.
func TestUnitsAsFioReadsThem(t *testing.T) {
	testdeps.Need(t, testdeps.Tool("fio"))
	var job bytes.Buffer
	for i, c := range unitRows {
		fmt.Fprintf(&job, "[u%d]\nkb_base=%d\nfilename=/dev/null\nsize=%s\n", i, c.kbBase, c.in)
	}
	for i, c := range timeRows {
		fmt.Fprintf(&job, "[t%d]\nfilename=/dev/null\nsize=1m\nruntime=%s\nthinktime=%s\n", i, c.in, c.in)
	}
	path := filepath.Join(t.TempDir(), "units.fio")
	require.NoError(t, os.WriteFile(path, job.Bytes(), 0o600))
	out, err := exec.Command("fio", "--parse-only", "--debug=parse", path).CombinedOutput()
	require.NoError(t, err, string(out))
	// "Parsing section [u3]" then "__handle_option=size, ..." and "ret=0, out=N".
	section := regexp.MustCompile(`Parsing section \[(\w+)\]`)
	handle := regexp.MustCompile(`__handle_option=(\w+),`)
	result := regexp.MustCompile(`ret=0, out=(\d+)`)
	got := map[string]int64{}
	var sect, opt string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := section.FindStringSubmatch(line); m != nil {
			sect = m[1]
		} else if m := handle.FindStringSubmatch(line); m != nil {
			opt = m[1]
		} else if m := result.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseUint(m[1], 10, 64)
			got[sect+"."+opt] = int64(v)
		}
	}
	for i, c := range unitRows {
		require.Equal(t, c.want, got[fmt.Sprintf("u%d.size", i)], "fio's size=%s with kb_base=%d", c.in, c.kbBase)
	}
	for i, c := range timeRows {
		require.Equal(t, c.runtime, got[fmt.Sprintf("t%d.runtime", i)], "fio's runtime=%q", c.in)
		require.Equal(t, c.thinkUs, got[fmt.Sprintf("t%d.thinktime", i)], "fio's thinktime=%q", c.in)
	}
	require.True(t, strings.Contains(string(out), "Parsing section"), "fio's debug output has the sections")
}
