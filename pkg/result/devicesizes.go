package result

import "math"

// SizeTolerance is how far (relatively) the mean request size the kernel
// counted may stray from the mean transfer size ioprobe issued, and how
// large a share of ioprobe's I/Os it may merge, before DeviceSizes says
// so: a few I/Os of someone else's, or a handful of random I/Os that
// happened to be contiguous, stay under it.
const SizeTolerance = 0.01

// SizeMismatch is one direction in which the device saw requests of
// another mean size than the I/Os ioprobe issued.
type SizeMismatch struct {
	Op            Op      // OpRead or OpWrite
	Device, Ours  float64 // mean request size at the device, mean transfer size issued (bytes)
	Merged        uint64  // I/Os the block layer merged into others
	Larger, Split bool    // the device's requests were larger / smaller on average
}

// DeviceSizes says, per direction, when the device saw requests of another
// mean size than the I/Os ioprobe issued: the block layer merged them
// (submitted together, or queued behind a busy device), split them
// (larger than the device takes in one request), or someone else used the
// device. A "4 KiB sequential IOPS" figure means 4 KiB requests at the
// device only when it says nothing.
func (s *Summary) DeviceSizes() []SizeMismatch {
	d := s.Device
	if d == nil {
		return nil
	}
	var out []SizeMismatch
	check := func(op Op, ops, bytes, devOps, devBytes, merges uint64) {
		if ops == 0 || devOps == 0 {
			return
		}
		ours := float64(bytes) / float64(ops)
		theirs := float64(devBytes) / float64(devOps)
		if math.Abs(theirs/ours-1) <= SizeTolerance && float64(merges) <= SizeTolerance*float64(ops) {
			return
		}
		out = append(out, SizeMismatch{Op: op, Device: theirs, Ours: ours, Merged: merges, Larger: theirs > ours, Split: theirs < ours})
	}
	check(OpRead, s.ReadOps, s.ReadBytes, d.ReadOps, d.ReadBytes, d.ReadMerges)
	check(OpWrite, s.WriteOps, s.WriteBytes, d.WriteOps, d.WriteBytes, d.WriteMerges)
	return out
}
