package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// The devices' own latency, measured in the kernel (internal/devlat), in
// the results of the real binary on a loop device.

// runOnLoop runs ioprobe on dev (a private loop device) and returns its
// result and the kernel's diskstats time per read and write request over
// the run (the loop device serves nothing else).
func runOnLoop(t *testing.T, dir, dev string, args ...string) (*result.Result, float64) {
	t.Helper()
	name := filepath.Base(dev)
	before, err := target.ReadDiskStats("", name)
	require.NoError(t, err)
	o := ioprobe(t, dir, append([]string{"run", "--target", dev, "--output", "json"}, args...)...)
	require.Equal(t, 0, o.code, o.stderr)
	after, err := target.ReadDiskStats("", name)
	require.NoError(t, err)
	ks := after.Sub(before)
	require.Positive(t, ks.ReadOps+ks.WriteOps)
	return decodeResult(t, o.stdout), float64(ks.ReadTicks+ks.WriteTicks) / 1e3 / float64(ks.ReadOps+ks.WriteOps)
}

// TestDeviceLatencyAgreesWithTheKernel: a run's device latency counts the
// requests the kernel's diskstats completed in the window (±1%), their
// mean with the queue time is diskstats' time per request (within 20%:
// diskstats counts from the request's start), and it is below ioprobe's
// own mean, which holds the device's time and the stack's above it. Two
// runs' histogram.device merge into the histogram of both runs' requests.
func TestDeviceLatencyAgreesWithTheKernel(t *testing.T) {
	dev := testloop.Device(t, 64<<20)
	dir := t.TempDir()
	// 4000 I/Os, not a window: the comparisons need requests (a window
	// beside load may complete none).
	args := append([]string{"--qd", "4", "--read-pct", "70", "--allow-destructive"}, countedIOs(4000)...)
	r, kernelMean := runOnLoop(t, dir, dev, args...)
	d := r.Summary.Device
	require.NotNil(t, d)
	require.Empty(t, d.LatencyUnavailable)
	require.NotNil(t, d.Latency, "root, BTF: the programs load")
	l, q := d.Latency, d.QueueLatency
	kernel := d.ReadOps + d.WriteOps
	seen := l.Count + l.Flush.Count + l.Discards
	require.InDelta(t, float64(kernel), float64(seen), float64(kernel)/100+1, "the programs saw the kernel's completions")
	require.InDelta(t, float64(d.ReadOps), float64(l.Read.Count), float64(d.ReadOps)/100+1)
	require.InDelta(t, float64(d.WriteOps), float64(l.Write.Count), float64(d.WriteOps)/100+1)

	ours := (l.MeanSeconds*float64(l.Count) + q.MeanSeconds*float64(q.Count)) / float64(l.Count)
	t.Logf("per request: diskstats %.1f µs, device %.1f µs + queue %.1f µs (%d of %d queued); ioprobe %.1f µs",
		kernelMean*1e6, l.MeanSeconds*1e6, q.MeanSeconds*1e6, q.Count, l.Count, r.Summary.Latency.MeanSeconds*1e6)
	require.InEpsilon(t, kernelMean, ours, 0.20)
	require.Less(t, l.MeanSeconds, r.Summary.Latency.MeanSeconds, "the device's time is part of ioprobe's")
	require.Equal(t, l.Read.Count, r.Histogram.Device.Read.Count(), "the summary is the histogram's")
	require.Equal(t, q.Count, r.Histogram.Device.QueueRead.Count()+r.Histogram.Device.QueueWrite.Count())

	// A second run, and the two merged: the merged histogram.device is
	// both runs' requests, bucket for bucket, and the summary follows it.
	r2, _ := runOnLoop(t, dir, dev, args...)
	require.NotNil(t, r2.Histogram.Device)
	files := []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}
	for i, res := range []*result.Result{r, r2} {
		b, err := json.Marshal(res)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(files[i], b, 0o644))
	}
	o := ioprobe(t, dir, "report", "--merge", "--output", "json", files[0], files[1])
	require.Equal(t, 0, o.code, o.stderr)
	m := decodeResult(t, o.stdout)
	both := result.NewDeviceHistograms()
	both.Add(r.Histogram.Device)
	both.Add(r2.Histogram.Device)
	want, err := json.Marshal(both)
	require.NoError(t, err)
	got, err := json.Marshal(m.Histogram.Device)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
	require.Equal(t, l.Count+r2.Summary.Device.Latency.Count, m.Summary.Device.Latency.Count)
	require.Equal(t, result.LatencyOf(both.Read).Percentiles, m.Summary.Device.Latency.Read.Percentiles)
}

