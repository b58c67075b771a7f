package target

import (
	"context"
	"fmt"

	"github.com/ioprobe/ioprobe/internal/blkid"
)

// secondOpinion adds to sigs, what ioprobe's own probes found on the block
// device dev, whatever util-linux's wipefs and blkid -p (where installed)
// find there and the probes do not: a signature found by either refuses.
// A tool that fails is a reason to refuse too (err), like a device ioprobe
// cannot read; a tool that is not installed is not. When the probes could
// not read all of dev (err), the tools are not asked, and what the probes
// found stays with the error. ctx ends the tools' runs (a signal).
func secondOpinion(ctx context.Context, dev string, sigs []Signature, err error) ([]Signature, error) {
	if err != nil {
		return sigs, err
	}
	ext, xerr := blkid.External(ctx, dev)
	if xerr != nil {
		return sigs, fmt.Errorf("util-linux's second opinion failed: %w", xerr)
	}
	return append(sigs, blkid.Missing(sigs, ext)...), nil
}
