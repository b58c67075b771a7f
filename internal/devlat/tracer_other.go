//go:build !linux

package devlat

// Tracer is not available outside Linux.
type Tracer struct{}

// Open says that device latency needs Linux.
func Open(devs []Device) (*Tracer, error) {
	return nil, unavailable("device latency is measured with eBPF on Linux only")
}

// Record does nothing.
func (t *Tracer) Record(on bool) error { return nil }

// Devices is empty.
func (t *Tracer) Devices() []Device { return nil }

// Read reads nothing.
func (t *Tracer) Read() ([]Reading, error) { return nil, nil }

// Close does nothing.
func (t *Tracer) Close() error { return nil }
