package target

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// target reads mountinfo through hostfs (whose tests hold the parser's):
// its names reach the same table.
func TestParseMountInfo(t *testing.T) {
	f, err := os.Open("../hostfs/testdata/mountinfo")
	require.NoError(t, err)
	defer f.Close()
	got, err := parseMountInfo(f)
	require.NoError(t, err)
	require.Len(t, got, 6)
	require.Equal(t, 41, got[5].ID)
	require.EqualValues(t, 259, got[5].Major)
	require.EqualValues(t, 1, got[5].Minor)
	require.Equal(t, "/mnt/tab\tand\\back", got[5].MountPoint)
	_, err = parseMountInfo(strings.NewReader("27 1 254-0 / / rw - ext4 /dev/vda rw\n"))
	require.ErrorContains(t, err, `mountinfo line 1: bad major:minor "254-0"`)
	ms, err := readMounts("/proc/self/mountinfo")
	require.NoError(t, err)
	require.NotEmpty(t, ms)
}

func TestParseSwaps(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"none", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n", nil},
		{"two", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0                              partition\t8388604\t\t0\t\t100\n/swap\\040file                             file\t\t1048572\t\t0\t\t-2\n",
			[]string{"/dev/zram0", "/swap file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSwaps(strings.NewReader(tc.text))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
