package blkid

// filesystemProbes are the probes of every type blkid reports with
// USAGE=filesystem.
func filesystemProbes() []Probe {
	var ps []Probe
	return ps
}
