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

// env and fileState hold nothing where targets are unsupported.
type (
	env       struct{}
	fileState struct{}
)

// Recheck does nothing: no Target can be opened on this system.
func (t *Target) Recheck() error { return nil }

// CheckSignatures does nothing: no Target can be opened on this system.
func (t *Target) CheckSignatures(c *ReadCount) error { return nil }

// CreatedFile is a file ioprobe created; none can be, on this system.
type CreatedFile struct{ Path string }

// KeepCreated reports that targets are unsupported on this platform.
func (t *Target) KeepCreated() (*CreatedFile, error) { return nil, ErrUnsupported }

// Same reports false: no file was created.
func (c *CreatedFile) Same(o *CreatedFile) bool { return false }

// Remove does nothing.
func (c *CreatedFile) Remove() error { return nil }

// Close does nothing.
func (c *CreatedFile) Close() {}

// RemoveIfSame reports that targets are unsupported on this platform.
func RemoveIfSame(dirfd int, name string, fd int) error { return ErrUnsupported }
