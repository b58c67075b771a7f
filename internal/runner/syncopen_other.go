//go:build !linux

package runner

import "errors"

func reopen(fd int, mode string, buffered bool) (int, error) {
	return -1, errors.New("--sync and --buffered are supported only on Linux")
}

func readOnlyReopen(fd int) (int, error) {
	return -1, errors.New("--buffered is supported only on Linux")
}

func closeFD(int) {}

func fsyncFD(int) error { return errors.ErrUnsupported }
