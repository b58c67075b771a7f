package blkid

import (
	"bytes"
	"fmt"
)

// An LVM2 physical volume's label (sector 1, "LABELONE") only points at its
// metadata area; the metadata itself, the volume group's text description,
// lies in that area, which pvcreate starts at 4096: an mda_header (its
// magic " LVM2 x[5A%r0N*>" 4 bytes in, version 1, its own start, the
// area's size, and where the current text lies) and, 512 bytes on, the
// text ("vgname {\nid = \"...\""). With the label zeroed, `pvck --dump
// metadata_search` still finds the text and `pvck --repair` rewrites the
// label from it. Layout: lvm2's lib/format_text/layout.h (struct
// mda_header, struct raw_locn, FMTT_MAGIC) and lib/format_text/format-text.c.

const (
	lvmMDAStart = 4096
	lvmMDAMagic = " LVM2 x[5A%r0N*>"
)

func lvm2Backup() Backup {
	return Backup{
		Name:  "LVM2",
		Types: []string{"LVM2_member"},
		Tool:  "pvck --dump metadata_search",
		Find:  findLVM2Metadata,
	}
}

func findLVM2Metadata(d *Dev) []Signature {
	what := func(detail string) string {
		return "an LVM2 physical volume whose label is gone (its metadata area at 4096 " + detail + "; pvck --dump metadata_search finds it)"
	}
	if d.Has(lvmMDAStart+4, lvmMDAMagic) && d.U32LE(lvmMDAStart+20) == 1 && d.U64LE(lvmMDAStart+24) == lvmMDAStart {
		detail := "holds no volume group"
		// raw_locns[0]: the current text's offset (from the area's start) and size.
		if rel, n := d.U64LE(lvmMDAStart+40), d.U64LE(lvmMDAStart+48); rel != 0 && n != 0 && rel < uint64(d.Size) {
			if vg := lvmVGName(d, lvmMDAStart+int64(rel)); vg != "" {
				detail = fmt.Sprintf("describes volume group %q", vg)
			}
		}
		return backupSig("LVM2_member", Raid, lvmMDAStart+4, what(detail))
	}
	// The header gone too: the text where pvcreate's first one goes.
	if vg := lvmVGName(d, lvmMDAStart+512); vg != "" {
		return backupSig("LVM2_member", Raid, lvmMDAStart+512, what(fmt.Sprintf("describes volume group %q", vg)))
	}
	return nil
}

// lvmVGName reads the name of the volume group whose text description
// starts at off ("name {\nid = \""), or "" when none does.
func lvmVGName(d *Dev, off int64) string {
	p := d.At(off, 160)
	if p == nil {
		return ""
	}
	i := bytes.Index(p, []byte(" {\nid = \""))
	if i < 1 || i > 127 {
		return ""
	}
	for _, c := range p[:i] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '_' || c == '.' || c == '-') {
			return ""
		}
	}
	return string(p[:i])
}
