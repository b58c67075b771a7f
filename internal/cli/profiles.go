package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

func newProfilesCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "profiles",
		Short: "List the workload profiles (presets from the reference reports)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runProfiles(g)
		},
	}
}

func runProfiles(g *globalOptions) error {
	tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tBLOCK SIZE\tREAD\tRANDOM\tQD\tRATE\tFROM")
	for _, p := range workload.Presets() {
		s := p.Spec
		qd, rate := "-", "-"
		if s.QueueDepth > 0 {
			qd = fmt.Sprint(s.QueueDepth)
		}
		if s.RateIOPS > 0 {
			rate = fmt.Sprintf("%d IOPS", s.RateIOPS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d%%\t%d%%\t%s\t%s\t%s\n", p.Name, workload.FormatBlockSizes(s.BlockSizes), s.ReadPct, s.RandomPct, qd, rate, p.Source)
	}
	fmt.Fprintln(tw, "\nUse one with: ioprobe run --profile NAME --target PATH (flags given explicitly override the profile).")
	return tw.Flush()
}
