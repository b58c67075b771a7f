package icf

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzParse: any input is refused with an *Error, or parses into a
// configuration whose points are refused with an *Error or are at most
// MaxPoints runs, each of workers with a specification, outstanding I/Os
// and targets; never a panic or a hang.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.icf"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(string(data))
	}
	f.Add(setup("CYCLE_WORKERS_AND_TARGETS", "1 2 EXPONENTIAL", "2 3 EXPONENTIAL", "1 9 3 LINEAR") + specs("R=4096,50,100,100,0,1,0,0;8192,50,0,0,5,2,4096,0") +
		managers(worker("W1", 4, []string{"R", "Idle", "R"}, "A", "B"), worker("W2", 2, []string{"R"}, "A")))
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse("f.icf", []byte(text), Options{RunTime: time.Second, QueueDepth: 2})
		var e *Error
		if err != nil {
			require.True(t, errors.As(err, &e), "%T %v", err, err)
			return
		}
		pts, err := c.Points()
		if err != nil {
			require.True(t, errors.As(err, &e), "%T %v", err, err)
			return
		}
		require.NotEmpty(t, pts)
		require.LessOrEqual(t, len(pts), MaxPoints)
		for _, p := range pts {
			require.NotEmpty(t, p.Groups)
			for _, g := range p.Groups {
				require.NotNil(t, g.Spec)
				require.NotEmpty(t, g.Spec.Lines)
				require.NotEmpty(t, g.Workers)
				require.NotEmpty(t, g.Targets)
				require.GreaterOrEqual(t, g.QueueDepth, 1)
			}
			specs, targets, err := c.Workload(p, "auto")
			if err != nil {
				require.True(t, errors.As(err, &e), "%T %v", err, err)
				continue
			}
			require.Len(t, specs, len(p.Groups))
			require.Len(t, targets, len(p.Groups))
		}
	})
}
