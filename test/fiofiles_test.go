package test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// fio 3.33 and ioprobe on the same job files for issue 33: a size above
// the device (item 1), jobs at once that end on their own (2), several
// files per job and per clone (3), offsets (4) and the CSV total of a
// point of several jobs (8). Every job stops after fio's budget, so the
// counts compare exactly; the times compare by what a loaded machine
// cannot change (which job ends first, a job's IOPS over its own time).

// fioEntry is one entry of jobs[] in fio's JSON (fio's own, or ioprobe's
// fio-json).
type fioEntry struct {
	Name       string   `json:"jobname"`
	Read       fioDirIO `json:"read"`
	Write      fioDirIO `json:"write"`
	JobRuntime int64    `json:"job_runtime"`
	// Depth is fio's iodepth_level: % of the time at each depth.
	Depth map[string]float64 `json:"iodepth_level"`
}

type fioDirIO struct {
	IOs     uint64  `json:"total_ios"`
	Bytes   uint64  `json:"io_bytes"`
	Runtime int64   `json:"runtime"` // ms
	IOPS    float64 `json:"iops"`
}

func (e fioEntry) ios() uint64 { return e.Read.IOs + e.Write.IOs }

// runtime is the entry's runtime in ms: its longest direction's.
func (e fioEntry) runtime() int64 { return max(e.Read.Runtime, e.Write.Runtime) }

func (e fioEntry) iops() float64 { return e.Read.IOPS + e.Write.IOPS }

// fioRun runs a job file with fio and returns its jobs.
func fioRun(t *testing.T, job string) []fioEntry {
	t.Helper()
	o := runCmd(t, exec.Command("fio", "--output-format=json", job))
	require.Equal(t, 0, o.code, o.stderr)
	return fioEntries(t, o.stdout)
}

// ioprobeFio runs a job file with ioprobe and returns its fio-json jobs
// and its result.
func ioprobeFio(t *testing.T, dir, job string, args ...string) ([]fioEntry, *result.Result, string) {
	t.Helper()
	o := ioprobe(t, dir, append([]string{"run", "--fio-job", job, "--allow-destructive", "--output", "json"}, args...)...)
	require.Equal(t, 0, o.code, o.stderr)
	var r result.Result
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &r), o.stdout)
	saved := filepath.Join(dir, filepath.Base(job)+".json")
	require.NoError(t, os.WriteFile(saved, []byte(o.stdout), 0o600))
	f := ioprobe(t, dir, "report", saved, "--output", "fio-json")
	require.Equal(t, 0, f.code, f.stderr)
	return fioEntries(t, f.stdout), &r, o.stderr
}

