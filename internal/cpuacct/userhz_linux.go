package cpuacct

import "golang.org/x/sys/unix"

// atClkTck is AT_CLKTCK: the kernel passes USER_HZ in the auxiliary
// vector, which is where glibc's sysconf(_SC_CLK_TCK) reads it.
const atClkTck = 17

func userHZ() uint64 {
	if hz, ok := auxvClkTck(); ok {
		return hz
	}
	return defaultUserHZ
}

func auxvClkTck() (uint64, bool) {
	auxv, err := unix.Auxv()
	if err != nil {
		return 0, false
	}
	for _, kv := range auxv {
		if kv[0] == atClkTck && kv[1] > 0 {
			return uint64(kv[1]), true
		}
	}
	return 0, false
}
