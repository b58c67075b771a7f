package suiterun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

func TestSuiteUnitsRunEachTargetInTurnThenSpans(t *testing.T) {
	s, err := workload.BuildSuite("peak-iops", workload.SuiteOptions{Targets: 2,
		Base: workload.Spec{Duration: time.Second, Ramp: time.Second}})
	require.NoError(t, err)
	units := Units(s, []string{"/dev/sdb", "/dev/sdc"})
	require.Len(t, units, 2*14+2)
	require.Equal(t, "random-read-512b-qd16 on /dev/sdb", units[0].Label())
	require.Equal(t, "random-read-512b-qd16 on /dev/sdc", units[14].Label())
	require.Equal(t, "targets-8k-qd16-t1 on 1 target at once", units[28].Label())
	require.Equal(t, []string{"/dev/sdb", "/dev/sdc"}, units[29].Targets)
	require.Equal(t, 2*time.Second, units[0].Planned())
}

// TestSameSpecificationMeasuredOnce: peak-iops asks for 8 KiB random reads
// at 32 outstanding as a request size and as one worker of the workers
// scaling, and at 16 outstanding as a request size and on one target of
// the targets scaling. Each is measured once per target.
func TestSameSpecificationMeasuredOnce(t *testing.T) {
	s, err := workload.BuildSuite("peak-iops", workload.SuiteOptions{Targets: 2,
		Base: workload.Spec{Duration: time.Second, Ramp: time.Second}})
	require.NoError(t, err)
	units := Units(s, []string{"/dev/sdb", "/dev/sdc"})
	same := SameAs(units)
	got := map[string]string{}
	for i, j := range same {
		if j >= 0 {
			require.Less(t, j, i)
			require.Negative(t, same[j], "the first measurement of a specification is measured")
			got[units[i].Label()] = units[j].Label()
		}
	}
	require.Equal(t, map[string]string{
		"workers-8k-qd32-w1 on /dev/sdb":         "random-read-8k-qd32 on /dev/sdb",
		"workers-8k-qd32-w1 on /dev/sdc":         "random-read-8k-qd32 on /dev/sdc",
		"targets-8k-qd16-t1 on 1 target at once": "random-read-8k-qd16 on /dev/sdb",
	}, got)
}
