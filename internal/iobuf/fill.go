package iobuf

// FillRandom fills p with pseudo-random bytes (splitmix64 stream from seed).
func FillRandom(p []byte, seed uint64) {
	x := seed
	i := 0
	for ; i+8 <= len(p); i += 8 {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		p[i], p[i+1], p[i+2], p[i+3] = byte(z), byte(z>>8), byte(z>>16), byte(z>>24)
		p[i+4], p[i+5], p[i+6], p[i+7] = byte(z>>32), byte(z>>40), byte(z>>48), byte(z>>56)
	}
	for ; i < len(p); i++ {
		x += 0x9e3779b97f4a7c15
		p[i] = byte(Mix64(x))
	}
}

// Mix64 is splitmix64's step: a well-mixed 64-bit value from x (seeds for
// offsets and fill patterns).
func Mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
