package report

import (
	"fmt"
	"math"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// sizeWarning says a result.SizeMismatch in words: what the device saw,
// what ioprobe issued, and why it may differ.
func sizeWarning(m result.SizeMismatch) string {
	dir := "read"
	if m.Op == result.OpWrite {
		dir = "write"
	}
	var why string
	switch {
	case m.Merged > 0:
		why = fmt.Sprintf("the block layer merged %s of them", count(m.Merged))
	case m.Larger:
		why = "merged where this device does not count it, or someone else's I/O"
	default:
		why = "split by the block layer (max_sectors_kb), or someone else's I/O"
	}
	return fmt.Sprintf("the device saw %ss of %s on average, ioprobe issued %s: %s", dir, iecf(m.Device), iecf(m.Ours), why)
}

// iecf is iec for a mean size: exact units when whole ("4 KiB"), else
// rounded to the byte ("44.61 KiB").
func iecf(v float64) string {
	if v == math.Trunc(v) {
		return iec(int64(v))
	}
	if v < 1024 {
		return fmt.Sprintf("%.1f B", v)
	}
	return iec(int64(math.Round(v)))
}
