package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ioprobe/ioprobe/internal/version"
)

func newVersionCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, revision and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(g.stdout, "ioprobe %s (revision %s, %s)\n", version.Version, version.Revision(), version.GoVersion())
			return err
		},
	}
}
