package stack

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxText bounds a string a device reports about itself (model, vendor,
// firmware): a USB bridge or a faulty device may say anything.
const maxText = 128

// Clean makes text a device reported fit to record: printable characters
// only, runs of spaces made one (SCSI pads its fields with spaces), at
// most max bytes, cut on a character boundary.
func Clean(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == utf8.RuneError, !unicode.IsPrint(r) && r != ' ':
			continue
		case unicode.IsSpace(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// DMUUIDPrefix is what a dm device's uuid says made it, without the part
// that identifies the volume: "LVM-<vg><lv>" is "LVM", "CRYPT-LUKS2-<uuid>-
// <name>" is "CRYPT-LUKS2", "mpath-<wwid>" is "mpath", "part1-mpath-…" is
// "part1"; "" for a device without a uuid.
func DMUUIDPrefix(uuid string) string {
	uuid = strings.TrimSpace(uuid)
	if uuid == "" {
		return ""
	}
	f := strings.SplitN(uuid, "-", 3)
	if len(f) == 1 {
		return Clean(f[0], 32)
	}
	if f[0] == "CRYPT" && len(f) > 1 {
		return Clean(f[0]+"-"+f[1], 32)
	}
	return Clean(f[0], 32)
}

// ParseVPD80 is the serial number of a SCSI VPD page 0x80 (Unit Serial
// Number): a 4-byte header (the page code 0x80 in byte 1, the length in
// bytes 2 and 3) and the serial, padded with spaces. "" when b is not
// such a page.
func ParseVPD80(b []byte) string {
	if len(b) < 4 || b[1] != 0x80 {
		return ""
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if n > len(b)-4 {
		n = len(b) - 4
	}
	return strings.TrimSpace(strings.Trim(string(b[4:4+n]), "\x00"))
}

// HashSerial is the SHA-256 (hex) of a serial number, white space around
// it trimmed; "" for an empty serial. The serial itself is never kept.
func HashSerial(serial string) string {
	serial = strings.TrimSpace(strings.Trim(serial, "\x00"))
	if serial == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(serial))
	return hex.EncodeToString(sum[:])
}
