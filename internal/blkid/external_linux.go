package blkid

import (
	"context"
	"errors"
	"fmt"
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
// (--no-act), blkid -p bypasses its cache. A tool that is not installed is
// skipped, not an error; a tool that fails is an error, so that the caller
// can refuse rather than trust half an answer.
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

// lookTool finds name on PATH or, failing that, in the sbin directories
// where Debian installs util-linux's blkid and wipefs: a user's PATH often
// lacks them, and the second opinion must not quietly go missing then.
func lookTool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p
		}
	}
	return ""
}

func toolError(name string, status int, out []byte) error {
	return fmt.Errorf("%s failed (exit status %d): %s", name, status, strings.TrimSpace(string(out)))
}
