package fiojob

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

func TestParseJobs(t *testing.T) {
	const base = "[global]\ntime_based\nruntime=10 ; inline comment\nfilename=/dev/x\t# another\ndirect=1\n"
	for _, c := range []struct {
		name, text string
		want       workload.Spec // fields compared: the access specification
		points     int
	}{
		{"defaults are fio's", base + "[j]\n",
			workload.Spec{BlockSizes: bs(4096, 1), ReadPct: 100, RandomPct: 0, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second}, 1},
		{"randrw mix, io_uring keeps iodepth", base + "[j]\nrw=randrw\nrwmixread=70\nioengine=io_uring\niodepth=32\nbs=8k\nnumjobs=2\nramp_time=2\n",
			workload.Spec{BlockSizes: bs(8192, 1), ReadPct: 70, RandomPct: 100, QueueDepth: 32, Workers: 2, Engine: "uring", Duration: 10 * time.Second, RandomMap: true, Ramp: 2 * time.Second}, 1},
		{"sync engine: one I/O in flight whatever iodepth says", base + "[j]\nrw=randwrite\nioengine=psync\niodepth=16\n",
			workload.Spec{BlockSizes: bs(4096, 1), ReadPct: 0, RandomPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second, RandomMap: true}, 1},
		{"rwmixwrite, readwrite=randrw, libaio", base + "[j]\nreadwrite=randrw\nrwmixwrite=30\nioengine=libaio\niodepth=4\n",
			workload.Spec{BlockSizes: bs(4096, 1), ReadPct: 70, RandomPct: 100, QueueDepth: 4, Workers: 1, Engine: "uring", Duration: 10 * time.Second, RandomMap: true}, 1},
		{"bssplit with a share left open, in fio's order (by percent)", base + "[j]\nrw=randread\nnorandommap\nbssplit=4k/10:64k/50:32k\n",
			workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}, {Bytes: 32768, Weight: 4}, {Bytes: 65536, Weight: 5}}, ReadPct: 100, RandomPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second}, 1},
		{"bsrange: fio's multiples of min, equally often", base + "[j]\nbsrange=4k-12k\n",
			workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}, {Bytes: 8192, Weight: 1}, {Bytes: 12288, Weight: 1}}, ReadPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second}, 1},
		{"rate per clone and direction, bs per direction alike", "[global]\ntime_based=1\nruntime=1m\n[j]\nfilename=/a\nsize=2g\nnumjobs=4\nrate_iops=100\nbs=16k,16k\ndirect=1\n",
			workload.Spec{BlockSizes: bs(16384, 1), ReadPct: 100, QueueDepth: 1, Workers: 4, Engine: "sync", Duration: time.Minute, RateReadBPS: 4 * 100 * 16384, RegionBytes: 2 << 30}, 1},
		{"rate_iops=R,W on a mix, rate in bytes, poisson", base + "[j]\nrw=randrw\nnorandommap\nrate_iops=300,100\nrate_process=poisson\n",
			workload.Spec{BlockSizes: bs(4096, 1), ReadPct: 50, RandomPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second, RateReadBPS: 300 * 4096, RateWriteBPS: 100 * 4096, RateProcess: "poisson"}, 1},
		{"rate= per direction, a read job keeps only its read rate", base + "[j]\nrw=read\nrate=1m,2m\n",
			workload.Spec{BlockSizes: bs(4096, 1), ReadPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second, RateReadBPS: 1 << 20}, 1},
		{"buffered by default (direct=0), invalidate=0 keeps the cache", "[global]\ntime_based\nruntime=10\nfilename=/dev/x\n[j]\nrw=write\nbs=2300\ninvalidate=0\nfsync_on_close=1\n",
			workload.Spec{BlockSizes: bs(2300, 1), QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second, Buffered: true, KeepCache: true, FsyncOnClose: true}, 1},
		{"a bssplit over an inherited bsrange: the later wins", "[global]\ntime_based\nruntime=10\nfilename=/dev/x\ndirect=1\nbsrange=4k-16k\n[j]\nbssplit=4k/50:8k/50\n",
			workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}, {Bytes: 8192, Weight: 1}}, ReadPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second}, 1},
		{"bs after a bssplit changes nothing (min_bs is set)", base + "[j]\nbssplit=4k/50:8k/50\nbs=64k\n",
			workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}, {Bytes: 8192, Weight: 1}}, ReadPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second}, 1},
		{"bssplit sizes rounded down to the smallest, 0% is a share of the rest", base + "[j]\nbssplit=4k/50:6k/0\n",
			workload.Spec{BlockSizes: bs(4096, 1), ReadPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second}, 1},
		{"bsrange with max not a multiple of min: fio's capped last size", base + "[j]\nbsrange=4k-10k\n",
			workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 2}, {Bytes: 8192, Weight: 2}, {Bytes: 10240, Weight: 1}}, ReadPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second}, 1},
		{"kb_base of the job's section first, whatever its place", "[global]\ntime_based\nruntime=10\nfilename=/dev/x\n[j]\nbs=4k\nkb_base=1000\nsize=1m\n",
			workload.Spec{BlockSizes: bs(4000, 1), ReadPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second, RegionBytes: 1000000, Buffered: true}, 1},
		{"percentage_random", base + "[j]\nrw=randwrite\npercentage_random=25\n",
			workload.Spec{BlockSizes: bs(4096, 1), ReadPct: 0, RandomPct: 25, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second, RandomMap: true}, 1},
		{"rw: a sequential mix of reads and writes", base + "[j]\nrw=rw\nrwmixread=70\n",
			workload.Spec{BlockSizes: bs(4096, 1), ReadPct: 70, RandomPct: 0, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second}, 1},
		{"readwrite=randrw with percentage_random under 100", base + "[j]\nreadwrite=randrw\npercentage_random=60\n",
			workload.Spec{BlockSizes: bs(4096, 1), ReadPct: 50, RandomPct: 60, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second, RandomMap: true}, 1},
		{"no-op :N suffixes", base + "[j]\nrw=randread:1\n[k]\nstonewall\nrw=write:0\n",
			workload.Spec{BlockSizes: bs(4096, 1), ReadPct: 100, RandomPct: 100, QueueDepth: 1, Workers: 1, Engine: "sync", Duration: 10 * time.Second, RandomMap: true}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			pts, err := parse(t, c.text, Options{})
			require.NoError(t, err)
			require.Len(t, pts, c.points)
			got := pts[0].Jobs[0].Spec
			got.Name = ""
			// fio keeps a sequential position per direction (last_pos[ddir]),
			// for every job.
			require.Equal(t, workload.StreamsDirection, got.SequentialStreams)
			got.SequentialStreams = ""
			require.Equal(t, c.want, got)
		})
	}
}

