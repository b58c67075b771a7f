package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// signalGrace is how long a command has, once SIGINT or SIGTERM came, to
// end on its own: a run stops its workers, takes its last look (0.5 s at
// most when interrupted) and prints its partial result in well under a
// second. Past it, the backstop ends the process, so that a signal ends
// ioprobe within two seconds whatever it waits for.
const signalGrace = 1500 * time.Millisecond

// backstop waits for ctx (the signal) and then for done (the command
// ended); if done has not come signalGrace later, or a second signal
// comes first, it says what was still awaited and calls exit.
func backstop(ctx context.Context, done <-chan struct{}, stderr io.Writer, exit func()) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	t := time.NewTimer(signalGrace)
	defer t.Stop()
	how := fmt.Sprintf("still running %s after the signal", signalGrace)
	select {
	case <-done:
		return
	case <-again:
		how = "a second signal"
	case <-t.C:
	}
	fmt.Fprintf(stderr, "ioprobe: interrupted: exiting on %s without waiting for %s\n", how, awaited())
	exit()
}

// awaited names what the process may still be waiting for: the calls to
// the host's filesystems that have not answered, else its own I/O.
func awaited() string {
	pending := hostfs.Shared().Pending()
	if len(pending) == 0 {
		return "its own I/O to finish (the kernel has not completed it)"
	}
	var names []string
	for i, p := range pending {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(pending)-i))
			break
		}
		names = append(names, fmt.Sprintf("%s (no answer for %s)", p.What, p.For.Round(time.Second)))
	}
	return strings.Join(names, ", ")
}
