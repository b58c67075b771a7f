package exporter

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func snapshot(path string, reads []int64, bytes uint64, eio uint64) *runner.Snapshot {
	s := &runner.Snapshot{Targets: []runner.TargetSnapshot{{Path: path}}}
	r := &s.Targets[0].Read
	for _, v := range reads {
		r.Latency.Record(v)
	}
	r.Ops, r.Bytes = r.Latency.Count(), bytes
	r.Errors[0] = eio
	return s
}

// Each run's cumulative snapshots become increments; a second run adds to
// the first; nothing ever goes back.
func TestLiveSeriesAccumulateAcrossRuns(t *testing.T) {
	store := newLiveStore()
	names := map[string]string{"/p": "data"}
	k := liveKey{"data", "j", "read"}

	o := store.observer("j", names, true, false)
	require.Contains(t, store.series, k, "created up front")
	require.NotContains(t, store.series, liveKey{"data", "j", "write"})
	o.Observe(snapshot("/p", []int64{1000, 2000}, 8192, 0))
	o.Observe(snapshot("/p", []int64{1000, 2000, 3000}, 12288, 1))
	o.Observe(snapshot("/elsewhere", []int64{5}, 1, 0)) // not this run's target
	s := store.series[k]
	require.EqualValues(t, 3, s.ops)
	require.EqualValues(t, 12288, s.bytes)
	require.EqualValues(t, 1, s.errors[0])
	require.EqualValues(t, 3, s.latency.Count())
	require.EqualValues(t, 6000, s.latency.Sum())

	o2 := store.observer("j", names, true, false)
	o2.Observe(snapshot("/p", []int64{4000}, 4096, 0))
	require.EqualValues(t, 4, s.ops)
	require.EqualValues(t, 16384, s.bytes)
	require.EqualValues(t, 10000, s.latency.Sum())
	o2.Observe(snapshot("/p", nil, 0, 0)) // backwards: ignored
	require.EqualValues(t, 4, s.ops)
	require.EqualValues(t, 16384, s.bytes)
	require.EqualValues(t, 1, s.errors[0])
	require.EqualValues(t, 4, s.latency.Count())
}

// A rate-limited run feeds the intended series (created up front, like the
// others); an unpaced one creates none and leaves them alone.
func TestLiveIntendedSeriesOnlyForPacedRuns(t *testing.T) {
	store := newLiveStore()
	names := map[string]string{"/p": "data"}
	k := liveKey{"data", "j", "read"}
	paced := func(reads, intended []int64) *runner.Snapshot {
		s := snapshot("/p", reads, 0, 0)
		for _, v := range intended {
			s.Targets[0].Read.Intended.Record(v)
		}
		return s
	}

	store.observer("j", names, true, false).pacedBy([]workload.Spec{{}}).Observe(snapshot("/p", []int64{1}, 0, 0))
	require.Nil(t, store.series[k].intended, "unpaced")

	o := store.observer("j", names, true, false).pacedBy([]workload.Spec{{RateIOPS: 20}})
	require.NotNil(t, store.series[k].intended, "created up front")
	require.Nil(t, store.series[liveKey{"data", "j", "write"}], "no write series for a read-only run")
	require.Zero(t, store.series[k].intended.Count())
	o.Observe(paced([]int64{1000, 2000}, []int64{1000, 5_000_000_000}))
	o.Observe(paced([]int64{1000, 2000, 3000}, []int64{1000, 5_000_000_000, 4_950_000_000}))
	s := store.series[k]
	require.EqualValues(t, 3, s.intended.Count())
	require.EqualValues(t, 9_950_001_000, s.intended.Sum())
	require.EqualValues(t, 4, s.latency.Count(), "the service times of both runs")

	o.Observe(paced(nil, nil)) // backwards: ignored
	require.EqualValues(t, 3, s.intended.Count())
}

// A run's observer is built from its specs wherever it runs (a job, an
// API run): a multi-line spec's reads, a paced spec's intended-start
// series and a flushing spec's flush series are all there before the
// first snapshot.
func TestObserverForSpecs(t *testing.T) {
	store := newLiveStore()
	names := map[string]string{"/p": "data"}
	lines := workload.Spec{Lines: []workload.Line{{Bytes: 4096, Share: 50, ReadPct: 100}, {Bytes: 4096, Share: 50, ReadPct: 0}}, RateIOPS: 20, Fdatasync: 1}
	store.observerFor("api", names, []workload.Spec{lines})
	r := store.series[liveKey{"data", "api", "read"}]
	require.NotNil(t, r, "the read series of a spec that reads only through its lines")
	require.NotNil(t, r.intended, "paced: intended-start series up front")
	require.NotNil(t, store.series[liveKey{"data", "api", "write"}])
	require.NotNil(t, store.flush[flushKey{"data", "api"}], "flushing: flush series up front")

	store.observerFor("plain", names, []workload.Spec{{ReadPct: 100}})
	require.Nil(t, store.series[liveKey{"data", "plain", "read"}].intended, "unpaced")
	require.Nil(t, store.flush[flushKey{"data", "plain"}], "no flushes")
}
