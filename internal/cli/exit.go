package cli

import (
	"errors"
	"fmt"

	"github.com/ioprobe/ioprobe/internal/safefile"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Exit codes, documented in docs/output.md.
const (
	ExitOK       = 0
	ExitIOErrors = 1 // the run happened but I/O failed
	ExitBadInput = 2 // bad flags, sizes, targets, refusals: nothing was touched
	// ExitCheckFailed: `ioprobe check` measured the storage without error
	// and it fails the check's threshold.
	ExitCheckFailed = 3
	// Any other error (the storage failing while a new file is prepared,
	// say) is ExitIOErrors.
	ExitInterrupted = 130 // SIGINT/SIGTERM: a partial result was printed
)

// usageError is bad input found by the CLI itself.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitError carries an exit code for an error that has already been
// reported (or needs no further message).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitCode maps an error to the process exit status.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue *usageError
	var fe *workload.FieldError
	if errors.As(err, &ue) || errors.As(err, &fe) || target.IsBadInput(err) || safefile.IsBadInput(err) {
		return ExitBadInput
	}
	return ExitIOErrors
}
