package target

import (
	"fmt"
	"strconv"
	"strings"
)

// markerXattr names the extended attribute that marks a file as ioprobe's:
// created and completely filled by ioprobe, so later runs may write to it
// without --allow-destructive and reuse it without refilling.
const markerXattr = "user.ioprobe"

// markerPrefix versions the marker's format.
const markerPrefix = "ioprobe.target/v1"

// formatMarker is the marker for a file ioprobe filled to size bytes.
func formatMarker(size int64) string { return fmt.Sprintf("%s size=%d", markerPrefix, size) }

// parseMarker returns the size recorded in a marker. ioprobe never changes
// the size of a file it filled, so a file whose size differs from its
// marker's has been rewritten by something else (cp onto it keeps the
// xattr) and is no longer ioprobe's.
func parseMarker(b []byte) (int64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimRight(string(b), "\x00\n"), markerPrefix+" size=")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
