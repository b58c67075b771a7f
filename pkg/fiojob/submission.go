package fiojob

import "github.com/ioprobe/ioprobe/pkg/workload"

// submission sets how the ring hands I/Os to the kernel from fio's
// iodepth_batch_* options, as fio's fixup_options reads them: a batch of 0
// or more than iodepth is iodepth; a completion minimum of 0 polls; a
// maximum below the minimum is the minimum. Given any of them, the ring
// follows fio's rules exactly (workload.SubmitFio); given none, it
// submits by the adaptive rule, which keeps fio's device-level behaviour
// (sequential I/O unmerged, one I/O per call) at less CPU for random I/O.
// fio's sync engines have no commit step, so there the options change
// nothing (nor do they in ioprobe's sync engine, where they are left
// unset).
func (j *job) submission(spec *workload.Spec) {
	if spec.Engine != workload.EngineURing {
		return
	}
	if j.batchSubmit >= 0 || j.completeMin >= 0 || j.completeMax >= 0 {
		// Any iodepth_batch* option: fio's rules, not the adaptive one.
		spec.SubmitMode = workload.SubmitFio
	}
	if j.batchSubmit >= 0 {
		spec.SubmitBatch = j.batchSubmit
		if j.batchSubmit == 0 || j.batchSubmit > j.iodepth {
			spec.SubmitBatch = j.iodepth
		}
	}
	if j.completeMin >= 0 {
		spec.CompleteMin, spec.CompletePoll = j.completeMin, j.completeMin == 0
	}
	if j.completeMax > 0 {
		spec.CompleteMax = j.completeMax
	}
}
