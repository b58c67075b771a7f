package report

import (
	"fmt"
	"math"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// sizeWarning says a result.SizeMismatch of s in words: what the device
// saw, what ioprobe issued, and why it may differ. When others used the
// device in the window (s.HostOthers) the first reason is theirs: their
// requests, and theirs merged, are in the kernel's counts too.
func sizeWarning(m result.SizeMismatch, s *result.Summary) string {
	dir := "read"
	if m.Op == result.OpWrite {
		dir = "write"
	}
	var why string
	o := s.HostOthers
	switch {
	case o != nil && o.DeviceOps != nil && *o.DeviceOps > 0:
		why = fmt.Sprintf("someone else's I/O (other processes did %s I/Os, %s, on the device in the window)", count(*o.DeviceOps), iec(int64(min(*o.DeviceBytes, 1<<62))))
		if m.Merged > 0 {
			why += fmt.Sprintf("; the block layer merged %s I/Os, theirs or ioprobe's", count(m.Merged))
		}
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
	switch {
	case v < 1024 && v == math.Trunc(v):
		return fmt.Sprintf("%.0f B", v)
	case v < 1024:
		return fmt.Sprintf("%.1f B", v)
	}
	return iecUnits(math.Round(v))
}
