package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
)

// TestSizeBasedJobsAsFioRunsThem runs fio job files without time_based
// through fio and through ioprobe, one after the other, on the same loop
// device: both stop after the same number of I/Os and bytes, by each
// tool's own JSON and by the kernel's counters of the device
// (/sys/block/DEV/stat around fio; ioprobe's summary.device, read from
// the same counters over its measured window), and ioprobe says that the
// run ended by its budget.
func TestSizeBasedJobsAsFioRunsThem(t *testing.T) {
	testdeps.Need(t, testdeps.Tool("fio"))
	dev := testloop.Device(t, 64<<20)
	dir := t.TempDir()
	for _, c := range []struct {
		name, job string
		ios       uint64 // what fio's documentation says the job does
		bytes     uint64
	}{
		{"size", "rw=randread\nbs=4k\nsize=8m\n", 2048, 8 << 20},
		{"number_ios", "rw=randread\nbs=4k\nsize=8m\nnumber_ios=500\n", 500, 500 * 4096},
		{"loops", "rw=read\nbs=64k\nsize=8m\nloops=3\n", 3 * 128, 3 * 8 << 20},
		{"io_size", "rw=randread\nbs=16k\nsize=8m\nio_size=2m\nloops=2\n", 2 * 128, 2 * 2 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, c.name+".fio")
			require.NoError(t, os.WriteFile(file, []byte("[j]\nfilename="+dev+"\nioengine=psync\ndirect=1\n"+c.job), 0o600))

			r0, s0, _, _ := blockStat(t, dev)
			out, err := exec.Command("fio", "--output-format=json", file).Output()
			require.NoError(t, err)
			r1, s1, _, _ := blockStat(t, dev)
			var fio struct {
				Jobs []struct {
					Read struct {
						TotalIOs uint64 `json:"total_ios"`
						IOBytes  uint64 `json:"io_bytes"`
					} `json:"read"`
				} `json:"jobs"`
			}
			require.NoError(t, json.Unmarshal(out, &fio))
			require.Len(t, fio.Jobs, 1)
			require.Equal(t, c.ios, fio.Jobs[0].Read.TotalIOs, "fio's own count")
			require.Equal(t, c.bytes, fio.Jobs[0].Read.IOBytes)
			require.EqualValues(t, c.ios, r1-r0, "the kernel's count of fio's reads")
			require.EqualValues(t, c.bytes, (s1-s0)*512)

			o := ioprobe(t, dir, "run", "--fio-job", file, "--output", "json")
			require.Zero(t, o.code, o.stderr)
			var res struct {
				Status  string `json:"status"`
				Summary struct {
					Ended     string `json:"ended"`
					ReadOps   uint64 `json:"read_ops"`
					ReadBytes uint64 `json:"read_bytes"`
					WriteOps  uint64 `json:"write_ops"`
					Device    *struct {
						ReadOps   uint64 `json:"read_ops"`
						ReadBytes uint64 `json:"read_bytes"`
					} `json:"device"`
				} `json:"summary"`
			}
			require.NoError(t, json.Unmarshal([]byte(o.stdout), &res), o.stdout)
			require.Equal(t, "ok", res.Status)
			require.Equal(t, "budget", res.Summary.Ended)
			require.Equal(t, fio.Jobs[0].Read.TotalIOs, res.Summary.ReadOps)
			require.Equal(t, fio.Jobs[0].Read.IOBytes, res.Summary.ReadBytes)
			require.Zero(t, res.Summary.WriteOps)
			require.NotNil(t, res.Summary.Device)
			require.EqualValues(t, r1-r0, res.Summary.Device.ReadOps, "the kernel's count of ioprobe's reads")
			require.EqualValues(t, (s1-s0)*512, res.Summary.Device.ReadBytes)
		})
	}
}
