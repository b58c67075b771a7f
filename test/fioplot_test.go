package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// fioPlot returns the directory of a fio-plot source tree (the one that
// holds fio_plot/), from $IOPROBE_FIO_PLOT, and the Python that has
// Debian's matplotlib (scripts/test-deps.sh installs it). fio-plot itself
// comes from no package registry these machines reach: the test skips,
// saying so, without a source tree.
func fioPlot(t *testing.T) (dir, python string) {
	t.Helper()
	dir = os.Getenv("IOPROBE_FIO_PLOT")
	if dir == "" {
		t.Skip("IOPROBE_FIO_PLOT is not set: point it at a fio-plot source tree (github.com/louwrentius/fio-plot) to run fio-plot on ioprobe's fio-json") //hygiene:skip fio-plot comes from no registry make test reaches
	}
	_, err := os.Stat(filepath.Join(dir, "fio_plot", "__main__.py"))
	require.NoError(t, err, "IOPROBE_FIO_PLOT=%s is not a fio-plot source tree", dir)
	python = "/usr/bin/python3"
	o := runCmd(t, exec.Command(python, "-c", "import matplotlib, numpy, PIL"))
	require.Equal(t, 0, o.code, "Debian's python3-matplotlib, python3-numpy and python3-pil (scripts/test-deps.sh): %s", o.stderr)
	testdeps.Need(t, testdeps.Tool("fio"))
	return dir, python
}

// TestFioPlotReadsIoprobe: fio-plot draws ioprobe's fio-json as it draws
// fio's: its latency histogram (-H) of each, and its comparison (-C) of
// the two side by side, from a run with ioprobe's flags and from a fio
// job file with a [global] section.
func TestFioPlotReadsIoprobe(t *testing.T) {
	src, python := fioPlot(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	fioDir, ioDir, jobDir := filepath.Join(dir, "fio"), filepath.Join(dir, "ioprobe"), filepath.Join(dir, "jobfile")
	for _, d := range []string{fioDir, ioDir, jobDir} {
		require.NoError(t, os.Mkdir(d, 0o700))
	}
	o := runCmd(t, exec.Command("fio", "--name=rr", "--filename="+data, "--size=16m", "--rw=randread", "--bs=4k",
		"--iodepth=8", "--numjobs=1", "--ioengine=io_uring", "--direct=1", "--time_based", "--runtime=1",
		"--output-format=json+", "--output="+filepath.Join(fioDir, "randread-8-1.json")))
	require.Equal(t, 0, o.code, o.stderr)

	o = ioprobe(t, dir, "run", "--target", filepath.Join(dir, "probe.dat"), "--size", "16MiB", "--bs", "4k", "--qd", "8",
		"--duration", "1s", "--ramp", "0s", "--output", "fio-json", "--out", filepath.Join(ioDir, "randread-8-1.json"))
	require.Equal(t, 0, o.code, o.stderr)

	job := filepath.Join(dir, "rr.fio")
	require.NoError(t, os.WriteFile(job, []byte("[global]\ndirect=1\nioengine=io_uring\ntime_based\nruntime=1\nsize=16m\n[rr]\nrw=randread\nbs=4k\niodepth=8\nnumjobs=1\nfilename="+filepath.Join(dir, "job.dat")+"\n"), 0o600))
	o = ioprobe(t, dir, "run", "--fio-job", job, "--output", "fio-json", "--out", filepath.Join(jobDir, "randread-8-1.json"))
	require.Equal(t, 0, o.code, o.stderr)

	plot := func(name string, args ...string) {
		t.Helper()
		out := filepath.Join(dir, name+".png")
		cmd := exec.Command(python, append([]string{"-m", "fio_plot", "-T", name, "-r", "randread", "-d", "8", "-n", "1", "-o", out}, args...)...)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "MPLBACKEND=Agg", "MPLCONFIGDIR="+filepath.Join(dir, "mpl"))
		o := runCmd(t, cmd)
		require.Equal(t, 0, o.code, "fio-plot %v: %s%s", args, o.stdout, o.stderr)
		st, err := os.Stat(out)
		require.NoError(t, err, "fio-plot %v wrote no picture: %s", args, o.stdout)
		require.Positive(t, st.Size())
	}
	for _, d := range []string{fioDir, ioDir, jobDir} {
		plot("H-"+filepath.Base(d), "-H", "-i", d)
	}
	plot("C", "-C", "-i", fioDir, ioDir, jobDir)
}
