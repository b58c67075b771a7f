//go:build !linux

package check

import (
	"context"
	"errors"
	"fmt"
)

// runEtcd needs Linux: fallocate, fdatasync and the kernel's counters.
func runEtcd(context.Context, Options) (*Report, error) {
	return nil, fmt.Errorf("check etcd runs on Linux only: %w", errors.ErrUnsupported)
}
