package cli

import (
	"context"
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
	"github.com/ioprobe/ioprobe/internal/version"
)

// globalOptions are shared by every command.
type globalOptions struct {
	stdout, stderr io.Writer
	// stderrTTY says whether stderr is a terminal (progress is shown only then).
	stderrTTY bool
	engines   *engine.Registry
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
		return usagef("%v (see '%s --help')", err, c.CommandPath())
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
// measured.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g := &globalOptions{stdout: stdout, stderr: stderr, stderrTTY: isTerminal(stderr), engines: newEngines()}
	return execute(ctx, g, args)
}

func execute(ctx context.Context, g *globalOptions, args []string) int {
	root := NewRootCommand(g)
	root.SetArgs(args)
	err := unknownCommand(root, root.ExecuteContext(ctx))
	code := exitCode(err)
	if err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintf(g.stderr, "ioprobe: %s\n", firstLine(msg))
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
