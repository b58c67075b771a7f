package target

import (
	"fmt"
	"strconv"
	"strings"
)

// markerXattr names the extended attribute that marks a file as ioprobe's:
// created and completely filled by ioprobe. The marker alone proves
// nothing (cp --preserve=xattr copies it, mkfs on a loop device over the
// file keeps it): a file is ioprobe's only while its content is still
// ioprobe's sectors, stamped under the key of this very file (see
// owner_linux.go).
const markerXattr = "user.ioprobe"

// markerPrefix versions the marker's format. v1 (size only) did not tie a
// file's content to its identity; files marked so are not ioprobe's.
const (
	markerPrefix   = "ioprobe.target/v2"
	markerPrefixV1 = "ioprobe.target/v1"
)

// marker is what a file's xattr records: the bytes ioprobe filled from
// offset 0, and the file it filled, by a random id and the file's identity
// when it was filled (inode number, birth time; 0 where the filesystem
// does not report one). The sectors' key is derived from the id and the
// file's identity as it is now, so the recorded identity only explains a
// refusal ("a copy of another ioprobe file").
type marker struct {
	size  int64
	id    uint64
	ino   uint64
	btime int64 // birth time, nanoseconds since the epoch
}

func (m marker) String() string {
	return fmt.Sprintf("%s size=%d id=%016x ino=%d btime=%d", markerPrefix, m.size, m.id, m.ino, m.btime)
}

// parseMarker reads a marker. v1 says the xattr is an older ioprobe's
// marker (ok false).
func parseMarker(b []byte) (m marker, v1, ok bool) {
	s := strings.TrimRight(string(b), "\x00\n")
	if strings.HasPrefix(s, markerPrefixV1+" ") {
		return marker{}, true, false
	}
	rest, found := strings.CutPrefix(s, markerPrefix+" ")
	if !found {
		return marker{}, false, false
	}
	seen := map[string]bool{}
	for _, f := range strings.Fields(rest) {
		k, v, _ := strings.Cut(f, "=")
		var err error
		switch k {
		case "size":
			m.size, err = strconv.ParseInt(v, 10, 64)
		case "id":
			m.id, err = strconv.ParseUint(v, 16, 64)
		case "ino":
			m.ino, err = strconv.ParseUint(v, 10, 64)
		case "btime":
			m.btime, err = strconv.ParseInt(v, 10, 64)
		default:
			return marker{}, false, false
		}
		if err != nil || seen[k] {
			return marker{}, false, false
		}
		seen[k] = true
	}
	if len(seen) != 4 || m.size <= 0 || m.id == 0 {
		return marker{}, false, false
	}
	return m, false, true
}
