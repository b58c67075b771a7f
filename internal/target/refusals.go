package target

// RefusalID names one reason ioprobe refuses a target. README's "Safety"
// and docs/output.md ("Refusals") list exactly these, with the same
// overrides; TestRefusalListMatchesDocs fails when they disagree, and
// TestEveryRefusalHasAnID when code refuses without one.
type RefusalID string

// Every refusal, in the order the docs list them.
const (
	RefuseReadOnlyDevice  RefusalID = "read-only-device"
	RefuseForeignFile     RefusalID = "foreign-file"
	RefuseMounted         RefusalID = "mounted"
	RefuseSwap            RefusalID = "swap"
	RefuseHeld            RefusalID = "held"
	RefusePartitioned     RefusalID = "partitioned"
	RefuseClaimed         RefusalID = "claimed"
	RefuseSignature       RefusalID = "signature"
	RefuseLocked          RefusalID = "locked"
	RefuseOpenForWriting  RefusalID = "open-for-writing"
	RefuseHiddenProcs     RefusalID = "hidden-processes"
	RefuseLoopStacked     RefusalID = "loop-stacked"
	RefuseLoopBackingFile RefusalID = "loop-backing-file"
	RefuseLoopView        RefusalID = "loop-view"
	RefuseUnverifiable    RefusalID = "unverifiable"
	RefuseBufferedFS      RefusalID = "buffered-fs"
	RefuseNoDirectIO      RefusalID = "no-direct-io"
	RefuseSharedDir       RefusalID = "shared-directory"
	RefuseSymlink         RefusalID = "symlink"
	RefuseReplaced        RefusalID = "replaced"
	RefuseChanged         RefusalID = "changed"
)

// Refusal is one entry of the list.
type Refusal struct {
	ID RefusalID
	// Override is the flag that lifts this refusal, "" when nothing may.
	Override string
}

// Refusals is the list, in the docs' order.
var Refusals = []Refusal{
	{RefuseReadOnlyDevice, "--allow-destructive"},
	{RefuseForeignFile, "--allow-destructive"},
	{RefuseMounted, ""},
	{RefuseSwap, ""},
	{RefuseHeld, ""},
	{RefusePartitioned, ""},
	{RefuseClaimed, ""},
	{RefuseSignature, ""},
	{RefuseLocked, ""},
	{RefuseOpenForWriting, ""},
	{RefuseHiddenProcs, ""},
	{RefuseLoopStacked, ""},
	{RefuseLoopBackingFile, ""},
	{RefuseLoopView, ""},
	{RefuseUnverifiable, ""},
	{RefuseBufferedFS, ""},
	{RefuseNoDirectIO, ""},
	{RefuseSharedDir, ""},
	{RefuseSymlink, ""},
	{RefuseReplaced, ""},
	{RefuseChanged, ""},
}

func overrideOf(id RefusalID) string {
	for _, r := range Refusals {
		if r.ID == id {
			return r.Override
		}
	}
	return ""
}

// finding is one reason found to refuse a target.
type finding struct {
	id   RefusalID
	text string // what was found, e.g. "it is mounted at /mnt (ext4)"
	key  string // when set, the reason whatever its text (persistentHolders)
}

// persistKey is what makes two looks' findings the same reason.
func (f finding) persistKey() string {
	if f.key != "" {
		return f.key
	}
	return f.text
}

func because(id RefusalID, text string) finding { return finding{id: id, text: text} }

// RefuseInMemory refuses a target on a filesystem in memory (tmpfs,
// ramfs) for a check of its own that found it there: text says what was
// found. Made as every other refusal (RefuseBufferedFS, its override).
func RefuseInMemory(path, text string) *SafetyError {
	return refusal(path, false, because(RefuseBufferedFS, text))
}

// refusal is the only maker of a SafetyError: the override comes from the
// list, and is offered only when it lifts every reason found.
func refusal(path string, write bool, fs ...finding) *SafetyError {
	e := &SafetyError{Path: path, Write: write}
	texts := make([]string, len(fs))
	for i, f := range fs {
		texts[i] = f.text
		e.IDs = append(e.IDs, f.id)
		o := overrideOf(f.id)
		if i == 0 {
			e.Override = o
		} else if o != e.Override {
			e.Override = ""
		}
	}
	e.Reason = joinReasons(texts)
	return e
}
