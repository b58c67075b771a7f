package iobuf

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestContentLayoutIsFios: each segment is its random part, then the
// pattern from its first byte (fio's fill_random_buf_percentage and
// cpy_pattern), the last segment shorter when the buffer is.
func TestContentLayoutIsFios(t *testing.T) {
	pat := []byte{0xde, 0xad, 0xbe, 0xef}
	s := NewStream(Content{Percent: 60, Segment: 1000, Pattern: pat, Segmented: true}, 1)
	f := s.NewFiller(2)
	buf := make([]byte, 2500)
	f.Fill(buf)
	for _, seg := range [][]byte{buf[:1000], buf[1000:2000], buf[2000:]} {
		rnd := len(seg) * 40 / 100
		require.NotEqual(t, pat, seg[:4], "random first")
		want := bytes.Repeat(pat, len(seg))[:len(seg)-rnd]
		require.Equal(t, want, seg[rnd:], "then the pattern from its first byte")
	}
	require.NotEqual(t, buf[:400], buf[1000:1400], "each segment its own seed")
}

// TestDedupeRepeatsTheNextUnique: fio hands a dedupe buffer the seeds its
// next unique buffer will have; 100% repeats one buffer forever.
func TestDedupeRepeatsTheNextUnique(t *testing.T) {
	s := NewStream(Content{Segment: 512, Segmented: true, Dedupe: 100}, 3)
	f := s.NewFiller(4)
	a, b := make([]byte, 4096), make([]byte, 4096)
	f.Fill(a)
	f.Fill(b)
	require.Equal(t, a, b)

	s = NewStream(Content{Segment: 512, Segmented: true, Dedupe: 50}, 3)
	f = s.NewFiller(5)
	seen := map[string]int{}
	var order []string
	for range 2000 {
		f.Fill(a)
		seen[string(a)]++
		order = append(order, string(a))
	}
	require.InDelta(t, 0.5, 1-float64(len(seen))/2000, 0.05, "half the buffers repeat another")
	// A repeated buffer's copies come just before its unique one: each
	// content's buffers are one run, never met again after another.
	done := map[string]bool{}
	for i, c := range order {
		require.False(t, done[c], "buffer %d repeats one from before another", i)
		if i+1 < len(order) && order[i+1] != c {
			done[c] = true
		}
	}

	ws := NewStream(Content{Segment: 4096, Segmented: true, Dedupe: 100, WorkingSet: 4, PageSegments: 1}, 9)
	f = ws.NewFiller(1)
	pages := map[string]bool{}
	for range 200 {
		f.Fill(a)
		pages[string(a)] = true
	}
	require.Len(t, pages, 4, "working_set: the first 4 unique pages")
}

// TestWholeBufferContents: zeros, a pattern, random.
func TestWholeBufferContents(t *testing.T) {
	buf := make([]byte, 1030)
	f := NewStream(Content{Zero: true}, 1).NewFiller(1)
	FillRandom(buf, 1)
	f.Fill(buf)
	require.Equal(t, make([]byte, 1030), buf)
	f = NewStream(Content{Pattern: []byte("abc")}, 1).NewFiller(1)
	f.Fill(buf)
	require.Equal(t, bytes.Repeat([]byte("abc"), 344)[:1030], buf)
	f = NewStream(Content{}, 1).NewFiller(1)
	f.Fill(buf)
	c := append([]byte(nil), buf...)
	f.Fill(buf)
	require.NotEqual(t, c, buf, "random, new each fill")
}

// TestScrambleAsFio: the offset and the time in each sector of zeros (fio's
// small_content_scramble): every sector unique, at most 24 bytes set.
func TestScrambleAsFio(t *testing.T) {
	buf := make([]byte, 8*512)
	Scramble(buf, 1<<20, 1700000000, 123456789)
	seen := map[string]bool{}
	for s := 0; s < len(buf); s += 512 {
		sec := buf[s : s+512]
		require.False(t, seen[string(sec)])
		seen[string(sec)] = true
		n := 0
		for _, c := range sec {
			if c != 0 {
				n++
			}
		}
		require.LessOrEqual(t, n, 24)
	}
}
