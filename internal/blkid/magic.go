package blkid

// Magic is one place a type's magic may lie, in libblkid's terms: KBOff
// kibibytes plus SBOff bytes from the start of the device (a negative KBOff
// counts kibibytes back from the end).
type Magic struct {
	Magic string
	KBOff int64
	SBOff int64
}

// offset is where m lies on d.
func (m Magic) offset(d *Dev) int64 {
	if m.KBOff < 0 {
		return d.Size + m.KBOff<<10 + m.SBOff
	}
	return m.KBOff<<10 + m.SBOff
}

// MagicProbe is the probe of a type recognised by a magic at one of a few
// places: every place where a magic matches and check (nil: none) accepts
// is a signature. check gets the offset of the magic found.
func MagicProbe(typ string, usage Usage, what string, magics []Magic, check func(d *Dev, off int64) bool) Probe {
	return Probe{Type: typ, Usage: usage, Find: func(d *Dev) []Signature {
		var found []Signature
		seen := map[int64]bool{}
		for _, m := range magics {
			off := m.offset(d)
			if seen[off] || !d.Has(off, m.Magic) || (check != nil && !check(d, off)) {
				continue
			}
			seen[off] = true
			found = append(found, Signature{Type: typ, Usage: usage, Offset: off, What: what})
		}
		return found
	}}
}
