package safefile

import (
	"fmt"
	"os"
	"path/filepath"
)

// InUse is a file the command reads or measures: a target, an input
// document, a job file or a file it includes. --out must not name it:
// the output, renamed over it, would replace what was measured (a read
// run on a database's file with --out naming that file) or the only
// copy of a result (report a.json --out a.json, a typo for b.json).
type InUse struct {
	What string // "a target of the run", "an input of the report"
	Path string
}

// refuseInUse refuses --out path, which is real (its directory resolved),
// when it is one of uses: the same file, or for a file not made yet
// (a target the run creates), the same name.
func refuseInUse(path, real string, uses []InUse) error {
	outSt, outErr := os.Lstat(real)
	for _, u := range uses {
		same := false
		if outErr == nil {
			if st, err := os.Stat(u.Path); err == nil && os.SameFile(outSt, st) {
				same = true
			}
		}
		if same || samePath(real, u.Path) {
			return &Error{What: "--out", Path: path, Msg: fmt.Sprintf("is %s (%s): writing the output there would replace it; name another file", u.What, u.Path)}
		}
	}
	return nil
}

// samePath says whether p names real once its directory is resolved.
func samePath(real, p string) bool {
	abs, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return false
	}
	return filepath.Join(dir, filepath.Base(abs)) == real
}
