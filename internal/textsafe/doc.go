// Package textsafe keeps what documents and hosts say from acting on a
// terminal. A result's hostname, a fleet host's answer, an ICF access
// specification's name, a job file's job name or a label posted to the run
// API may hold control characters (ESC starts a sequence that retitles the
// window or clears the screen, BEL rings, CR returns to the start of the
// line to forge it), C1 controls, Unicode bidi overrides that reorder what
// is shown, or bytes that are not UTF-8. Every text output of ioprobe
// (reports, comparisons, fleet output, --dry-run, progress lines, notes
// and error messages) writes them as Go escapes (\x1b, \u202e), never raw:
// values through Escape, whole streams through NewWriter.
package textsafe
