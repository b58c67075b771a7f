// Package iobuf owns the memory that O_DIRECT I/O reads into and writes
// from: page-aligned slots outside the Go heap (an anonymous mmap), filled
// with incompressible pseudo-random bytes. The engines' workers and the
// targets' fill both use it; it knows nothing of either.
package iobuf
