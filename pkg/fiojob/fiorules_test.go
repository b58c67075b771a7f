package fiojob

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestAcceptedOptions (issue 22 item 8): options that change fio's
// reporting, logging, process model or cache handling but not the I/O
// run, each with the note the user needs.
func TestAcceptedOptions(t *testing.T) {
	j := one(t, "[j]\nfilename=/dev/big\nrw=randread\ndirect=1\ntime_based\nruntime=5\n"+
		"gtod_reduce=1\nwrite_bw_log=bw\nwrite_lat_log=lat\nwrite_iops_log=iops\nlog_avg_msec=1000\nclat_percentiles=1\n"+
		"lat_percentiles=1\npercentile_list=50:99\ninvalidate=1\nfadvise_hint=0\nnrfiles=1\nunlink=0\ndo_verify=0\n"+
		"refill_buffers\nfsync_on_close=1\ngroup_reporting\nthread\n")
	require.Equal(t, 100, j.Spec.RandomPct)
	notes := strings.Join(j.Notes, "\n")
	for _, log := range []string{"write_bw_log", "write_lat_log", "write_iops_log"} {
		require.Contains(t, notes, log+" (line")
		require.Contains(t, notes, "not written")
	}
	require.False(t, j.Spec.FsyncOnClose, "a read job has nothing to flush")
	require.Equal(t, []Option{{Key: "filename", Value: "/dev/big"}, {Key: "rw", Value: "randread"}}, j.Options[:2], "options as written")
}

// TestFioFileRules (issue 20 item 8): fio's file names.
func TestFioFileRules(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[j]\ndirectory=/mnt/d\nfilename=data\nsize=1m\n", "/mnt/d/data"},
		// fio puts the directory and '/' in front of any filename.
		{"[j]\ndirectory=/mnt/d\nfilename=/dev/big\nsize=1m\n", "/mnt/d//dev/big"},
		{"[j]\ndirectory=/mnt/a:/mnt/b\nsize=1m\n", "/mnt/a/j.0.0"},
		{"[j]\nsize=1m\n", "j.0.0"},
		{"[j]\nname=other\ndirectory=/m\nsize=1m\n", "/m/j.0.0"},
		{"[j]\nfilename_format=f.$JobName.$jobnum.$filenum\ndirectory=/m\nsize=1m\n", "/m/f.j.0.0"},
		// A section named after an existing device is that device.
		{"[/dev/big]\nrw=randread\n", "/dev/big"},
	} {
		j := one(t, c.text)
		require.Equal(t, []string{c.want}, j.Targets, c.text)
	}
	require.Contains(t, refused(t, "[j]\nfilename_format=$clientuid.x\nsize=1m\n"), "job.fio:2: [j] filename_format: $clientuid")
	// nrfiles without filename: fio's $jobname.$jobnum.$filenum, size
	// shared out over them, taken in turn (roundrobin, one I/O each).
	j := one(t, "[j]\nnrfiles=2\nsize=1m\n")
	require.Equal(t, []string{"j.0.0", "j.0.1"}, j.Targets)
	require.Equal(t, int64(512<<10), j.Spec.RegionBytes)
	require.Equal(t, 1, j.Spec.FilesInTurn)
	require.False(t, j.Spec.CloneFiles)
	// numjobs without filename: each clone its own files ($jobnum).
	j = one(t, "[j]\ndirectory=/d\nnumjobs=3\nnrfiles=2\nsize=1m\nfile_service_type=roundrobin:4\n")
	require.Equal(t, []string{"/d/j.0.0", "/d/j.0.1", "/d/j.1.0", "/d/j.1.1", "/d/j.2.0", "/d/j.2.1"}, j.Targets)
	require.True(t, j.Spec.CloneFiles)
	require.Equal(t, 4, j.Spec.FilesInTurn)
	// ... unless the format has no $jobnum: the clones share them.
	j = one(t, "[j]\nnumjobs=3\nfilename_format=$jobname.$filenum\nsize=1m\n")
	require.Equal(t, []string{"j.0"}, j.Targets)
	require.False(t, j.Spec.CloneFiles)
	// filename wins over nrfiles (options.c: str_filename_cb), also
	// nrfiles set after it (init.c caps nr_files at the files named).
	j = one(t, "[global]\nfilename=/dev/big\n[j]\nnrfiles=50\n")
	require.Equal(t, []string{"/dev/big"}, j.Targets)
	require.Zero(t, j.Spec.FilesInTurn)
	// A filename list: shared by the clones, in turn.
	j = one(t, "[j]\nfilename=/dev/big:/data/g\nnumjobs=4\nrw=randread\nsize=32m\n")
	require.Equal(t, []string{"/dev/big", "/data/g"}, j.Targets)
	require.Equal(t, int64(16<<20), j.Spec.RegionBytes)
	require.False(t, j.Spec.CloneFiles)
	require.Contains(t, refused(t, "[j]\nfilename=/dev/big:/data/g\nrw=read\n"), "job.fio:2: [j] filename: files of different sizes, and no size=")
	require.Contains(t, refused(t, "[j]\nfilename=/dev/big:/data/g\nsize=2m\nfile_service_type=sequential\n"), "file_service_type: sequential: fio then stays on a file")
	require.Contains(t, refused(t, "[j]\nfilename=/dev/big:/data/g\nsize=2m\nthinktime=1000\n"), "thinktime: with 2 files")
	// fio refuses a new file without a size, in its words.
	require.Equal(t, "job.fio:1: [j] size: you need to specify size= (fio's words: the file does not exist, and fio does not know how large to make it)",
		refused(t, "[j]\nrw=write\n"))
}

