package blkid

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// externalTimeout bounds each tool: a second opinion that hangs (a dying
// disk) must not hang ioprobe.
const externalTimeout = 30 * time.Second

// External asks util-linux's wipefs (every signature, with offsets) and
// blkid's low-level probe (its verdict, including "ambivalent") what they
// find on the block device dev. Neither writes: wipefs lists only
// (--no-act), blkid -p bypasses its cache. Both run from /usr/sbin or
// /sbin only (toolDirs). A tool that is not installed is skipped, not an
// error; a tool that fails is an error, so that the caller can refuse
// rather than trust half an answer.
func External(ctx context.Context, dev string) ([]Signature, error) {
	var all []Signature
	if out, status, err := runTool(ctx, "wipefs", "--no-act", "--json", dev); err != nil {
		return nil, err
	} else if status >= 0 {
		if status != 0 {
			return nil, toolError("wipefs", status, out)
		}
		sigs, err := ParseWipefsJSON(out)
		if err != nil {
			return nil, err
		}
		all = append(all, sigs...)
	}
	if out, status, err := runTool(ctx, "blkid", "-p", "-o", "export", dev); err != nil {
		return nil, err
	} else if status >= 0 {
		sigs, err := ParseBlkidExport(out, status)
		if err != nil {
			return nil, err
		}
		all = append(all, sigs...)
	}
	return Missing(nil, all), nil
}

// runTool runs name with args and returns its standard output and exit
// status; status -1 means the tool is not installed.
func runTool(ctx context.Context, name string, args ...string) ([]byte, int, error) {
	path := lookTool(name)
	if path == "" {
		return nil, -1, nil
	}
	ctx, cancel := context.WithTimeout(ctx, externalTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "BLKID_FILE=/dev/null"}
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out, 0, nil
	case ctx.Err() != nil:
		return nil, 0, errors.New(name + " did not answer within " + externalTimeout.String())
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return append(out, ee.Stderr...), ee.ExitCode(), nil
	default:
		return nil, 0, errors.New("cannot run " + name + ": " + err.Error())
	}
}

// toolDirs are where util-linux's blkid and wipefs are looked for: the
// system's own sbin directories, never the caller's PATH, so that a
// directory a user (or an attacker) put first on PATH cannot answer for
// util-linux and pass a device as blank.
var toolDirs = []string{"/usr/sbin", "/sbin"}

// lookTool finds name in toolDirs: an executable regular file.
func lookTool(name string) string {
	for _, dir := range toolDirs {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func toolError(name string, status int, out []byte) error {
	return fmt.Errorf("%s failed (exit status %d): %s", name, status, strings.TrimSpace(string(out)))
}
