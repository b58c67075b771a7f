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

// TestSpecTargets: a unit whose specifications have targets of their own
// plans each group on its own targets, and is the same measurement as
// another only when those match too.
func TestSpecTargets(t *testing.T) {
	spec := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}}, ReadPct: 100, QueueDepth: 1, Workers: 1,
		Duration: time.Second, Engine: "sync"}
	p := workload.SuitePoint{Name: "p", Specs: []workload.Spec{spec, spec}}
	a := Unit{Point: p, Targets: []string{"/a", "/b"}, SpecTargets: [][]string{{"/a"}, {"/b"}}}
	plan := Settings{}.Plan(a)
	require.Len(t, plan.Groups, 2)
	require.Equal(t, []string{"/a"}, plan.Groups[0].Targets)
	require.Equal(t, []string{"/b"}, plan.Groups[1].Targets)

	b := Unit{Point: p, Targets: []string{"/a", "/b"}, SpecTargets: [][]string{{"/a", "/b"}, {"/b"}}}
	c := Unit{Point: p, Targets: []string{"/a", "/b"}, SpecTargets: [][]string{{"/a"}, {"/b"}}}
	require.Equal(t, []int{-1, -1, 0}, SameAs([]Unit{a, b, c}))
	plain := Unit{Point: p, Targets: []string{"/a"}}
	require.Equal(t, []string{"/a"}, Settings{}.Plan(plain).Groups[1].Targets)
}
