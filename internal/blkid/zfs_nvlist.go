package blkid

// A ZFS label's configuration is an nvlist in XDR encoding (OpenZFS's
// module/nvpair/nvpair.c, nvs_xdr): a 4-byte header (encoding 1 = XDR,
// the writer's byte order, two reserved bytes), the list's version and
// flags, then pairs, each its encoded size, its decoded size, its name as
// an XDR string (length, bytes padded to 4), its data type, its element
// count and its value, big-endian; a pair of size 0 ends a list. An
// embedded list (type NVLIST) follows its pair's header and ends with its
// own terminator.
//
// libblkid (zfs.c, since 2.41) believes a label whose top-level list has
// a non-zero guid, a state and a transaction group or a spare/cache
// state. Eager here: two of the pool's top-level identities (version,
// name, state, txg, pool_guid, guid) with their proper types are enough.

const (
	zfsNvlistOffset = 16 << 10
	zfsNvlistSize   = 112 << 10

	nvTypeUint64 = 8
	nvTypeString = 9
	nvTypeNvlist = 19
)

// zfsLabelNvlist says whether the label configuration at off looks like
// ZFS's.
func zfsLabelNvlist(d *Dev, off int64) bool {
	// The header first: most devices have none, and the whole list is
	// 112 KiB to copy.
	if h := d.At(off, 16); h == nil || h[0] != 1 || h[1] > 1 || be32(h[12:]) == 0 {
		return false
	}
	p := d.At(off, zfsNvlistSize)
	if p == nil {
		return false
	}
	want := map[string]uint32{"version": nvTypeUint64, "name": nvTypeString, "state": nvTypeUint64,
		"txg": nvTypeUint64, "pool_guid": nvTypeUint64, "guid": nvTypeUint64}
	seen := map[string]bool{}
	depth := 0
	for pos := 12; pos+12 <= len(p); {
		size := int(be32(p[pos:]))
		if size == 0 {
			if depth == 0 {
				break
			}
			depth--
			pos += 8 // the embedded list's terminator: encoded and decoded size 0
			continue
		}
		nameLen := int(be32(p[pos+8:]))
		nameSize := (nameLen + 3) &^ 3
		hdr := 12 + nameSize
		if nameLen < 0 || nameSize < nameLen || pos+hdr+8 > len(p) || size < hdr+8 && be32(p[pos+hdr:]) != nvTypeNvlist {
			break
		}
		name := string(p[pos+12 : pos+12+nameLen])
		typ := be32(p[pos+hdr:])
		if typ == nvTypeNvlist {
			depth++
			pos += hdr + 16 // type, element count, the embedded list's version and flags
			continue
		}
		if t, ok := want[name]; ok && depth == 0 && t == typ {
			seen[name] = true
		}
		if size > len(p)-pos {
			break
		}
		pos += size
	}
	return len(seen) >= 2
}
