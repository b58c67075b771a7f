package fiojob

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, text string, o Options) ([]Point, error) {
	t.Helper()
	return Parse("job.fio", []byte(text), o)
}

// stat is a host where /dev/big is a 1 GiB device, /data/f a 10000-byte
// file and /data/g a 64 MiB file; nothing else exists.
func stat(path string) (FileInfo, error) {
	switch path {
	case "/dev/big":
		return FileInfo{Exists: true, Size: 1 << 30}, nil
	case "/data/f":
		return FileInfo{Exists: true, Regular: true, Size: 10000}, nil
	case "/data/g":
		return FileInfo{Exists: true, Regular: true, Size: 64 << 20}, nil
	}
	return FileInfo{}, nil
}

// one parses text on stat's host, which must give one point of one job.
func one(t *testing.T, text string) Job {
	t.Helper()
	pts, err := Parse("job.fio", []byte(text), Options{Stat: stat})
	require.NoError(t, err, text)
	require.Len(t, pts, 1)
	return pts[0].Jobs[0]
}

// refused parses text on stat's host, which must refuse it with an
// *Error (naming its line), and gives the message.
func refused(t *testing.T, text string) string {
	t.Helper()
	_, err := Parse("job.fio", []byte(text), Options{Stat: stat})
	require.Error(t, err, text)
	var fe *Error
	require.ErrorAs(t, err, &fe)
	return err.Error()
}
