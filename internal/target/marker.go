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

// sectorsFlag, after the size, says that every sector of the file was
// written in --verify's self-describing format (internal/verify), so every
// read of it can be checked.
const sectorsFlag = " sectors=v1"

// formatMarker is the marker for a file ioprobe filled to size bytes;
// formatted says every sector is in the verify format.
func formatMarker(size int64, formatted bool) string {
	m := fmt.Sprintf("%s size=%d", markerPrefix, size)
	if formatted {
		m += sectorsFlag
	}
	return m
}

// parseMarker returns the size recorded in a marker and whether the file
// is formatted. ioprobe never changes the size of a file it filled, so a
// file whose size differs from its marker's has been rewritten by something
// else (cp onto it keeps the xattr) and is no longer ioprobe's.
func parseMarker(b []byte) (size int64, formatted, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimRight(string(b), "\x00\n"), markerPrefix+" size=")
	if !ok {
		return 0, false, false
	}
	rest, formatted = strings.CutSuffix(rest, sectorsFlag)
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n <= 0 {
		return 0, false, false
	}
	return n, formatted, true
}
