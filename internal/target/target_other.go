//go:build !linux

package target

import "path/filepath"

// Open is supported only on Linux; elsewhere it returns ErrUnsupported.
func Open(path string, opts Options) (*Target, error) {
	return nil, ErrUnsupported
}

// Close does nothing: no Target can be opened on this system.
func (t *Target) Close() error { return nil }

// Check reports that targets are unsupported on this platform.
func Check(path string, opts Options) error { return ErrUnsupported }

// DeviceKey names the storage under path; without sysfs it is the cleaned
// absolute path itself.
func DeviceKey(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", &InputError{Path: path, Msg: "cannot make the path absolute", Err: err}
	}
	return abs, nil
}
