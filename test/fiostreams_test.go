package test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// tracedIO is one pread64/pwrite64 of a trace, in the order it was issued.
type tracedIO struct {
	write       bool
	len, offset int64
}

var (
	straceCall    = regexp.MustCompile(`^(\d+)\s+(pread64|pwrite64)\((.*)$`)
	straceResumed = regexp.MustCompile(`^(\d+)\s+<\.\.\. (pread64|pwrite64) resumed>(.*)$`)
	straceArgs    = regexp.MustCompile(`, (\d+), (\d+)\)\s+= (-?\d+)`)
)

// readStrace reads the pread64/pwrite64 calls of an `strace -f` output:
// a call split by another thread's (`<unfinished ...>` then `<... resumed>`)
// is joined and kept at the place it was issued.
func readStrace(t *testing.T, path string) []tracedIO {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var calls []string
	pending := map[string]int{} // tid -> index of its unfinished call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := straceCall.FindStringSubmatch(line); m != nil {
			calls = append(calls, m[2]+"("+m[3])
			if strings.HasSuffix(line, "<unfinished ...>") {
				pending[m[1]] = len(calls) - 1
				calls[len(calls)-1] = strings.TrimSuffix(calls[len(calls)-1], "<unfinished ...>")
			}
		} else if m := straceResumed.FindStringSubmatch(line); m != nil {
			i, ok := pending[m[1]]
			require.True(t, ok, "resumed call without its start: %s", line)
			calls[i] += m[3]
			delete(pending, m[1])
		}
	}
	require.NoError(t, sc.Err())
	var ios []tracedIO
	for _, c := range calls {
		m := straceArgs.FindStringSubmatch(c)
		require.NotNil(t, m, "cannot read the length and offset of %q", c)
		n, _ := strconv.ParseInt(m[1], 10, 64)
		off, _ := strconv.ParseInt(m[2], 10, 64)
		require.Equal(t, m[1], m[3], "a short or failed transfer: %s", c)
		ios = append(ios, tracedIO{write: strings.HasPrefix(c, "pwrite64"), len: n, offset: off})
	}
	return ios
}

// streamsOf checks fio's invariant on a trace's transfers of bs bytes over
// a region of size bytes at offset 0: every read starts where the previous
// read ended, every write where the previous write ended (both streams
// starting at 0, each back at 0 when the next transfer would pass the
// region's end). It returns the reads, the writes, and how many transfers
// did not start where the previous transfer of either direction ended
// (what tells two streams from one).
func streamsOf(t *testing.T, tool string, ios []tracedIO, bs, size int64) (reads, writes, crossed int) {
	t.Helper()
	var end [2]int64
	prev := int64(-1)
	for i, io := range ios {
		if io.len != bs {
			continue // ioprobe's fill of a new file, before it measures
		}
		d := 0
		if io.write {
			d = 1
		}
		want := end[d]
		if want+bs > size {
			want = 0
		}
		require.Equal(t, want, io.offset, "%s: transfer %d (write %v) must start where the previous of its direction ended", tool, i, io.write)
		if prev >= 0 && io.offset != prev {
			crossed++
		}
		end[d], prev = io.offset+bs, io.offset+bs
		if io.write {
			writes++
		} else {
			reads++
		}
	}
	return reads, writes, crossed
}

// TestFioSequentialStreamPerDirection: fio's rw=rw keeps a sequential
// position per direction (io_u.c, last_pos[ddir]), and so does ioprobe
// running the same job file: from strace of both tools, every read follows
// the previous read and every write the previous write, and both mixes
// are 70% reads.
func TestFioSequentialStreamPerDirection(t *testing.T) {
	testdeps.Need(t, testdeps.Tool("fio"), testdeps.Tool("strace"))
	const bs, size = 4096, 1 << 20 // small: both streams wrap many times
	dir := t.TempDir()
	job := "[global]\ntime_based\nruntime=1\nsize=1m\ndirect=1\nioengine=psync\n[rw]\nrw=rw\nrwmixread=70\nbs=4k\nfilename=%s\n"
	run := func(tool string, args ...string) []tracedIO {
		data := filepath.Join(dir, tool+".dat")
		jobFile := filepath.Join(dir, tool+".fio")
		require.NoError(t, os.WriteFile(jobFile, []byte(strings.ReplaceAll(job, "%s", data)), 0o600))
		trace := filepath.Join(dir, tool+".strace")
		argv := append([]string{"-f", "-qq", "-e", "signal=none", "-e", "trace=pread64,pwrite64", "-P", data, "-o", trace}, args...)
		argv = append(argv, jobFile)
		o := runCmd(t, exec.Command("strace", argv...))
		require.Equal(t, 0, o.code, o.stderr)
		if tool == "ioprobe" {
			var r result.Result
			require.NoError(t, json.Unmarshal([]byte(o.stdout), &r), o.stdout)
			require.Equal(t, "direction", r.Workload.SequentialStreams, "the result says which rule ran")
			require.Equal(t, 0, r.Workload.RandomPct)
		}
		return readStrace(t, trace)
	}
	for tool, ios := range map[string][]tracedIO{
		"fio":     run("fio", "fio", "--output=/dev/null"),
		"ioprobe": run("ioprobe", binary, "run", "--output", "json", "--fio-job"),
	} {
		reads, writes, crossed := streamsOf(t, tool, ios, bs, size)
		total := reads + writes
		require.Greater(t, writes, 50, "%s: %d reads, %d writes", tool, reads, writes)
		require.InDelta(t, 0.70, float64(reads)/float64(total), 0.05, "%s: %d reads of %d", tool, reads, total)
		// Two interleaved streams: about every switch of direction starts
		// elsewhere than the previous transfer ended (2·0.7·0.3 of them).
		require.Greater(t, float64(crossed)/float64(total), 0.2, "%s: %d of %d transfers leave the previous one", tool, crossed, total)
	}
}