func bs(n int64, w int) []workload.BlockSize { return []workload.BlockSize{{Bytes: n, Weight: w}} }

// TestParseGroupsAndTargets: jobs without stonewall run at once (one point,
// a group of workers each); stonewall starts the next point; --target
// replaces every filename; directory names fio's file.
func TestParseGroupsAndTargets(t *testing.T) {
	text := "[global]\ntime_based\nruntime=5\nsize=1m\n[a]\ndirectory=/d\n[b]\ndirectory=/d\nfilename=a.0.0\nrw=write\n[c]\nstonewall\ndirectory=/e\n"
	pts, err := parse(t, text, Options{})
	require.NoError(t, err)
	require.Len(t, pts, 2)
	require.Equal(t, "a+b", pts[0].Name)
	require.Equal(t, []string{"/d/a.0.0"}, pts[0].Targets)
	require.Len(t, pts[0].Specs(), 2)
	require.Equal(t, 0, pts[0].Specs()[1].ReadPct)
	require.Equal(t, []string{"/e/c.0.0"}, pts[1].Targets)
	require.True(t, pts[1].Jobs[0].Spec.Buffered, "fio's default: direct=0")

	pts, err = parse(t, text, Options{Targets: []string{"/dev/t1"}})
	require.NoError(t, err)
	require.Equal(t, []string{"/dev/t1"}, pts[1].Targets)
	// Several --target: every job's files, taken in turn as fio takes a
	// filename list's.
	pts, err = parse(t, text, Options{Targets: []string{"/dev/t1", "/dev/t2"}})
	require.NoError(t, err)
	require.Equal(t, []string{"/dev/t1", "/dev/t2"}, pts[1].Targets)
	require.Equal(t, 1, pts[1].Jobs[0].Spec.FilesInTurn)

	pts, err = parse(t, text, Options{Section: "c"})
	require.NoError(t, err)
	require.Len(t, pts, 1)
	require.Equal(t, "c", pts[0].Name)
	_, err = parse(t, text, Options{Section: "zz"})
	require.EqualError(t, err, "job.fio: no job section [zz]")

	// Jobs at once on different files: one run, each job on its own.
	pts, err = parse(t, "[global]\ntime_based\nruntime=5\n[a]\nfilename=/x\n[b]\nfilename=/y\n", Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"/x", "/y"}, pts[0].Targets)
	require.False(t, pts[0].SameTargets())
	require.Equal(t, []string{"/y"}, pts[0].Jobs[1].Targets)
	// ... but after one ramp-up.
	_, err = parse(t, "[global]\ntime_based\nruntime=5\n[a]\nfilename=/x\n[b]\nfilename=/y\nramp_time=1\n", Options{})
	require.ErrorContains(t, err, "job.fio:8: [b] ramp_time: runs at once with [a] with another ramp_time")
}

