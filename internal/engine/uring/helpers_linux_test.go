package uring

import (
	"testing"
)

func requireUring(t *testing.T) {
	t.Helper()
	if err := New().Available(); err != nil {
		t.Skipf("io_uring unavailable: %v", err) //hygiene:skip the kernel's io_uring, not something make test installs
	}
}
