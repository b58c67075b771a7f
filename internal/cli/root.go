package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
	"github.com/ioprobe/ioprobe/internal/engine/uring"
	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/internal/version"
)

// globalOptions are shared by every command.
type globalOptions struct {
	// stderr escapes what it carries (textsafe): notes and errors quote
	// hostnames, job names, hosts' answers. rawStderr is stderr as given,
	// for the progress line (whose \r returns to the start of its line;
	// it escapes what it shows) and the daemon's log (logfmt quotes what
	// it carries, and JSON must stay JSON).
	stdout, stderr io.Writer
	rawStderr      io.Writer
	// stderrTTY says whether stderr is a terminal (progress is shown only then).
	stderrTTY bool
	engines   *engine.Registry
	// undo is what the command puts back when it ends, which the
	// backstop puts back before it ends the process (nil in tests that
	// build globalOptions themselves: nothing is registered).
	undo *undoList
}

// terminal is stderr as given (see globalOptions).
func (g *globalOptions) terminal() io.Writer {
	if g.rawStderr != nil {
		return g.rawStderr
	}
	return g.stderr
}

// newEngines is the explicit engine registry, in the order "auto" prefers:
// io_uring where a probe ring works, else blocking pread/pwrite.
func newEngines() *engine.Registry {
	return engine.NewRegistry(uring.New(), syncio.New())
}

// NewRootCommand builds the command tree.
func NewRootCommand(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "ioprobe",
		Short: "Measure what storage really delivers, with direct I/O",
		Long: `ioprobe runs direct-I/O (O_DIRECT) workload patterns - Iometer's access
specifications: transfer size, % read, % random, outstanding I/Os, workers,
ramp-up, run time - and measures IOPS, MB/s, latency distributions and the
CPU each I/O costs.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version.Version,
	}
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%s (see '%s --help')", flagError(err), c.CommandPath())
	})
	root.AddCommand(
		newRunCommand(g),
		newSuiteCommand(g),
		newFleetCommand(g),
		newServeCommand(g),
		newReportCommand(g),
		newCompareCommand(g),
		newProfilesCommand(g),
		newCheckCommand(g),
		newVersionCommand(g),
	)
	return root
}

// Main runs the command line and returns the exit status. SIGINT and
// SIGTERM cancel the context, so a run stops at once and reports what it
// measured; should it not have ended signalGrace later (a thread the
// kernel holds, a machine too loaded to give it the CPU), the process
// ends anyway (backstop), once what the command changed on the machine
// is put back (undoGrace at most).
//
// A process started as hostfs's helper serves it instead (the calls that
// may wait on another filesystem run there, so that none holds up this
// process's end).
func Main(args []string, stdout, stderr io.Writer) int {
	if hostfs.ServeHelper() {
		return ExitOK
	}
	hostfs.UseHelper("/proc/self/exe")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan struct{})
	defer close(done)
	g := &globalOptions{stdout: stdout, stderr: stderr, stderrTTY: isTerminal(stderr), engines: newEngines(), undo: &undoList{}}
	go backstop(ctx, done, stderr, g.undo, func() { os.Exit(ExitInterrupted) })
	return execute(ctx, g, args)
}

func execute(ctx context.Context, g *globalOptions, args []string) int {
	if g.rawStderr == nil {
		g.rawStderr = g.stderr
	}
	g.stderr = textsafe.NewWriter(g.stderr)
	root := NewRootCommand(g)
	root.SetArgs(args)
	err := unknownCommand(root, root.ExecuteContext(ctx))
	code := exitCode(err)
	if err != nil {
		if msg := err.Error(); msg != "" {
			limit := maxMessage
			var se *target.SafetyError
			if errors.As(err, &se) {
				// A refusal is ioprobe's own words about bounded things
				// (paths, types, offsets, pids): every reason and the
				// word on the flag at its end are kept.
				limit = maxRefusal
			}
			fmt.Fprintf(g.stderr, "ioprobe: %s\n", printable(firstLine(msg), limit))
		}
	}
	return code
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// maxMessage bounds a one-line error: a binary file's "line" quoted in a
// parse error can be kilobytes.
const maxMessage = 400

// maxRefusal bounds a refusal's line, which names every reason found.
const maxRefusal = 4000

// printable makes an error line safe for a terminal: control characters
// and bytes that are not UTF-8 (a binary file given as a job file, say)
// are written as Go escapes, never sent raw, and a line longer than
// limit characters is cut with an ellipsis.
func printable(s string, limit int) string { return textsafe.Line(s, limit) }

// flagValueRE matches pflag's error for a value its parser refused; the
// cause is a strconv (or time) error, whose wording is Go's, not ours.
var flagValueRE = regexp.MustCompile(`^invalid argument "((?:[^"\\]|\\.)*)" for "([^"]+)" flag: (.*)$`)

// flagError words pflag's refusal of a flag's value as the rest of the
// command line does: the flag, the value, what is wanted.
func flagError(err error) string {
	m := flagValueRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	value, flag, cause := m[1], m[2], m[3]
	if i := strings.IndexByte(flag, ' '); i >= 0 { // "-s, --size"
		flag = flag[i+1:]
	}
	var want string
	switch {
	case strings.HasPrefix(cause, "strconv.ParseUint"):
		want = "want a whole number, 0 or more"
		if strings.HasPrefix(strings.TrimSpace(value), "-") {
			want = "must not be negative"
		}
	case strings.HasPrefix(cause, "strconv.ParseInt"):
		want = "want a whole number"
	case strings.HasPrefix(cause, "strconv.ParseFloat"):
		want = "want a number"
	case strings.HasPrefix(cause, "strconv.ParseBool"):
		want = "want true or false"
	case strings.HasPrefix(cause, "time: "):
		want = "want a duration such as 500ms, 10s, 2m or 1h30m"
	default:
		want = cause
	}
	if strings.Contains(cause, "value out of range") {
		want = "out of range"
	}
	return fmt.Sprintf("%s %s: %s", flag, strconv.Quote(value), want)
}

// unknownCommandRE matches cobra's error for a subcommand it does not
// know (its suggestions, if any, follow on lines of their own).
var unknownCommandRE = regexp.MustCompile(`^unknown command ("(?:[^"\\]|\\.)*") for "`)

// unknownCommand turns cobra's unknown-subcommand error into bad input
// (exit 2, not the I/O-error code) on one line, with cobra's suggestions.
func unknownCommand(root *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	m := unknownCommandRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	name, qerr := strconv.Unquote(m[1])
	if qerr != nil {
		name = m[1]
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if s := root.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usagef("%s (see '%s --help')", msg, root.CommandPath())
}
