package runner

import (
	"context"

	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/internal/stack"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// storage is what the result says of the storage under each target: the
// stack described when the run starts, and again when it ends, so that a
// setting changed meanwhile (a scheduler switched through sysfs) is said.
type storage struct {
	host   *hostfs.Host
	paths  []string
	before []stack.Description
}

// describeStorage records the storage under every target in res, before
// the first I/O. It reads sysfs and asks each target's filesystem through
// hostfs with the check deadline, so a filesystem that does not answer
// costs at most that and is named in targets[].stack_unseen.
func (p *Plan) describeStorage(ctx context.Context, res *result.Result, targets []*openTarget) *storage {
	s := &storage{host: &hostfs.Host{Deadline: p.CheckDeadline}}
	for i, ot := range targets {
		path := ot.t.Resolved
		if path == "" {
			path = ot.t.Path
		}
		d := stack.Describe(ctx, s.host, path)
		d.Apply(&res.Targets[i])
		s.paths = append(s.paths, path)
		s.before = append(s.before, d)
	}
	return s
}

// changed says in res which settings changed while the run ran. An
// interrupted run is not held up for it: a signal ends the run at once.
func (s *storage) changed(ctx context.Context, res *result.Result) {
	if s == nil || ctx.Err() != nil {
		return
	}
	for i, path := range s.paths {
		if i >= len(res.Targets) {
			return
		}
		after := stack.Describe(ctx, s.host, path)
		res.Targets[i].StackChanged = stack.Changed(s.before[i], after)
	}
}
