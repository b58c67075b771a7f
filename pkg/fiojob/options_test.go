package fiojob

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Each job keeps its own options as written and the [global] options
// before it (fio's "job options" and "global options"); name= in
// [global] names no job (fio 3.33: jobs [a] and [c] under [global]
// name=g are "a" and "c"), a job's own name= renames it but not its file
// (fio: [a] name=b writes a.0.0).
func TestOptionsAsWrittenForFioJSON(t *testing.T) {
	text := "[global]\nname=g\nsize=1m\ntime_based\nruntime=1\ndirectory=/d\n[a]\nname=b\nbs=4k ; four\nrw=randread\n[c]\nstonewall\n"
	pts, err := parse(t, text, Options{})
	require.NoError(t, err)
	require.Len(t, pts, 2)
	a, c := pts[0].Jobs[0], pts[1].Jobs[0]
	require.Equal(t, "b", a.Spec.Name, "the job's report name (fio-json's jobname)")
	require.Equal(t, []string{"/d/a.0.0"}, a.Targets)
	require.Equal(t, "c", c.Spec.Name, "name= in [global] renames no job")
	require.Equal(t, []string{"/d/c.0.0"}, c.Targets)
	require.Equal(t, []Option{{Key: "name", Value: "b"}, {Key: "bs", Value: "4k"}, {Key: "rw", Value: "randread"}}, a.Options)
	require.Equal(t, []Option{{Key: "stonewall", Bare: true}}, c.Options)
	want := []Option{{Key: "name", Value: "g"}, {Key: "size", Value: "1m"}, {Key: "time_based", Bare: true}, {Key: "runtime", Value: "1"}, {Key: "directory", Value: "/d"}}
	require.Equal(t, want, a.Global)
	require.Equal(t, want, c.Global)
}
