package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// fio 3.33 and ioprobe side by side on one loop device (issue 22): each
// runs the same job file, and the kernel's own counters say what reached
// the device.

// diskStat is what the test reads of a loop device's block-layer
// counters: reads completed, merged, and their bytes.
type diskStat struct{ reads, readMerges, readBytes uint64 }

func readDiskStat(t *testing.T, dev string) diskStat {
	t.Helper()
	st, err := target.ReadDiskStats("", filepath.Base(dev))
	require.NoError(t, err)
	return diskStat{reads: st.ReadOps, readMerges: st.ReadMerges, readBytes: st.ReadBytes()}
}

func (s diskStat) sub(o diskStat) diskStat {
	return diskStat{s.reads - o.reads, s.readMerges - o.readMerges, s.readBytes - o.readBytes}
}

// TestFioSideSequentialUnmerged: QD 32 sequential 4 KiB reads through
// io_uring reach the device as 4 KiB requests, none merged, from fio (which
// submits each I/O on its own) and from ioprobe alike. ioprobe's figures
// are its result's summary.device (the kernel's counters over its measured
// window; before it, ioprobe reads the device for signatures), fio's the
// counters around its run. Both tools' I/Os are exact 4 KiB requests, so
// the sizes must be equal, not close. The job is 8192 I/Os, not
// time_based: two seconds beside load can complete no I/O, and both
// tools' figures here are of requests.
func TestFioSideSequentialUnmerged(t *testing.T) {
	dev, dir := sideBySide(t, 64<<20)
	job := writeJob(t, dir, "seq.fio", "[global]\nfilename=DEV\ndirect=1\nnumber_ios=8192\nsize=64m\n[seq]\nrw=read\nbs=4k\nioengine=io_uring\niodepth=32\n", dev)

	before := readDiskStat(t, dev)
	o := runCmd(t, exec.Command("fio", "--output-format=json", job))
	require.Equal(t, 0, o.code, o.stderr)
	fio := readDiskStat(t, dev).sub(before)
	var fdoc struct {
		Jobs []struct {
			Read struct {
				TotalIOs uint64 `json:"total_ios"`
			} `json:"read"`
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &fdoc), o.stdout)
	require.Positive(t, fdoc.Jobs[0].Read.TotalIOs)
	// Neither tool plugs I/Os together; a loaded machine may still merge a
	// few that wait in the device's queue, for either tool: under the text
	// output's 1% (result.SizeTolerance).
	tol := result.SizeTolerance
	require.LessOrEqual(t, float64(fio.readMerges), tol*float64(fio.reads), "fio: %+v", fio)
	require.InEpsilon(t, 4096, float64(fio.readBytes)/float64(fio.reads), tol, "fio: requests of 4 KiB: %+v", fio)

	o = ioprobe(t, dir, "run", "--fio-job", job, "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	var r result.Result
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &r), o.stdout)
	d := r.Summary.Device
	require.NotNil(t, d)
	require.Equal(t, workload.EngineURing, r.Workload.Engine)
	require.Zero(t, r.Workload.SubmitBatch, "fio's default submission")
	require.Positive(t, d.ReadOps)
	require.LessOrEqual(t, float64(d.ReadMerges), tol*float64(r.Summary.ReadOps), "ioprobe: %+v", d)
	require.InEpsilon(t, 4096, float64(d.ReadBytes)/float64(d.ReadOps), tol, "ioprobe: requests of 4 KiB: %+v", d)
	// The window's counters are read around the switch of counting: a few
	// I/Os either way.
	require.InEpsilon(t, r.Summary.ReadOps, d.ReadOps, 0.01, "each I/O a request of its own")
	require.InEpsilon(t, float64(fio.readBytes)/float64(fio.reads), float64(d.ReadBytes)/float64(d.ReadOps), tol, "the same request size at the device")
	require.Empty(t, r.Summary.DeviceSizes(), "no warning")
	require.NotNil(t, r.IODepth)
	require.Greater(t, r.IODepth.Level[result.LevelBucket(32)], r.Summary.ReadOps*9/10, "the queue kept at 32, as fio's iodepth_level says of fio's: %+v", r.IODepth)

	// The batch a user may ask for: merged, and said so.
	// 4096 reads, not a window: the warning is of the device's requests
	// (a window beside load may complete none).
	o = ioprobe(t, dir, append([]string{"run", "--target", dev, "--bs", "4k", "--read-pct", "100", "--random-pct", "0", "--qd", "32",
		"--engine", "uring", "--batch-submit", "0", "--batch-complete-max", "32"}, countedIOs(4096)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, o.stdout, "up to 32 I/Os per submission")
	require.Regexp(t, `read merges +[0-9,]+`, o.stdout)
	require.Contains(t, o.stdout, "WARNING: the device saw reads of ")
}

