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
		size, read, random := workload.FormatBlockSizes(s.BlockSizes), fmt.Sprintf("%d%%", s.ReadPct), fmt.Sprintf("%d%%", s.RandomPct)
		if len(s.Lines) > 0 { // per line: the listing gives the whole spec's shares
			_, r, rnd := s.Mix()
			size, read, random = s.Describe(), fmt.Sprintf("%d%%*", r), fmt.Sprintf("%d%%*", rnd)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, size, read, random, qd, rate, p.Source)
	}
	fmt.Fprintln(tw, "\n* a profile of several lines: the shares of reads and random I/O of the whole specification; --dry-run lists its lines.")
	fmt.Fprintln(tw, "Use one with: ioprobe run --profile NAME --target PATH (flags given explicitly override the profile).")
	return tw.Flush()
}