// TestFioSizeRules: size=N% of the file, filesize with one file, and a
// size that is not a multiple of the block size, as fio runs them.
func TestFioSizeRules(t *testing.T) {
	// 50% of a 64 MiB file, rounded down to the block size.
	require.Equal(t, int64(32<<20), one(t, "[j]\nfilename=/data/g\nsize=50%\nbs=64k\n").Spec.RegionBytes)
	require.Equal(t, int64(16<<20), one(t, "[j]\nfilename=/data/new\nfilesize=16m\n").Spec.RegionBytes)
	require.Contains(t, refused(t, "[j]\nfilename=/data/new\nfilesize=1m-2m\n"), "filesize: a range")
	for _, c := range []struct {
		name, text      string
		region, ioBytes int64
	}{
		// Sequential on a device: I/Os start before 10000, the third
		// reaches 12288 (fio 3.33: 3 I/Os, 12288 bytes).
		{"sequential, device", "[j]\nfilename=/dev/big\nrw=read\nsize=10000\n", 12288, 0},
		// A file of 10000 bytes holds two: fio's third does not fit.
		{"sequential, file as large as the size", "[j]\nfilename=/data/f\nrw=write\nsize=10000\n", 8192, 0},
		// Random: whole blocks only; the map fills after two (fio: 2).
		{"random with the map", "[j]\nfilename=/dev/big\nrw=randread\nsize=10000\n", 8192, 0},
		// Without the map fio goes on to 10000 bytes: three I/Os.
		{"random without the map", "[j]\nfilename=/dev/big\nrw=randread\nnorandommap\nsize=10000\n", 8192, 10000},
		// The etcd check as OpenShift publishes it: 22m of 2300-byte
		// writes to a new file fio makes 22m long (fio 3.33: 10029).
		{"etcd's 2300-byte writes", "[j]\ndirectory=/data\nfilename=etcd\nrw=write\nioengine=sync\nfdatasync=1\nsize=22m\nbs=2300\n", 10029 * 2300, 0},
	} {
		s := one(t, c.text).Spec
		require.Equal(t, c.region, s.RegionBytes, c.name)
		require.Equal(t, c.ioBytes, s.IOBytes, c.name)
	}
	require.Contains(t, refused(t, "[j]\nfilename=/dev/big\nrw=randrw\npercentage_random=50\nsize=10000\n"), "job.fio:5: [j] size: 10000 is not a multiple")
}

// TestFioParsingRules: fio's job file syntax where it surprises.
func TestFioParsingRules(t *testing.T) {
	// "[job1]]" is the section "job1]": fio drops the last character.
	j := one(t, "[job1]]\nfilename=/dev/big\n")
	require.Equal(t, "job1]", j.Name)
	// Every section whose name starts with "global" is a global one.
	j = one(t, "[globalish]\nbs=8k\n[j]\nfilename=/dev/big\n")
	require.Equal(t, int64(8192), j.Spec.BlockSizes[0].Bytes)
	// name= in [global] renames no job.
	require.Equal(t, "j", one(t, "[global]\nname=all\n[j]\nfilename=/dev/big\n").Name)
	// A blank after '=' stays in the value, and fio reads " 4k" as 4.
	j = one(t, "[j]\nfilename=/dev/big\nbs = 4k\n")
	require.Equal(t, int64(4), j.Spec.BlockSizes[0].Bytes)
	require.True(t, j.Spec.Buffered)
	require.Contains(t, strings.Join(j.Notes, "\n"), `bs (line 3): fio reads " 4k" as 4 (it ignores "k")`)
	// fio's option names are lower case.
	require.Contains(t, refused(t, "[j]\nfilename=/dev/big\nBS=4k\n"), `job.fio:3: [j] BS: fio's option names are lower case (fio: "Bad option")`)
	// A unit fio reads as microseconds is noted.
	j = one(t, "[j]\nfilename=/dev/big\ntime_based\nruntime=10sec\n")
	require.Equal(t, int64(10_000), j.Spec.Duration.Nanoseconds())
	require.Contains(t, strings.Join(j.Notes, "\n"), "microseconds")
	// ${VAR} and fio's keywords.
	pts, err := Parse("job.fio", []byte("[j]\nfilename=/dev/big\nnumjobs=$ncpus\nbs=${BS}\n"), Options{
		Stat: stat, Keywords: map[string]string{"$ncpus": "3"}, Env: func(string) (string, bool) { return "8k", true }})
	require.NoError(t, err)
	require.Equal(t, 3, pts[0].Jobs[0].Spec.Workers)
	require.Equal(t, int64(8192), pts[0].Jobs[0].Spec.BlockSizes[0].Bytes)
}