func TestParseIncludeAndEnv(t *testing.T) {
	files := map[string]string{"inc/common.fio": "time_based\nruntime=${RT}\n", "inc/loop.fio": "include loop.fio\n", "inc/sect.fio": "[x]\n"}
	o := Options{
		Env: func(k string) (string, bool) { v, ok := map[string]string{"RT": "7", "BS": "64k"}[k]; return v, ok },
		Include: func(n string) ([]byte, error) {
			v, ok := files[n]
			if !ok {
				return nil, errors.New("no such file")
			}
			return []byte(v), nil
		},
	}
	pts, err := Parse("inc/main.fio", []byte("[j]\nfilename=/f\ninclude common.fio\nbs=${BS}\n"), o)
	require.NoError(t, err)
	require.Equal(t, 7*time.Second, pts[0].Jobs[0].Spec.Duration)
	require.Equal(t, int64(65536), pts[0].Jobs[0].Spec.BlockSizes[0].Bytes)

	_, err = Parse("inc/main.fio", []byte("[j]\ninclude loop.fio\n"), o)
	require.ErrorContains(t, err, "nested more than")
	_, err = Parse("inc/main.fio", []byte("[j]\ninclude sect.fio\n"), o)
	require.EqualError(t, err, "inc/sect.fio:1: an include file may not contain [] sections (fio's rule)")
	_, err = Parse("inc/main.fio", []byte("[j]\ninclude none.fio\n"), o)
	require.EqualError(t, err, "inc/main.fio:2: include inc/none.fio: no such file")
	// An unset variable is empty, as in fio: bs= then has no value.
	_, err = Parse("inc/main.fio", []byte("[j]\ntime_based\nruntime=1\nbs=${NOPE}\n"), o)
	require.EqualError(t, err, "inc/main.fio:4: [j] bs: \"\": needs a value")
}

