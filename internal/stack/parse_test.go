package stack

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDMUUIDPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"LVM-Qm1ZGbn2ZbmXrjGA2dU1WcYgaTG6JKW6Yk3HcbKd1ERUqgYAFfkh4FHM9YtIJ8XM": "LVM",
		"CRYPT-LUKS2-4d3f1a7e0a7a4f2d9c1b8e6f5a4b3c2d-luks-4d3f":               "CRYPT-LUKS2",
		"mpath-3600508b400105e210000900000490000":                              "mpath",
		"part1-mpath-3600508b400105e210000900000490000":                        "part1",
		"":                     "",
		"plain":                "plain",
		"\x1b[31mEVIL-payload": "[31mEVIL", // no control characters
	} {
		require.Equal(t, want, DMUUIDPrefix(in), "%q", in)
	}
}

func TestParseVPD80(t *testing.T) {
	page := append([]byte{0x00, 0x80, 0x00, 0x14}, []byte("  S3Z8NB0K123456A    ")...)
	require.Equal(t, "S3Z8NB0K123456A", ParseVPD80(page))
	require.Equal(t, "", ParseVPD80([]byte{0x00, 0x83, 0x00, 0x04, 'a', 'b', 'c', 'd'}), "another page")
	require.Equal(t, "", ParseVPD80([]byte{0x00, 0x80}), "too short")
	require.Equal(t, "ab", ParseVPD80([]byte{0x00, 0x80, 0x00, 0xff, 'a', 'b'}), "a length past the end is cut")
}

// The hash is SHA-256 of the serial without the white space around it;
// no serial, no hash.
func TestHashSerial(t *testing.T) {
	want := fmt.Sprintf("%x", sha256.Sum256([]byte("WD-WCC4N1234567")))
	require.Equal(t, want, HashSerial("  WD-WCC4N1234567\n"))
	require.Equal(t, "", HashSerial(" \n"))
	require.NotContains(t, HashSerial("WD-WCC4N1234567"), "WCC4N")
}

// What a device says of itself is kept printable, its padding made one
// space, and cut to the bound on a character boundary.
func TestClean(t *testing.T) {
	require.Equal(t, "ATA Samsung SSD 860", Clean("ATA     Samsung SSD 860 \n", 64))
	require.Equal(t, "ab", Clean("a\x00\x1b\x7fb", 64))
	require.Equal(t, "ééé", Clean("éééé", 7), "cut before a character that would cross the bound")
	long := strings.Repeat("x", 1000)
	require.Len(t, Clean(long, 128), 128)
}
