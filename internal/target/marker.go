package target

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// markerXattr names the extended attribute that marks a file as ioprobe's:
// created and completely filled by ioprobe. The marker alone proves
// nothing (cp --preserve=xattr copies it, mkfs on a loop device over the
// file keeps it): a file is ioprobe's only while its content is still
// ioprobe's sectors, stamped under the key of this very file, and nothing
// but ioprobe has changed it since ioprobe last wrote it (see
// owner_linux.go).
const markerXattr = "user.ioprobe"

// markerPrefix versions the marker's format. v1 (size only) did not tie a
// file's content to its identity; files marked so are not ioprobe's. v2
// recorded no state: such a file is ioprobe's only after a scan of every
// sector, and is then marked v3.
const (
	markerPrefix   = "ioprobe.target/v3"
	markerPrefixV2 = "ioprobe.target/v2"
	markerPrefixV1 = "ioprobe.target/v1"
)

// ctimeSlack bounds how much later than the ctime a ready marker records
// the file's ctime may be: writing the marker itself moves the ctime (to
// a moment just after the one recorded, which cannot be known before), so
// a change within this much of ioprobe's own last one is not seen by the
// ctime alone. ioprobe re-marks until its own marking fits.
const ctimeSlack = 20 * time.Millisecond

// marker is what a file's xattr records: the bytes ioprobe filled from
// offset 0, and the file it filled, by a random id and the file's identity
// when it was filled (inode number, birth time; 0 where the filesystem
// does not report one). The sectors' key is derived from the id and the
// file's identity as it is now, so the recorded identity only explains a
// refusal ("a copy of another ioprobe file").
//
// Its state says whether an ioprobe run may be writing the file (busy,
// set before the first write of a fill, an extension or a write run) or
// ioprobe left it (ready), and then how: its size (= size), modification
// and change times to the nanosecond. A ready file whose times or size
// differ was changed by something else since.
type marker struct {
	size  int64
	id    uint64
	ino   uint64
	btime int64 // birth time, nanoseconds since the epoch
	// gen counts the times ioprobe started writing the file (its fill, an
	// extension, each write run).
	gen  uint64
	busy bool
	run  uint64 // busy: the run writing it (a random id)
	// mtime and ctime (ready): the file's times in nanoseconds since the
	// epoch as ioprobe left it; ctime as it was just before this marker
	// was written (which moved it by less than ctimeSlack).
	mtime, ctime int64
	// legacy: a v2 marker (size, id, ino, btime only).
	legacy bool
}

func (m marker) String() string {
	s := fmt.Sprintf("%s size=%d id=%016x ino=%d btime=%d gen=%d", markerPrefix, m.size, m.id, m.ino, m.btime, m.gen)
	if m.busy {
		return s + fmt.Sprintf(" state=busy run=%016x", m.run)
	}
	return s + fmt.Sprintf(" state=ready mtime=%d ctime=%d", m.mtime, m.ctime)
}

// parseMarker reads a marker. v1 says the xattr is an older ioprobe's
// marker (ok false); a v2 marker is returned with legacy set.
func parseMarker(b []byte) (m marker, v1, ok bool) {
	s := strings.TrimRight(string(b), "\x00\n")
	if strings.HasPrefix(s, markerPrefixV1+" ") {
		return marker{}, true, false
	}
	rest, found := strings.CutPrefix(s, markerPrefix+" ")
	if !found {
		if rest, found = strings.CutPrefix(s, markerPrefixV2+" "); !found {
			return marker{}, false, false
		}
		m.legacy = true
	}
	seen := map[string]bool{}
	state := ""
	for _, f := range strings.Fields(rest) {
		k, v, _ := strings.Cut(f, "=")
		var err error
		switch {
		case k == "size":
			m.size, err = strconv.ParseInt(v, 10, 64)
		case k == "id":
			m.id, err = strconv.ParseUint(v, 16, 64)
		case k == "ino":
			m.ino, err = strconv.ParseUint(v, 10, 64)
		case k == "btime":
			m.btime, err = strconv.ParseInt(v, 10, 64)
		case k == "gen" && !m.legacy:
			m.gen, err = strconv.ParseUint(v, 10, 64)
		case k == "state" && !m.legacy:
			state = v
		case k == "run" && !m.legacy:
			m.run, err = strconv.ParseUint(v, 16, 64)
		case k == "mtime" && !m.legacy:
			m.mtime, err = strconv.ParseInt(v, 10, 64)
		case k == "ctime" && !m.legacy:
			m.ctime, err = strconv.ParseInt(v, 10, 64)
		default:
			return marker{}, false, false
		}
		if err != nil || seen[k] {
			return marker{}, false, false
		}
		seen[k] = true
	}
	want := 4
	switch {
	case m.legacy:
	case state == "busy" && seen["run"] && !seen["mtime"] && !seen["ctime"]:
		m.busy, want = true, 7
	case state == "ready" && !seen["run"] && seen["mtime"] && seen["ctime"]:
		want = 8
	default:
		return marker{}, false, false
	}
	if len(seen) != want || m.size < 0 || m.id == 0 || !seen["size"] || !seen["id"] || !seen["ino"] || !seen["btime"] {
		return marker{}, false, false
	}
	if m.size == 0 && !m.busy {
		return marker{}, false, false // only a fill that has not written yet has filled nothing
	}
	return m, false, true
}