// TestDeviceLatencyWithoutPrivileges: as nobody, on a file, the run
// succeeds and its result says why the device latency is missing.
func TestDeviceLatencyWithoutPrivileges(t *testing.T) {
	bin, dir := unprivileged(t)
	o := runAs(t, bin, nil, append([]string{"run", "--target", filepath.Join(dir, "probe.dat"), "--size", "16MiB", "--output", "json"}, countedIOs(64)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.Equal(t, result.StatusOK, r.Status)
	require.Positive(t, r.Summary.ReadOps)
	d := r.Summary.Device
	require.NotNil(t, d, "a file on a block device")
	require.Nil(t, d.Latency)
	require.Nil(t, r.Histogram.Device)
	require.Equal(t, "not permitted to load BPF programs: needs root, or CAP_BPF and CAP_PERFMON (running as uid 65534)", d.LatencyUnavailable)

	o = runAs(t, bin, nil, "run", "--target", filepath.Join(dir, "probe.dat"), "--duration", "300ms", "--ramp", "0s")
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, o.stdout, "Device service time  unavailable: not permitted to load BPF programs")
	require.NotContains(t, o.stderr, "BPF", "nothing else changes")
}

// TestPrometheusSeesDeviceLatencyOfAnotherProcess: ioprobe serve watching a
// device (config devices, by glob) publishes the service time of all its
// I/O: fio's here, which ioprobe knows nothing of. A real Prometheus 3
// scrapes it as a native histogram, and its count is fio's I/Os.
func TestPrometheusSeesDeviceLatencyOfAnotherProcess(t *testing.T) {
	// Beside the others: the loop device is its own, and the daemon counts
	// only its I/O, so fio's reads are all it sees whatever runs beside.
	besideOtherPrometheusTests(t)
	prom3 := needPrometheus3(t)
	dev := testloop.Device(t, 64<<20)
	fio := testdeps.LookPath(t, "fio")
	name := filepath.Base(dev)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	// A glob that matches this loop device and no other.
	glob := name[:len(name)-1] + "[" + name[len(name)-1:] + "]"
	require.NoError(t, os.WriteFile(cfg, []byte("devices: [\""+glob+"\"]\n"), 0o644))
	d := startDaemon(t, "--config", cfg)
	prom := startPrometheus(t, prom3, `global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: ioprobe
    scrape_native_histograms: true
    static_configs: [{targets: ["`+d.addr+`"]}]
`)
	const ios = 2000
	out, err := exec.Command(fio, "--name=other", "--filename="+dev, "--rw=randread", "--bs=4k", "--direct=1",
		"--ioengine=psync", fmt.Sprintf("--number_ios=%d", ios), "--size=64m", "--output-format=json").CombinedOutput()
	require.NoError(t, err, "%s", out)

	// Prometheus 3 keeps a native histogram: its count is
	// histogram_count() of the sample, and it has every read fio made.
	q := `histogram_count(ioprobe_device_latency_seconds{device="` + name + `",op="read"})`
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s := query(c, prom, q)
		require.Len(c, s, 1)
		assert.GreaterOrEqual(c, s[0].float(c), float64(ios))
	}, promPatience*30*time.Second, 200*time.Millisecond, "Prometheus sees fio's %d reads in %s", ios, q)
	s := query(t, prom, q)
	require.InDelta(t, float64(ios), s[0].float(t), ios/100, "fio's reads, not more (the device serves nothing else)")
	p99 := query(t, prom, `histogram_quantile(0.99, ioprobe_device_latency_seconds{device="`+name+`",op="read"})`)
	require.Len(t, p99, 1)
	require.Positive(t, p99[0].float(t))
	require.Less(t, p99[0].float(t), 10.0)
	require.Empty(t, query(t, prom, `histogram_count(ioprobe_device_latency_seconds{device!="`+name+`"})`), "only the watched device")
}
