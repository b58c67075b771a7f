//go:build !linux

package stack

import (
	"context"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// Describe: the storage stack is read from Linux's sysfs and /proc; here
// there is none, and the description says so.
func Describe(_ context.Context, _ *hostfs.Host, _ string) Description {
	return Description{Unseen: []string{"the storage stack is read from Linux's sysfs: not on this system"}}
}

// DescribeDevice: see Describe.
func DescribeDevice(ctx context.Context, h *hostfs.Host, _ string) Description {
	return Describe(ctx, h, "")
}

// DescribeDevices: see Describe.
func DescribeDevices(ctx context.Context, h *hostfs.Host, path string) Description {
	return Describe(ctx, h, path)
}
