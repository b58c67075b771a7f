package workload

// MaxFilesInTurn bounds Spec.FilesInTurn (fio's roundrobin:N takes any
// int; a bound catches a typo).
const MaxFilesInTurn = 1 << 20

// validatePlacement checks where each worker's region lies (Offset,
// OffsetIncrement) and how a worker shares its targets (FilesInTurn):
// offsets in whole units of the alignment for direct I/O, as the
// region's length.
func (s *Spec) validatePlacement(align int64) error {
	if s.OffsetAlign < 0 || (s.OffsetAlign > 0 && !s.Buffered && s.OffsetAlign%align != 0) {
		return specErr(FieldRegion, s.OffsetAlign, "offsets must be rounded up to a multiple of the alignment %s", FormatSize(align))
	}
	for _, v := range []int64{s.Offset, s.OffsetIncrement} {
		if v < 0 {
			return specErr(FieldRegion, v, "an offset must not be negative")
		}
		if v > 0 && !s.Buffered && s.OffsetAlign == 0 && v%align != 0 {
			return specErr(FieldRegion, FormatSize(v), "an offset must be a multiple of the alignment %s", FormatSize(align))
		}
	}
	if s.FilesInTurn < 0 || s.FilesInTurn > MaxFilesInTurn {
		return specErr(FieldQueueDepth, s.FilesInTurn, "I/Os per target in turn must be between 0 (each target its own queue) and %d", MaxFilesInTurn)
	}
	return nil
}
