// Package safefile owns how ioprobe reads the files it is given and
// writes the files it produces that are not targets.
//
// Every input (job files and their includes, Iometer ICF files, result,
// suite and fleet documents, host lists, the daemon's config and the web
// and client configs it checks) is read by Kind.Read: a regular file
// (never a FIFO, device or directory; opened without blocking, then
// checked by descriptor), at most the kind's size, or one clear error
// naming the file and the bound. The bounds are in Limits and
// docs/reliability.md ("Bounds").
//
// CheckConfig refuses a daemon config that a user other than the
// daemon's or root could change: the target rules' shared-directory rule,
// applied to the file and to every directory above it and above each
// symlink on the way (a read-only mount, such as a Kubernetes ConfigMap,
// can be changed by nobody and passes).
//
// Every output that is not a target (--out of run, suite, report,
// compare, fleet and check) goes through CheckOut before anything runs
// and Create when written: the directory is opened once, its name there
// must be absent or a regular file (never a symlink, device, FIFO or
// directory), the directory must pass the shared-directory rule, and the
// document is written to a new file (O_CREAT|O_EXCL|O_NOFOLLOW) in that
// directory, then renamed over the name in the same directory, so a
// reader never sees half a document and nothing is written through a
// link.
package safefile
