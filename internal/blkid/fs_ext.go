package blkid

// The ext family shares one superblock at 1 KiB (magic 0xEF53 at byte
// 0x38 of it) and libblkid tells ext4dev, ext4, ext3, ext2 and an external
// journal (jbd) apart by feature flags, trying them in that order: the
// layout is the kernel's fs/ext4/ext4.h, the rules libblkid's ext.c.

const extMagicOff = 1024 + 0x38

// Feature sets libblkid holds ext2 and ext3 to.
const (
	extCompatHasJournal    = 0x0004
	extIncompatJournalDev  = 0x0008
	extFlagsTestFS         = 0x0004
	ext2ROCompatSupported  = 0x1 | 0x2 | 0x4
	ext2IncompatSupported  = 0x2 | 0x10
	ext3ROCompatSupported  = ext2ROCompatSupported
	ext3IncompatSupported  = 0x2 | 0x4 | 0x10
	extMaxLogBlockSize     = 6 // 64 KiB blocks
	extMaxRevisionAccepted = 1
)

// extType names the ext superblock at sbOff on d as libblkid would, or ""
// when there is none. A superblock libblkid would refuse for its feature
// mix is still named (ext2): it is somebody's filesystem all the same.
func extType(d *Dev, sbOff int64) string {
	sb := d.At(sbOff, 0x200)
	if sb == nil || sb[0x38] != 0x53 || sb[0x39] != 0xEF {
		return ""
	}
	le32 := func(o int) uint32 {
		return uint32(sb[o]) | uint32(sb[o+1])<<8 | uint32(sb[o+2])<<16 | uint32(sb[o+3])<<24
	}
	// Two fields random bytes rarely get right after a two-byte magic.
	if le32(24) > extMaxLogBlockSize || le32(76) > extMaxRevisionAccepted {
		return ""
	}
	compat, incompat, rocompat, flags := le32(0x5C), le32(0x60), le32(0x64), le32(0x160)
	switch {
	case incompat&extIncompatJournalDev != 0:
		return "jbd"
	case flags&extFlagsTestFS != 0:
		return "ext4dev"
	case rocompat&^ext3ROCompatSupported != 0 || incompat&^ext3IncompatSupported != 0:
		return "ext4"
	case compat&extCompatHasJournal != 0:
		return "ext3"
	}
	return "ext2"
}

// extKinds are the ext family's types, in libblkid's order.
var extKinds = []struct {
	typ   string
	usage Usage
	what  string
}{
	{"ext4dev", Filesystem, "an ext4dev (test) filesystem"},
	{"ext4", Filesystem, "an ext4 filesystem"},
	{"ext3", Filesystem, "an ext3 filesystem"},
	{"ext2", Filesystem, "an ext2 filesystem"},
	{"jbd", Other, "an ext3/ext4 external journal (jbd)"},
}

func extProbes() []Probe {
	var ps []Probe
	for _, k := range extKinds {
		p := Probe{Type: k.typ, Usage: k.usage}
		what := k.what
		p.Find = func(d *Dev) []Signature {
			if extType(d, 1024) == p.Type {
				return found(p, what, extMagicOff)
			}
			return nil
		}
		ps = append(ps, p)
	}
	return ps
}
