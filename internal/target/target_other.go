//go:build !linux

package target

// Open is supported only on Linux; elsewhere it returns ErrUnsupported.
func Open(path string, opts Options) (*Target, error) {
	return nil, ErrUnsupported
}

// Close does nothing: no Target can be opened on this system.
func (t *Target) Close() error { return nil }

// Check reports that targets are unsupported on this platform.
func Check(path string, opts Options) error { return ErrUnsupported }
