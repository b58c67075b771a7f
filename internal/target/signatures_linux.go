package target

// scanDevice looks for signatures on the device open as O_DIRECT fd,
// reading only what the probes ask for, in aligned chunks.
func scanDevice(fd int, size, lbs int64) ([]Signature, error) {
	return scanSignatures(size, lbs, func(off int64, n int) ([]byte, error) { return readDirect(fd, off, n) })
}
