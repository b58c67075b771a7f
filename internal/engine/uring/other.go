//go:build !linux

package uring

import (
	"errors"

	"github.com/ioprobe/ioprobe/internal/engine"
)

var errNotLinux = errors.New("io_uring exists only on Linux")

func probe() (string, error) { return "", errNotLinux }

// Run implements engine.Engine; io_uring exists only on Linux.
func (*Engine) Run(*engine.Worker) error { return errNotLinux }

func suits(int) error { return nil }
