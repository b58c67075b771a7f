package engine

import "github.com/ioprobe/ioprobe/pkg/workload"

// Turn is the rotation over a worker's targets in turn (Spec.FilesInTurn,
// fio's file_service_type=roundrobin:N, io_u.c: __get_next_file,
// get_next_file_rr): every I/Os to one target, then every to the next.
//
// Under loops (Spec.Loops) the worker's budget is Loops × the regions'
// bytes, booked I/O by I/O whatever the target (Worker.Take); that
// budget alone does not make a pass of each region per loop: with a
// size mix the targets' passes end after different numbers of I/Os, and
// a target that kept its turns after its pass read its start again
// while another's tail went unread. So Turn also keeps fio's per-file
// end: a target whose pass is done (its generator's PassDone) is passed
// over, the next one getting a fresh turn, as fio marks such a file done
// and skips it; once every target's pass is done it starts the next
// loop on all of them (NewPass: each at its region's start), as fio's
// next loop reopens every file. The budget still ends the run (and is
// what ends a loop without a pass that ends by itself: random I/O
// without the map, or a mix of random and sequential).
//
// One owner at a time: the io_uring loop, or the sync lanes under their
// lock.
type Turn struct {
	gens     []*workload.Generator // one per target (any lane's: they share its cursor)
	every    int
	at, left int
	passes   bool   // Spec.Loops: passes end, and a loop with them
	done     []bool // targets whose pass of this loop is done
	ndone    int
	fresh    bool // a loop started and nothing was taken since
}

// NewTurn returns the rotation over the targets of gens, every I/Os to
// each, starting with the first.
func NewTurn(spec *workload.Spec, gens []*workload.Generator) *Turn {
	return &Turn{gens: gens, every: spec.FilesInTurn, left: spec.FilesInTurn, passes: spec.Budgeted(), done: make([]bool, len(gens))}
}

// Target returns the target of the worker's next I/O, starting the next
// loop when every target's pass is done. False: no target has any I/O
// to give even in a new loop (a region too small for a transfer: not
// built, but then the worker stops rather than spin).
func (t *Turn) Target() (int, bool) {
	if !t.passes {
		return t.at, true
	}
	for {
		if !t.done[t.at] {
			if !t.gens[t.at].PassDone() {
				return t.at, true
			}
			t.done[t.at] = true
			t.ndone++
		}
		if t.ndone == len(t.done) {
			if t.fresh {
				return 0, false
			}
			t.newLoop()
			continue
		}
		t.next()
	}
}

// Took counts an I/O booked on the target Target returned.
func (t *Turn) Took() {
	t.fresh = false
	if t.left--; t.left <= 0 {
		t.next()
	}
}

// next moves the turn to the next target, with every I/Os to give.
func (t *Turn) next() {
	t.left = t.every
	if t.at++; t.at == len(t.gens) {
		t.at = 0
	}
}

// newLoop starts every target's next pass, the turn at the first target
// (fio's next loop starts at its first file again).
func (t *Turn) newLoop() {
	t.at, t.left = 0, t.every
	for i, g := range t.gens {
		g.NewPass()
		t.done[i] = false
	}
	t.ndone, t.fresh = 0, true
}
