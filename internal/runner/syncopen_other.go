//go:build !linux

package runner

import "errors"

func syncOpen(fd int, mode string) (int, error) {
	return -1, errors.New("--sync is supported only on Linux")
}

func closeFD(int) {}
