package fiojob

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: any input either parses into points whose specifications are
// valid and whose targets are their jobs' files, each once, or is refused
// with an *Error; never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"[global]\ntime_based\nruntime=10\nfilename=/dev/x\n[j]\nrw=randrw\nbssplit=4k/10:64k\n",
		"[a]\ntime_based=1\nruntime=1m\nbsrange=512-4k\nioengine=io_uring\niodepth=8\n[b]\nstonewall\n",
		"[j]\ninclude x.fio\nbs=${BS}\n",
		"; comment\n# comment\n[j]\nrw=write:0\nsize=0x1000\nkb_base=1000\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		pts, err := Parse("f.fio", []byte(text), Options{
			Env:     func(string) (string, bool) { return "4k", true },
			Include: func(string) ([]byte, error) { return []byte("time_based\n"), nil },
		})
		if err != nil {
			var fe *Error
			require.ErrorAs(t, err, &fe)
			return
		}
		require.NotEmpty(t, pts)
		for _, p := range pts {
			require.NotEmpty(t, p.Jobs)
			var union []string
			for _, j := range p.Jobs {
				require.NoError(t, j.Spec.Validate())
				require.NotEmpty(t, j.Targets)
				require.LessOrEqual(t, len(j.Targets), MaxFiles)
				if j.Spec.CloneFiles {
					require.Zero(t, len(j.Targets)%j.Spec.Workers)
				}
				for _, tg := range j.Targets {
					if !slices.Contains(union, tg) {
						union = append(union, tg)
					}
				}
			}
			require.Equal(t, union, p.Targets)
		}
	})
}