// TestParseRefusals: every refusal names the file, line, section and
// option, and says why.
func TestParseRefusals(t *testing.T) {
	const base = "[global]\ntime_based\nruntime=10\nfilename=/dev/x\n"
	for _, c := range []struct{ text, want string }{
		{base + "[j]\nrw=trim\n", `job.fio:6: [j] rw: "trim": ioprobe runs read, write, randread, randwrite, rw/readwrite and randrw (fio's names, lower case)`},
		{base + "[j]\nrw=randread:8\n", "job.fio:6: [j] rw: :8: fio then makes 8 sequential I/Os per random offset; ioprobe's % random has no runs of that length"},
		{base + "[j]\nrw=write:4k\n", "job.fio:6: [j] rw: :4096: fio then skips 4096 bytes after each I/O; ioprobe's sequential I/O has no holes"},
		{base + "[j]\nzonemode=zbd\n", "job.fio:6: [j] zonemode: not an option ioprobe can run with fio's meaning"},
		{base + "[j]\nioengine=mmap\n", `job.fio:6: [j] ioengine: "mmap": ioprobe runs the sync family (sync, psync, vsync, pvsync, pvsync2), io_uring, libaio and posixaio`},
		{base + "[j]\nrw=randrw\nbs=4k,64k\n", `job.fio:7: [j] bs: a transfer size mix per direction (reads 4KiB, writes 64KiB): ioprobe's transfer sizes are the same for reads and writes`},
		{base + "[j]\noffset=10%\n", "job.fio:6: [j] offset: a % of the file's size, whose size ioprobe does not know here (give it in bytes)"},
		{base + "[j]\ndirect=1\noffset=1000\n", "job.fio:7: [j] offset: 1000 is not a multiple of the transfer size 4096: fio's direct I/O at it fails (EINVAL)"},
		{base + "[j]\nfilename=/a:/b\nfile_service_type=random\n", "job.fio:7: [j] file_service_type: random: fio then picks each I/O's file at random (uniformly); ioprobe takes a job's files in turn (roundrobin, fio's default)"},
		{base + "[j]\nfile_service_type=roundrobin:0\n", `job.fio:6: [j] file_service_type: "roundrobin:0": fio reads "0" as 0 I/Os per file, which it counts down from 2^32 (one file for good)`},
		{base + "[j]\nsize=50%\n", "job.fio:6: [j] size: a size in % of the file, whose size ioprobe does not know here"},
		{base + "[j]\nverify=md5\n", "job.fio:6: [j] verify: fio's verification is not ioprobe's (use ioprobe's --verify)"},
		{base + "[j]\nbssplit=4k/60:8k/60:16k:32k\n", `job.fio:6: [j] bssplit: the percents add up to 120, over 100, with 2 sizes left to share the rest (fio: "bssplit percentages add to more than 100%")`},
		{base + "[j]\nbsrange=4k-128k\n", `job.fio:6: [j] bsrange: 4096-131072: fio draws 32 sizes from it; ioprobe runs at most 16`},

		{base + "[j]\niodepth=0\n", "job.fio:6: [j] iodepth: must be between 1 and 1024"},
		{"[j]\nfilename=/x\ntime_based\n", "job.fio:1: [j] runtime: missing: time_based without runtime runs until fio is killed"},
		{"[j]\nsize=1g\nnrfiles=100\nnumjobs=50\n", "job.fio:3: [j] nrfiles: 50 clones × 100 files is 5000 files: ioprobe opens at most 4096 for a job"},
		// f$jobnum$filenum: clone 11's f110 is clone 1's too.
		{"[global]\ntime_based\nruntime=1\nsize=12m\n[j]\nnumjobs=12\nfilename_format=f$jobnum$filenum\nnrfiles=12\n", `job.fio:7: [j] filename_format: "f$jobnum$filenum" gives clone 11 some of another clone's files and some of its own: fio's clones then share part of their files, ioprobe's workers all or none`},
		{"bs=4k\n[j]\n", "job.fio:1: bs: option before the first [section]"},
		{"[global]\nbs=4k\n", "job.fio: no job section (only [global])"},
		{"[j\n", `job.fio:1: not a section header: a section header is [name] (fio drops the header's last character, whatever it is)`},
	} {
		_, err := parse(t, c.text, Options{})
		require.EqualError(t, err, c.want, c.text)
		var fe *Error
		require.ErrorAs(t, err, &fe)
	}
}

