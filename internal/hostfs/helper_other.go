//go:build !linux

package hostfs

// ServeHelper: there is no helper outside Linux.
func ServeHelper() bool { return false }

// UseHelper does nothing outside Linux, where nothing asks the kernel
// about loop devices.
func UseHelper(string) {}