// TestRefusalsNameTheirLine (issue 22 item 9): a refusal names the
// option's own line and spelling, also when the spec's check finds it.
func TestRefusalsNameTheirLine(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		// bs=2300 cannot run with O_DIRECT: the bs line, not the header.
		{"[global]\ndirect=1\n\n[etcd]\nfilename=/dev/big\nrw=write\nioengine=sync\nfdatasync=1\nbs=2300\n", "job.fio:9: [etcd] bs: --bs 2300B: must be a multiple of 512 bytes"},
		{"[j]\nfilename=/dev/big\ndirect=1\nblocksize=1000\n", "job.fio:4: [j] blocksize: --bs 1000B"},
		{"[j]\nfilename=/dev/big\nrw=randrw\nbssplit=4k/50:16k/50,8k/100\n", "job.fio:4: [j] bssplit: a transfer size mix per direction"},
		{"[j]\nfilename=/dev/big\nrw=randrw\npercentage_random=50,20\n", "job.fio:4: [j] percentage_random: 50% random reads, 20% random writes"},
		{"[global]\niodepth=2000\n[j]\nfilename=/dev/big\n", "job.fio:2: [j] iodepth: must be between 1 and 1024"},
		{"[j]\nfilename=/dev/big\nrate_process=bursty\n", `job.fio:3: [j] rate_process: "bursty": fio's values are linear and poisson`},
	} {
		require.Contains(t, refused(t, c.text), c.want)
	}
}

// TestRandomMapAndRates: fio's random map is on for random jobs without
// norandommap (issue 22 item 4); rate and rate_iops are per direction
// and per clone (item 3).
func TestRandomMapAndRates(t *testing.T) {
	s := one(t, "[j]\nfilename=/dev/big\nrw=randrw\nrwmixread=70\nbssplit=4k/50:16k/50\ndirect=1\n").Spec
	require.True(t, s.RandomMap)
	require.False(t, one(t, "[j]\nfilename=/dev/big\nrw=randrw\nnorandommap\n").Spec.RandomMap)
	require.False(t, one(t, "[j]\nfilename=/dev/big\nrw=write\n").Spec.RandomMap)
	// blockalign other than the smallest size turns fio's map off.
	s = one(t, "[j]\nfilename=/dev/big\nrw=randread\nbs=4k\nblockalign=64k\ndirect=1\n").Spec
	require.False(t, s.RandomMap)
	require.Equal(t, int64(65536), s.Align)
	s = one(t, "[j]\nfilename=/dev/big\nrw=randrw\nrwmixread=70\nrate_iops=300\nnumjobs=2\ndirect=1\n").Spec
	require.Equal(t, int64(2*300*4096), s.RateReadBPS)
	require.Equal(t, int64(2*300*4096), s.RateWriteBPS)
	require.Zero(t, s.RateIOPS)
	s = one(t, "[j]\nfilename=/dev/big\nrw=randrw\nrate_iops=,50\ndirect=1\n").Spec
	require.Zero(t, s.RateReadBPS, "read unlimited")
	require.Equal(t, int64(50*4096), s.RateWriteBPS)
	require.NoError(t, s.Validate())
	_ = workload.RatePoisson
}

// TestJobsAtOnceWithTheirOwnSize: jobs fio runs at once may each have
// their own size on the target (each group keeps its region), and with
// budgets each ends on its own, as fio's do.
func TestJobsAtOnceWithTheirOwnSize(t *testing.T) {
	for _, g := range []string{"time_based\nruntime=5\n", ""} {
		pts, err := Parse("job.fio", []byte("[global]\nfilename=/dev/big\n"+g+"[a]\nsize=1g\n[b]\nrw=randread\nsize=100m\nruntime=2\n"), Options{Stat: stat})
		require.NoError(t, err)
		require.Len(t, pts, 1)
		require.Equal(t, int64(1<<30), pts[0].Jobs[0].Spec.RegionBytes)
		require.Equal(t, int64(100<<20), pts[0].Jobs[1].Spec.RegionBytes)
		require.Equal(t, 2*time.Second, pts[0].Jobs[1].Spec.Duration)
	}
}

