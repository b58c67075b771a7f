package cpuacct

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func parseFixture(t *testing.T, name string) (Stat, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "stat", name))
	require.NoError(t, err)
	defer f.Close()
	return parseStat(f)
}

func TestParseStat(t *testing.T) {
	s, err := parseFixture(t, "4cpu")
	require.NoError(t, err)
	require.Equal(t, CPUTimes{User: 10132153, Nice: 290696, System: 3084719, Idle: 46828483,
		IOWait: 16683, SoftIRQ: 25195, Guest: 175628}, s.All)
	require.Len(t, s.CPUs, 4)
	require.Equal(t, 3, s.CPUs[3].ID)
	require.Equal(t, CPUTimes{User: 1393280, Nice: 32966, System: 572056, Idle: 13366757,
		IOWait: 4279, SoftIRQ: 4052, Guest: 36020}, s.CPUs[0].CPUTimes)

	// Guest time is inside user already: not added again.
	require.Equal(t, uint64(10132153+290696+3084719+46828483+16683+25195), s.All.Total())
	require.Equal(t, uint64(10132153+290696+3084719+25195), s.All.Busy())
}

func TestParseStatVariants(t *testing.T) {
	s, err := parseFixture(t, "linux-2.4")
	require.NoError(t, err)
	require.Equal(t, CPUTimes{User: 100, Nice: 2, System: 30, Idle: 868}, s.All)
	require.Len(t, s.CPUs, 2)

	s, err = parseFixture(t, "offline-cpu1")
	require.NoError(t, err)
	require.Equal(t, []int{0, 2}, []int{s.CPUs[0].ID, s.CPUs[1].ID})

	for name, want := range map[string]string{
		"bad-counter":  `bad counter "x"`,
		"no-aggregate": `no aggregate "cpu" line`,
		"short-line":   "want at least 4 counters",
	} {
		_, err := parseFixture(t, name)
		require.ErrorContains(t, err, want, name)
	}
}

func TestParseStatStopsBeforeHugeLines(t *testing.T) {
	// The intr line of a large machine is far longer than a scanner's
	// default buffer; the cpu lines come first and are all we read.
	in := "cpu  1 2 3 4 5 6 7 8 9 10 11\ncpu0 1 2 3 4 5 6 7 8 9 10 11\nintr " +
		strings.Repeat("0 ", 2<<20) + "\n"
	s, err := parseStat(strings.NewReader(in))
	require.NoError(t, err)
	require.Equal(t, CPUTimes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, s.All)
	require.Len(t, s.CPUs, 1)
}

func TestStatSub(t *testing.T) {
	before := Stat{
		All:  CPUTimes{User: 100, System: 50, Idle: 1000, IOWait: 10},
		CPUs: []CPU{{0, CPUTimes{User: 50, Idle: 500}}, {1, CPUTimes{User: 50, Idle: 500}}},
	}
	after := Stat{
		// iowait went backwards, as it can on some kernels: 0, not a wrap.
		All:  CPUTimes{User: 160, System: 70, Idle: 1100, IOWait: 8},
		CPUs: []CPU{{0, CPUTimes{User: 90, Idle: 550}}, {2, CPUTimes{User: 7}}},
	}
	d := after.Sub(before)
	require.Equal(t, CPUTimes{User: 60, System: 20, Idle: 100}, d.All)
	require.Equal(t, []CPU{{0, CPUTimes{User: 40, Idle: 50}}}, d.CPUs)
	require.Equal(t, uint64(80), d.All.Busy())
	require.Equal(t, uint64(180), d.All.Total())
}