// fioJobsDoc is what the test reads of a fio-json document.
type fioJobsDoc struct {
	Global map[string]string `json:"global options"`
	Jobs   []struct {
		Name    string            `json:"jobname"`
		Group   int               `json:"groupid"`
		Options map[string]string `json:"job options"`
		Read    fioSideDir        `json:"read"`
		Write   fioSideDir        `json:"write"`
	} `json:"jobs"`
}

type fioSideDir struct {
	IOs   uint64 `json:"total_ios"`
	Bytes uint64 `json:"io_bytes"`
}

// TestFioSideJobsStayJobs: two jobs at once, each with numjobs=2, sized
// (no time_based, so fio's counts are exact): fio and ioprobe report the
// same four clones, each with its own I/O count and bytes (exact), its
// read share (within 3 points: 8192 I/Os a clone), its job options as the
// file wrote them and the file's global options; ioprobe's result keeps
// each job's figures, and its text a row per job and the total.
func TestFioSideJobsStayJobs(t *testing.T) {
	dev, dir := sideBySide(t, 64<<20)
	job := writeJob(t, dir, "jobs.fio", "[global]\nfilename=DEV\ndirect=1\nioengine=io_uring\nsize=32m\nname=everyone\n"+
		"[rr]\nrw=randread\nbs=4k\niodepth=8\nnumjobs=2\n"+
		"[mix]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=4\nnumjobs=2\n", dev)

	o := runCmd(t, exec.Command("fio", "--output-format=json", job))
	require.Equal(t, 0, o.code, o.stderr)
	var fio fioJobsDoc
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &fio), o.stdout)

	o = ioprobe(t, dir, "run", "--fio-job", job, "--allow-destructive", "--output", "fio-json")
	require.Equal(t, 0, o.code, o.stderr)
	var ours fioJobsDoc
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &ours), o.stdout)

	require.Equal(t, fio.Global, ours.Global, "global options as the file wrote them")
	require.Len(t, fio.Jobs, 4, "fio: a job per clone")
	require.Len(t, ours.Jobs, len(fio.Jobs), "ioprobe: a job per clone, as fio")
	for i, f := range fio.Jobs {
		g := ours.Jobs[i]
		require.Equal(t, f.Name, g.Name, "job %d: name= in [global] renames no job", i)
		require.Equal(t, f.Group, g.Group)
		require.Equal(t, f.Options, g.Options, "job %d: its options as written", i)
		fn, gn := f.Read.IOs+f.Write.IOs, g.Read.IOs+g.Write.IOs
		require.Equal(t, fn, gn, "job %d (%s): I/Os", i, f.Name)
		require.Equal(t, f.Read.Bytes+f.Write.Bytes, g.Read.Bytes+g.Write.Bytes, "job %d (%s): bytes", i, f.Name)
		require.InDelta(t, float64(f.Read.IOs)/float64(fn), float64(g.Read.IOs)/float64(gn), 0.03, "job %d (%s): read share", i, f.Name)
	}

	// fio's own converter reads every job of it.
	if clat2csv, err := exec.LookPath("fio_jsonplus_clat2csv"); err == nil {
		fj := filepath.Join(dir, "jobs-fio.json")
		require.NoError(t, os.WriteFile(fj, []byte(o.stdout), 0o600))
		c := runCmd(t, exec.Command("python3", clat2csv, fj, filepath.Join(dir, "lat")))
		require.Equal(t, 0, c.code, c.stderr)
		v := runCmd(t, exec.Command("python3", clat2csv, fj, filepath.Join(dir, "lat"), "--validate"))
		require.Equal(t, 0, v.code, v.stderr)
		require.Equal(t, len(fio.Jobs), strings.Count(v.stdout, "validated"), v.stdout)
	}

	o = ioprobe(t, dir, "run", "--fio-job", job, "--allow-destructive", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	var r result.Result
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &r), o.stdout)
	require.Len(t, r.Summary.Jobs, 2)
	var ops uint64
	for i, j := range r.Summary.Jobs {
		require.Equal(t, fio.Jobs[2*i].Name, j.Name)
		require.Len(t, j.Clones, 2)
		require.Equal(t, uint64(2*8192), j.Ops, "%s: 32 MiB of 4 KiB I/Os per clone", j.Name)
		require.Equal(t, j.Clones[0].Ops+j.Clones[1].Ops, j.Ops)
		ops += j.Ops
	}
	require.Equal(t, r.Summary.Ops, ops, "the jobs add up to the run")
	require.Zero(t, r.Summary.Jobs[0].WriteOps)
	require.InDelta(t, 0.7, float64(r.Summary.Jobs[1].ReadOps)/float64(r.Summary.Jobs[1].Ops), 0.03)

	o = ioprobe(t, dir, "run", "--fio-job", job, "--allow-destructive")
	require.Equal(t, 0, o.code, o.stderr)
	require.Regexp(t, `(?m)^Per job\b`, o.stdout)
	require.Regexp(t, `(?m)^  rr +16,384 +16,384 +0 `, o.stdout)
	require.Regexp(t, `(?m)^  mix +16,384 `, o.stdout)
	require.Regexp(t, `(?m)^  total +32,768 `, o.stdout)
}
