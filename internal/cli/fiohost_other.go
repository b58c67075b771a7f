//go:build !linux

package cli

import (
	"errors"
	"io/fs"
	"os"
	"strconv"

	"github.com/ioprobe/ioprobe/pkg/fiojob"
)

// fioStat reports regular files only: targets are Linux-only.
func fioStat(path string) (fiojob.FileInfo, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fiojob.FileInfo{}, nil
	}
	if err != nil {
		return fiojob.FileInfo{}, err
	}
	return fiojob.FileInfo{Exists: true, Regular: st.Mode().IsRegular(), Size: st.Size()}, nil
}

func fioKeywords() map[string]string {
	return map[string]string{"$pagesize": strconv.Itoa(os.Getpagesize())}
}
