//go:build unix

package engine

// Stamp writes the offset and a sequence number over the first 16 bytes of
// a write buffer, so that no two written blocks are identical (storage that
// deduplicates would otherwise serve the same block for free).
func Stamp(buf []byte, offset int64, seq uint64) {
	if len(buf) < 16 {
		return
	}
	o, s := uint64(offset), seq
	buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], buf[6], buf[7] = byte(o), byte(o>>8), byte(o>>16), byte(o>>24), byte(o>>32), byte(o>>40), byte(o>>48), byte(o>>56)
	buf[8], buf[9], buf[10], buf[11], buf[12], buf[13], buf[14], buf[15] = byte(s), byte(s>>8), byte(s>>16), byte(s>>24), byte(s>>32), byte(s>>40), byte(s>>48), byte(s>>56)
}
