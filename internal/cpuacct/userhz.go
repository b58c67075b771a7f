package cpuacct

import "sync"

// defaultUserHZ is USER_HZ on every current Linux architecture; it is used
// only when the auxiliary vector cannot be read.
const defaultUserHZ = 100

var userHZOnce = sync.OnceValue(userHZ)

// UserHZ is the unit of the /proc/stat counters in ticks per second
// (USER_HZ), read from the AT_CLKTCK entry of the auxiliary vector as
// sysconf(_SC_CLK_TCK) does, without cgo; 100 when that is unavailable.
func UserHZ() uint64 { return userHZOnce() }
