package test

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRedteamOutNeverReplacesWhatItUses: --out replaces a regular file by
// renaming the output over it, which is right for an old output and wrong
// for a file the command uses: a read-only run of a database's file with
// --out naming that file (no flag needed, the run only reads) would
// replace the data with the report; `report a.json --out a.json` would
// replace the only copy of a result. Each is refused before anything
// runs, naming the file, and the file is unchanged; an --out beside them
// is written.
func TestRedteamOutNeverReplacesWhatItUses(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "db.dat")
	require.NoError(t, os.WriteFile(data, randomBytes(t, 4<<20), 0o600))
	good := shortRead(t, dir) // a.json
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.json"), good, 0o600))
	job := filepath.Join(dir, "job.fio")
	require.NoError(t, os.WriteFile(job, []byte("[j]\nrw=randread\nbs=4k\nsize=1m\ntime_based\nruntime=1\ninclude common.inc\nfilename="+data+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "common.inc"), []byte("iodepth=2\n"), 0o600))
	sum := func(path string) [32]byte {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return sha256.Sum256(b)
	}
	files := []string{data, filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), job, filepath.Join(dir, "common.inc")}
	before := map[string][32]byte{}
	for _, f := range files {
		before[f] = sum(f)
	}
	read := []string{"--size", "1MiB", "--duration", "1s", "--ramp", "0s", "--engine", "sync", "--output", "json"}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{append([]string{"run", "--target", data, "--out", "db.dat"}, read...), "ioprobe: --out db.dat is a target of the run (" + data + ")"},
		{[]string{"run", "--target", "new.dat", "--out", "./new.dat", "--size", "1MiB", "--duration", "1s"}, "ioprobe: --out ./new.dat is a target of the run (new.dat)"},
		{[]string{"report", "a.json", "--out", "a.json"}, "ioprobe: --out a.json is an input of the report (a.json)"},
		{[]string{"report", "--merge", "a.json", filepath.Join(dir, "b.json"), "--out", "b.json"}, "ioprobe: --out b.json is an input of the report (" + filepath.Join(dir, "b.json") + ")"},
		{[]string{"compare", "a.json", "b.json", "--out", filepath.Join(dir, "a.json")}, "ioprobe: --out " + filepath.Join(dir, "a.json") + " is an input of the comparison (a.json)"},
		{[]string{"run", "--fio-job", job, "--out", "job.fio"}, "ioprobe: --out job.fio is the fio job file (" + job + ")"},
		{[]string{"run", "--fio-job", job, "--out", "common.inc"}, "ioprobe: --out common.inc is a file the job file includes (common.inc)"},
		{[]string{"run", "--fio-job", job, "--out", "db.dat"}, "ioprobe: --out db.dat is a target of the job file (" + data + ")"},
	} {
		o := ioprobe(t, dir, c.args...)
		require.Equal(t, 2, o.code, "%v: %s", c.args, o.stderr)
		require.Equal(t, c.msg+": writing the output there would replace it; name another file\n", o.stderr, "%v", c.args)
		for _, f := range files {
			require.Equal(t, before[f], sum(f), "%v: %s changed", c.args, f)
		}
	}
	_, err := os.Stat(filepath.Join(dir, "new.dat"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing ran")

	o := ioprobe(t, dir, append([]string{"run", "--target", data, "--out", "db.json"}, read...)...)
	require.Equal(t, 0, o.code, o.stderr)
	require.Equal(t, before[data], sum(data))
	o = ioprobe(t, dir, "report", "a.json", "--out", "c.json")
	require.Equal(t, 0, o.code, o.stderr)
}