// TestSizeAboveTheDevice (issue 33 item 1): fio caps a device's region at
// what it holds (io_u.c: last_block), with a note; its byte budget stays
// size= where no pass ends it first.
func TestSizeAboveTheDevice(t *testing.T) {
	j := one(t, "[j]\nfilename=/dev/big\nrw=read\nsize=10g\n")
	require.Equal(t, int64(1<<30), j.Spec.RegionBytes)
	require.Zero(t, j.Spec.IOBytes, "sequential: the pass ends at the device's end")
	require.Contains(t, strings.Join(j.Notes, "\n"), "size (line 4): 10737418240 bytes per file is more than /dev/big holds (1073741824 bytes): capped to its size, as fio caps it")
	j = one(t, "[j]\nfilename=/dev/big\nrw=randread\nsize=2g\n")
	require.Zero(t, j.Spec.IOBytes, "the random map ends the pass")
	j = one(t, "[j]\nfilename=/dev/big\nrw=randread\nnorandommap\nsize=2g\n")
	require.Equal(t, int64(2<<30), j.Spec.IOBytes, "without the map fio goes on to size=")
	// A file fio makes longer: not capped (the target is grown or made).
	require.Equal(t, int64(1<<30), one(t, "[j]\nfilename=/data/g\nsize=1g\n").Spec.RegionBytes)
	// With offsets the clones' regions would pass the end: refused.
	require.Contains(t, refused(t, "[j]\nfilename=/dev/big\nsize=600m\noffset_increment=500m\nnumjobs=2\n"), "job.fio:4: [j] offset_increment: clone 1's region ends at byte 1153433600, past the end of /dev/big")
}

// TestOffsets (issue 33 item 4): offset, offset_increment and size=N% as
// fio's get_start_offset and setup_files compute them.
func TestOffsets(t *testing.T) {
	j := one(t, "[j]\nfilename=/dev/big\nrw=read\nnumjobs=4\noffset_increment=256m\nsize=256m\n")
	require.Zero(t, j.Spec.Offset)
	require.Equal(t, int64(256<<20), j.Spec.OffsetIncrement)
	require.Equal(t, int64(256<<20), j.Spec.RegionBytes)
	require.Equal(t, int64(1<<30), j.Spec.Extent())
	// Percentages of the device, rounded up to the smallest transfer.
	j = one(t, "[j]\nfilename=/dev/big\nrw=read\nnumjobs=4\noffset=10%\noffset_increment=20%\nsize=20%\nbs=64k\n")
	for k, want := range []int64{107413504, 322174976, 536870912, 751632384} {
		require.Equal(t, want, j.Spec.WorkerRegion(k), "clone %d: 10%% + k × 20%% of 1 GiB, each up to 64k", k)
	}
	require.Equal(t, int64(214695936), j.Spec.RegionBytes, "20% down to 64k")
	// offset alone, no size: each region to the device's end.
	j = one(t, "[j]\nfilename=/dev/big\nrw=randread\noffset=25%\n")
	require.Equal(t, int64(256<<20), j.Spec.Offset)
	require.Zero(t, j.Spec.RegionBytes)
	// size=N% capped at what is left after the offset.
	require.Equal(t, int64(256<<20), one(t, "[j]\nfilename=/dev/big\noffset=75%\nsize=50%\n").Spec.RegionBytes)
	require.Contains(t, refused(t, "[j]\nfilename=/dev/big\nnumjobs=4\noffset_increment=25%\nsize=50%\n"), "size: 50% of the file is more than is left after clone 3's offset")
	require.Contains(t, refused(t, "[j]\nfilename=/dev/big\nbs=4k\nnumjobs=3\noffset_increment=3333333\nsize=1m\nbuffered=0\n"), "offset_increment: 3333333 is not a multiple of the transfer size 4096")
	require.Contains(t, refused(t, "[j]\nfilename=/dev/big\nbs=4k\noffset=1000\nsize=1m\ndirect=1\n"), "job.fio:4: [j] offset: 1000 is not a multiple of the transfer size 4096")
}

// TestLoopsThatStartOver: fio starts each loop with an empty random map
// (and, buffered, a dropped cache); the generator does the same at each
// loop's start (workload's loop tests), so such loops run.
func TestLoopsThatStartOver(t *testing.T) {
	s := one(t, "[j]\nfilename=/dev/big\nrw=randread\nsize=8m\nio_size=2m\nloops=3\ndirect=1\n").Spec
	require.True(t, s.RandomMap)
	require.Equal(t, 3, s.Loops)
	require.Equal(t, int64(2<<20), s.IOBytes)
}
