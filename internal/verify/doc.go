// Package verify is the on-disk format of --verify: every 512-byte sector
// that ioprobe writes describes itself (a magic number, its own byte offset
// in the target, the writing run and sequence, and with --verify a CRC-32C
// of the whole sector), under a key bound to the file it belongs to, so a
// read can tell a good sector from a corrupted, torn or misdirected one
// without remembering what was written, and a file can be told to be still
// ioprobe's by its content. It is pure code over byte slices; engines call
// it on their own (mmap'd) buffers.
package verify