func fioEntries(t *testing.T, doc string) []fioEntry {
	t.Helper()
	var d struct {
		Jobs []fioEntry `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &d), doc)
	return d.Jobs
}

// TestFioSizeAboveTheDevice (issue 33 item 1): size= above a device's size
// runs as fio runs it, capped at the device (filesetup.c, io_u.c:
// last_block), with a note: a sequential pass ends at the device's end,
// a random one without the map goes on to size= bytes. Before: "region
// 64MiB is larger than the target's size 16MiB", nothing run. A file
// ioprobe made is grown to the size, as fio extends its file.
func TestFioSizeAboveTheDevice(t *testing.T) {
	besideOthers(t)
	dev, dir := sideBySide(t, 16<<20)
	for _, c := range []struct {
		name, body string
		ios        uint64
	}{
		{"sequential", "rw=read\nbs=64k\nsize=64m\n", 256},
		{"random without the map", "rw=randread\nbs=16k\nnorandommap\nsize=24m\n", 1536},
		{"random with the map", "rw=randread\nbs=16k\nsize=24m\n", 1024},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := writeJob(t, dir, "cap.fio", "[j]\nfilename=DEV\ndirect=1\nioengine=psync\n"+c.body, dev)
			fio := fioRun(t, job)
			ours, r, stderr := ioprobeFio(t, dir, job)
			require.Equal(t, c.ios, fio[0].ios(), "fio")
			require.Equal(t, c.ios, ours[0].ios(), "ioprobe")
			require.Equal(t, fio[0].Read.Bytes, ours[0].Read.Bytes)
			require.Contains(t, stderr, "capped to its size, as fio caps it")
			require.Contains(t, strings.Join(r.Notes, "\n"), "capped to its size")
		})
	}

	// A new file: made as long as size=; a second job with a larger size
	// grows ioprobe's file, as fio extends its own.
	files := t.TempDir()
	for i, size := range []string{"1m", "2m"} {
		body := "[j]\nfilename=FILE\ndirect=1\nioengine=psync\nrw=read\nbs=64k\nsize=" + size + "\n"
		fjob := filepath.Join(files, "fio"+strconv.Itoa(i)+".fio")
		require.NoError(t, os.WriteFile(fjob, []byte(strings.ReplaceAll(body, "FILE", filepath.Join(files, "fio.dat"))), 0o600))
		ijob := filepath.Join(files, "ioprobe"+strconv.Itoa(i)+".fio")
		require.NoError(t, os.WriteFile(ijob, []byte(strings.ReplaceAll(body, "FILE", filepath.Join(files, "ioprobe.dat"))), 0o600))
		fio := fioRun(t, fjob)
		ours, r, _ := ioprobeFio(t, files, ijob)
		require.Equal(t, fio[0].ios(), ours[0].ios(), size)
		require.Equal(t, i == 0, r.Targets[0].Created, "made by the first job")
		require.Equal(t, i == 1, r.Targets[0].Extended, "grown by the second")
	}
	// A file ioprobe did not make (fio's) is never grown, whatever
	// --allow-destructive says: refused, the file as it was.
	foreign := filepath.Join(files, "fio.dat")
	job := filepath.Join(files, "grow.fio")
	require.NoError(t, os.WriteFile(job, []byte("[j]\nfilename="+foreign+"\ndirect=1\nrw=read\nbs=64k\nsize=4m\n"), 0o600))
	o := ioprobe(t, files, "run", "--fio-job", job, "--allow-destructive")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "region 4MiB is larger than the target's size 2MiB")
	fi, err := os.Stat(foreign)
	require.NoError(t, err)
	require.Equal(t, int64(2<<20), fi.Size())
}

// TestFioJobsEndOnTheirOwn (issue 33 item 2): jobs at once with their own
// amounts (size, runtime) each end on their own, as fio's: each job's
// I/Os as fio's, its runtime its own (the job with a 16th of the other's
// work ends first, in both tools: a margin no scheduling delay of a
// loaded machine closes), its IOPS over that runtime. Before: refused ("ioprobe measures
// jobs run at once over one window"), and with equal budgets every job
// had the point's window.
func TestFioJobsEndOnTheirOwn(t *testing.T) {
	dev, dir := sideBySide(t, 32<<20)
	job := writeJob(t, dir, "ends.fio", "[global]\nfilename=DEV\ndirect=1\nioengine=psync\nrw=randread\nbs=4k\nnorandommap\n"+
		"[small]\nsize=1m\n[big]\nsize=16m\n", dev)
	fio := fioRun(t, job)
	ours, r, _ := ioprobeFio(t, dir, job)
	require.Len(t, ours, 2)
	for i, want := range []uint64{256, 4096} {
		require.Equal(t, want, fio[i].ios(), "fio %s", fio[i].Name)
		require.Equal(t, want, ours[i].ios(), "ioprobe %s", ours[i].Name)
	}
	for tool, js := range map[string][]fioEntry{"fio": fio, "ioprobe": ours} {
		require.Less(t, js[0].runtime(), js[1].runtime(), "%s: the small job ends first", tool)
		for _, j := range js {
			// runtime is in whole ms: half of one is that many I/Os off.
			tol := max(2, 0.02*float64(j.ios()), j.iops()/2000+1)
			require.InDelta(t, float64(j.ios()), j.iops()*float64(j.runtime())/1000, tol, "%s %s: its IOPS over its own runtime", tool, j.Name)
			require.InDelta(t, j.runtime(), j.JobRuntime, 1, "%s %s: job_runtime", tool, j.Name)
		}
	}
	// The result: each job's own end, its rates over it; the point's
	// window their union, its total their sum.
	small, big := r.Summary.Jobs[0], r.Summary.Jobs[1]
	require.Positive(t, small.EndedAfterSeconds)
	require.Less(t, small.EndedAfterSeconds, big.EndedAfterSeconds)
	require.LessOrEqual(t, big.EndedAfterSeconds, r.Summary.ElapsedSeconds)
	require.InEpsilon(t, small.EndedAfterSeconds, small.ElapsedSeconds, 1e-9)
	require.InEpsilon(t, float64(small.Ops)/small.ElapsedSeconds, small.IOPS, 1e-9)
	require.Equal(t, small.Ops+big.Ops, r.Summary.Ops)

	// runtime per job, time_based: each runs its own time.
	job = writeJob(t, dir, "runtimes.fio", "[global]\nfilename=DEV\ndirect=1\nioengine=psync\nrw=randread\nbs=4k\ntime_based\n"+
		"[one]\nruntime=1\n[two]\nruntime=2\n", dev)
	fio = fioRun(t, job)
	ours, r, _ = ioprobeFio(t, dir, job)
	for tool, js := range map[string][]fioEntry{"fio": fio, "ioprobe": ours} {
		require.InDelta(t, 1000, js[0].runtime(), 150, "%s: one's runtime", tool)
		require.InDelta(t, 2000, js[1].runtime(), 150, "%s: two's runtime", tool)
	}
	require.InDelta(t, 2, r.Summary.ElapsedSeconds, 0.15, "the point's window: the longer job's")
}

// TestFioFilesInTurn (issue 33 item 3): a job's several files, taken in
// turn (fio's file_service_type roundrobin: one I/O to each), its iodepth
// over all of them; nrfiles and numjobs without filename with fio's file
// names, each clone its own; jobs at once on files of their own. Before:
// all refused ("2 files: ...", "without filename fio gives each clone its
// own file", "runs at once with [a] on other files").
func TestFioFilesInTurn(t *testing.T) {
	testdeps.Need(t, testdeps.Tool("fio"))
	a, b := testloop.Device(t, 8<<20), testloop.Device(t, 8<<20)
	dir := t.TempDir()
	perDevice := func(run func()) [2]uint64 {
		var out [2]uint64
		settle()
		ba, bb := diskstat(t, a), diskstat(t, b)
		run()
		out[0], out[1] = diskstat(t, a)[0]-ba[0], diskstat(t, b)[0]-bb[0]
		return out
	}

	t.Run("filename list", func(t *testing.T) {
		job := filepath.Join(dir, "list.fio")
		require.NoError(t, os.WriteFile(job, []byte("[j]\nfilename="+a+":"+b+"\ndirect=1\nioengine=psync\nrw=randread\nbs=4k\nsize=4m\nnumjobs=2\n"), 0o600))
		var fio, ours []fioEntry
		fd := perDevice(func() { fio = fioRun(t, job) })
		id := perDevice(func() { ours, _, _ = ioprobeFio(t, dir, job) })
		require.Len(t, ours, 2)
		for k := range fio {
			require.Equal(t, uint64(1024), fio[k].ios(), "fio clone %d: 4m over its files", k)
			require.Equal(t, uint64(1024), ours[k].ios(), "ioprobe clone %d", k)
		}
		// Each file half of each clone's I/Os (2m each), within the few
		// requests of others (udev's probe of a device just closed).
		for i, n := range fd {
			require.InDelta(t, 1024, n, foreign, "fio: device %d", i)
			require.InDelta(t, 1024, id[i], foreign, "ioprobe: device %d", i)
		}
	})

	t.Run("one queue over the files", func(t *testing.T) {
		job := filepath.Join(dir, "qd.fio")
		require.NoError(t, os.WriteFile(job, []byte("[j]\nfilename="+a+":"+b+"\ndirect=1\nioengine=io_uring\niodepth=4\nrw=randread\nbs=4k\nsize=8m\n"), 0o600))
		fio := fioRun(t, job)
		ours, _, _ := ioprobeFio(t, dir, job)
		require.Equal(t, fio[0].ios(), ours[0].ios())
		// fio keeps iodepth I/Os in flight over the job's files, not per
		// file: nothing at 8.
		for tool, j := range map[string]fioEntry{"fio": fio[0], "ioprobe": ours[0]} {
			require.Greater(t, j.Depth["4"], 90.0, "%s: %v", tool, j.Depth)
			require.Zero(t, j.Depth["8"], "%s: %v", tool, j.Depth)
		}
	})

	t.Run("nrfiles and numjobs without filename", func(t *testing.T) {
		names := map[string][]string{}
		for _, tool := range []string{"fio", "ioprobe"} {
			files := filepath.Join(dir, tool+"-files")
			require.NoError(t, os.Mkdir(files, 0o700))
			job := filepath.Join(dir, tool+"-clones.fio")
			require.NoError(t, os.WriteFile(job, []byte("[m]\ndirectory="+files+"\ndirect=1\nioengine=psync\nrw=read\nbs=64k\nsize=1m\nnrfiles=2\nnumjobs=3\n"), 0o600))
			var js []fioEntry
			if tool == "fio" {
				js = fioRun(t, job)
			} else {
				js, _, _ = ioprobeFio(t, dir, job)
			}
			require.Len(t, js, 3, tool)
			for _, j := range js {
				require.Equal(t, uint64(16), j.ios(), "%s: 1m of 64k per clone", tool)
			}
			ents, err := os.ReadDir(files)
			require.NoError(t, err)
			for _, e := range ents {
				fi, err := e.Info()
				require.NoError(t, err)
				require.Equal(t, int64(512<<10), fi.Size(), "%s: %s: size= shared over the clone's files", tool, e.Name())
				names[tool] = append(names[tool], e.Name())
			}
		}
		require.Equal(t, []string{"m.0.0", "m.0.1", "m.1.0", "m.1.1", "m.2.0", "m.2.1"}, names["fio"])
		require.Equal(t, names["fio"], names["ioprobe"], "fio's names: $jobname.$jobnum.$filenum")
	})

	t.Run("a size mix: one pass of each file per loop", func(t *testing.T) {
		// With bssplit the files' passes end after different numbers of
		// I/Os: fio passes a file whose pass is done over until the
		// loop's end, its last transfers drawn among the sizes that fit
		// (checked with write_iolog: no offset twice). Before, ioprobe's
		// file that finished first wrapped and read its start again
		// while the other's tail went unread (16 MiB regions, 1 loop:
		// 18,907,136 and 14,725,120 bytes), and loops=2 was refused.
		// Sectors read per device: no writes, so no udev probe after
		// close; ioprobe's io_uring engine reads one page at each
		// target's start before the run (its RWF_NOWAIT probe, Suits),
		// outside the budget.
		const region = 4 << 20
		for _, eng := range []string{"ioengine=io_uring\niodepth=2", "ioengine=psync"} {
			job := filepath.Join(dir, "mix.fio")
			require.NoError(t, os.WriteFile(job, []byte("[j]\nfilename="+a+":"+b+"\ndirect=1\n"+eng+"\nrw=read\nbssplit=4k/50:1m/50\nsize=8m\nloops=2\n"), 0o600))
			bytes := func(run func()) [2]uint64 {
				settle()
				ba, bb := diskstat(t, a), diskstat(t, b)
				run()
				return [2]uint64{(diskstat(t, a)[1] - ba[1]) * 512, (diskstat(t, b)[1] - bb[1]) * 512}
			}
			var fio, ours []fioEntry
			fd := bytes(func() { fio = fioRun(t, job) })
			id := bytes(func() { ours, _, _ = ioprobeFio(t, dir, job) })
			require.Equal(t, uint64(2*2*region), fio[0].Read.Bytes, eng)
			require.Equal(t, fio[0].Read.Bytes, ours[0].Read.Bytes, eng)
			for i := range fd {
				require.InDelta(t, 2*region, fd[i], 4096, "fio, %s: device %d read once a loop", eng, i)
				require.InDelta(t, 2*region, id[i], 4096, "ioprobe, %s: device %d read once a loop", eng, i)
			}
		}
	})

	t.Run("jobs at once on their own files", func(t *testing.T) {
		job := filepath.Join(dir, "own.fio")
		require.NoError(t, os.WriteFile(job, []byte("[global]\ndirect=1\nioengine=psync\nrw=randread\nbs=4k\n[a]\nfilename="+a+"\nsize=2m\n[b]\nfilename="+b+"\nsize=1m\n"), 0o600))
		var fio, ours []fioEntry
		fd := perDevice(func() { fio = fioRun(t, job) })
		id := perDevice(func() { ours, _, _ = ioprobeFio(t, dir, job) })
		for i, want := range []uint64{512, 256} {
			require.Equal(t, want, fio[i].ios())
			require.Equal(t, want, ours[i].ios())
			require.InDelta(t, want, fd[i], foreign, "fio: device %d", i)
			require.InDelta(t, want, id[i], foreign, "ioprobe: device %d", i)
		}
	})
}

// TestFioOffsets (issue 33 item 4): offset, offset_increment and a size
// in % place each clone where fio does: four clones each write their
// 1 MiB at 4 MiB steps, and a job at offset=50% size=25% writes the third
// quarter only. What each tool wrote is read back from its own zeroed
// device: the 64 KiB blocks written are the same. Before: refused
// ("ioprobe's access region starts at the target's offset 0").
func TestFioOffsets(t *testing.T) {
	besideOthers(t)
	testdeps.Need(t, testdeps.Tool("fio"))
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		ios        uint64
		blocks     []int64 // the 64 KiB blocks written, in MiB ranges [from, to)
	}{
		{"offset_increment", "numjobs=4\noffset_increment=4m\nsize=1m\n", 64, []int64{0, 1, 4, 5, 8, 9, 12, 13}},
		{"percentages", "offset=50%\nsize=25%\n", 64, []int64{8, 12}},
	} {
		t.Run(c.name, func(t *testing.T) {
			written := map[string][]int64{}
			for _, tool := range []string{"fio", "ioprobe"} {
				dev := testloop.Device(t, 16<<20)
				job := filepath.Join(dir, tool+".fio")
				require.NoError(t, os.WriteFile(job, []byte("[w]\nfilename="+dev+"\ndirect=1\nioengine=psync\nrw=write\nbs=64k\n"+c.body), 0o600))
				var js []fioEntry
				if tool == "fio" {
					js = fioRun(t, job)
				} else {
					js, _, _ = ioprobeFio(t, dir, job)
				}
				var n uint64
				for _, j := range js {
					n += j.ios()
				}
				require.Equal(t, c.ios, n, tool)
				// What reached the device, not the page cache's pages.
				o := runCmd(t, exec.Command("blockdev", "--flushbufs", dev))
				require.Equal(t, 0, o.code, o.stderr)
				data, err := os.ReadFile(dev)
				require.NoError(t, err)
				zero := make([]byte, 64<<10)
				for blk := int64(0); blk < int64(len(data))>>16; blk++ {
					if !bytes.Equal(data[blk<<16:(blk+1)<<16], zero) {
						written[tool] = append(written[tool], blk)
					}
				}
			}
			var want []int64
			for i := 0; i < len(c.blocks); i += 2 {
				for blk := c.blocks[i] << 4; blk < c.blocks[i+1]<<4; blk++ {
					want = append(want, blk)
				}
			}
			require.Equal(t, want, written["fio"], "fio's blocks")
			require.Equal(t, want, written["ioprobe"], "ioprobe's blocks, as fio's")
		})
	}
}

// TestFioCSVTotalMix (issue 33 item 8): the CSV total row of a point of a
// read job and a write job says the mix measured: fio's share of reads
// over both jobs, and both sizes weighted by their I/Os. Before: the
// first job's read_pct 100 and 4096:1.
func TestFioCSVTotalMix(t *testing.T) {
	besideOthers(t)
	dev, dir := sideBySide(t, 16<<20)
	total := func(t *testing.T, job string) (rows [][]string, col func(string) int) {
		o := ioprobe(t, dir, "run", "--fio-job", job, "--allow-destructive", "--output", "csv")
		require.Equal(t, 0, o.code, o.stderr)
		rows, err := csv.NewReader(strings.NewReader(o.stdout)).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, 4, "header, a row per job, the total")
		return rows, func(name string) int { return slices.Index(rows[0], name) }
	}
	job := writeJob(t, dir, "mix.fio", "[global]\nfilename=DEV\ndirect=1\nioengine=psync\n[r]\nrw=randread\nbs=4k\nsize=2m\n[w]\nrw=write\nbs=64k\nsize=1m\n", dev)
	fio := fioRun(t, job)
	reads, all := fio[0].Read.IOs+fio[1].Read.IOs, fio[0].ios()+fio[1].ios()
	require.Equal(t, uint64(528), all)
	rows, col := total(t, job)
	last := rows[3]
	require.Equal(t, strconv.Itoa(int(float64(100*reads)/float64(all)+0.5)), last[col("read_pct")], "fio: %d of %d I/Os read", reads, all)
	require.Equal(t, "4096:512;65536:16", last[col("block_sizes")])
	require.Equal(t, "100", rows[1][col("read_pct")], "a job's row: its own")
	require.Equal(t, "0", rows[2][col("read_pct")])

	// Jobs for a time: the total's share is the one the run measured.
	job = writeJob(t, dir, "mixtime.fio", "[global]\nfilename=DEV\ndirect=1\nioengine=psync\ntime_based\nruntime=1\n[r]\nrw=randread\nbs=4k\n[w]\nrw=write\nbs=64k\n", dev)
	rows, col = total(t, job)
	ops, _ := strconv.ParseFloat(rows[3][col("ops")], 64)
	readOps, _ := strconv.ParseFloat(rows[3][col("read_ops")], 64)
	require.Positive(t, ops)
	require.Equal(t, strconv.Itoa(int(100*readOps/ops+0.5)), rows[3][col("read_pct")])
}