// TestParseDurableWrites: fsync=N, fdatasync=N and sync= map to the spec's
// flush and open mode with fio's meaning (man fio: sync none/0, sync/1,
// dsync; a job that does not write never flushes; a later value replaces
// an earlier one, the job's own after [global]'s).
func TestParseDurableWrites(t *testing.T) {
	const base = "[global]\ntime_based\nruntime=10\nfilename=/dev/x\ndirect=1\n"
	type flush struct {
		fsync, fdatasync int
		sync             string
	}
	for _, c := range []struct {
		name, text string
		want       flush
	}{
		{"none by default", base + "[j]\nrw=write\n", flush{}},
		{"fdatasync every write (etcd's job)", base + "[j]\nrw=write\nbs=4k\nfdatasync=1\n", flush{0, 1, ""}},
		{"fsync every 32 writes", base + "[j]\nrw=randwrite\nfsync=32\n", flush{32, 0, ""}},
		{"fio's units in a count", base + "[j]\nrw=write\nfsync=1k\n", flush{1024, 0, ""}},
		{"mixed job flushes after its writes", base + "[j]\nrw=randrw\nfdatasync=8\n", flush{0, 8, ""}},
		{"read-only job never flushes", base + "[j]\nrw=randread\nfsync=1\n", flush{}},
		{"job's 0 undoes global's", "[global]\nfsync=4\n" + base[len("[global]\n"):] + "[j]\nrw=write\nfsync=0\nfdatasync=2\n", flush{0, 2, ""}},
		{"sync=1 is O_SYNC", base + "[j]\nrw=write\nsync=1\n", flush{0, 0, workload.SyncSync}},
		{"sync=sync is O_SYNC", base + "[j]\nrw=write\nsync=sync\n", flush{0, 0, workload.SyncSync}},
		{"sync=dsync is O_DSYNC", base + "[j]\nrw=write\nsync=dsync\n", flush{0, 0, workload.SyncDsync}},
		{"sync=0", base + "[j]\nrw=write\nsync=0\n", flush{}},
		{"sync=none after global dsync", "[global]\nsync=dsync\n" + base[len("[global]\n"):] + "[j]\nrw=write\nsync=none\n", flush{}},
		{"O_DSYNC writes and a flush", base + "[j]\nrw=write\nsync=dsync\nfsync=16\n", flush{16, 0, workload.SyncDsync}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pts, err := parse(t, c.text, Options{})
			require.NoError(t, err)
			s := pts[0].Jobs[0].Spec
			require.Equal(t, c.want, flush{s.Fsync, s.Fdatasync, s.Sync})
		})
	}
	for _, c := range []struct{ text, want string }{
		{base + "[j]\nrw=write\nsync=fsync\n", `job.fio:8: [j] sync: "fsync": fio's values are none (0), sync (1) and dsync`},
		{base + "[j]\nrw=write\nsync\n", "job.fio:8: [j] sync: needs a value"},
		{base + "[j]\nrw=write\nfsync=-1\n", "job.fio:8: [j] fsync: \"-1\": fio splits a value at ',', ':' or '-' and finds nothing before it (a negative number is not one here)"},
		{base + "[j]\nrw=write\nfdatasync=2g\n", "job.fio:8: [j] fdatasync: must be between 0 and 1073741824"},
		{base + "[j]\nrw=write\nfsync=4\nfdatasync=1\n", "job.fio:9: [j] fdatasync: with fsync=4: fio then issues whichever falls due first; ioprobe flushes one way (give one of them)"},
		{"[global]\ntime_based\nruntime=10\nfilename=/a:/b\n[j]\nrw=write\nfdatasync=1\n", "job.fio:7: [j] fdatasync: with 2 files (filename): fio counts the writes over all of a job's files and flushes the file its next I/O goes to; ioprobe flushes each file after every N writes to it"},
	} {
		_, err := parse(t, c.text, Options{})
		require.EqualError(t, err, c.want, c.text)
		var fe *Error
		require.ErrorAs(t, err, &fe)
	}
}
