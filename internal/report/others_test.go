package report

import (
	"bytes"
	"html/template"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// busyWrite is a 64 KiB sequential read run (readResult) beside others:
// 1.62 of its 4 CPUs, and someone else's 4 KiB writes and reads on sdb.
func busyRead(cpu float64, ops, bytes uint64) *result.Result {
	r := readResult()
	r.Merged = nil
	r.Summary.HostOthers = &result.HostOthers{CPUFraction: cpu, DeviceOps: &ops, DeviceBytes: &bytes}
	return r
}

func TestTextSaysWhatOthersDid(t *testing.T) {
	r := busyRead(0.405, 20_000, 20_000*4096)
	r.Summary.Device.ReadOps += 19_988 // theirs: the reads the device served beside ioprobe's
	r.Summary.Device.ReadBytes += 19_988 * 4096
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, r))
	out := b.String()
	require.Contains(t, out, "Note      others used 1.62 of 4 CPUs during the window (40.5% of the host's CPU): the CPU figures are the host's, not ioprobe's alone\n")
	require.Contains(t, out, "Note      others did 20,000 of the 63,170 I/Os and 81.92 MB of the 5,740.30 MB the device sdb served during the window (31.7%)")
	require.Regexp(t, `(?m)^  others' CPU +162\.00 % +other processes: 1\.62 of the host's 4 CPUs, in the host figures above \(not ioprobe's\)$`, out)
	require.Regexp(t, `(?m)^  others' I/Os +20,000 +\(31\.7% of the devices' I/O\) +81\.92 MB +\(other processes\)$`, out)
	// The kernel's mean read size is smaller than ioprobe's 64 KiB: the
	// cross-check blames the someone else, not the block layer.
	require.Contains(t, out, "WARNING: the device saw reads of ")
	require.Contains(t, out, "someone else's I/O (other processes did 20,000 I/Os, 78.12 MiB, on the device in the window)")
	require.NotContains(t, out, "split by the block layer")
}

// TestQuietRunHasNoNote: others under a tenth of the host and of the
// device are shown as figures, never as a note.
func TestQuietRunHasNoNote(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, busyRead(0.04, 3, 3*4096)))
	out := b.String()
	require.NotContains(t, out, "Note ")
	require.NotContains(t, out, "not ioprobe's")
	require.Regexp(t, `(?m)^  others' CPU +16\.00 % +other processes: 0\.16 of the host's 4 CPUs$`, out)
}

// TestSuiteAndHTMLSayWhatOthersDid: a suite's tables say under them which
// points ran beside others; the HTML page says it under its table of
// every run.
func TestSuiteAndHTMLSayWhatOthersDid(t *testing.T) {
	s := characterizeSuite()
	busy := s.Results[3]
	busy.Summary.HostOthers = &result.HostOthers{CPUFraction: 0.5}
	var text, html bytes.Buffer
	require.NoError(t, WriteSuiteText(&text, s))
	require.NoError(t, WriteHTML(&html, s))
	want := "random-write-32k on /dev/sdb: others used 2.00 of 4 CPUs during the window (50.0% of the host's CPU)"
	require.Contains(t, text.String(), "‡ "+want+"\n")
	require.Contains(t, text.String(), "‡ "+othersMeaning+"\n")
	require.Len(t, regexp.MustCompile(`(?m)^‡ `).FindAllString(text.String(), -1), 2, "one point ran beside others, and what ‡ means")
	// Its CPU cells carry the mark; its IOPS do not.
	require.Regexp(t, `(?m)^32 KiB +7\.7‡ +16\.1 +53\.2 +87\.2$`, text.String())
	require.Regexp(t, `(?m)^32 KiB +445 +960 +4,199 +5,566$`, text.String())
	require.Contains(t, html.String(), `<p class="note">‡ `+template.HTMLEscapeString(want)+`</p>`)
}
