// Package syncio is the portable "sync" engine: blocking pread/pwrite on
// golang.org/x/sys/unix, one goroutine per outstanding I/O per target (the
// queue depth is the number of goroutines blocked in the kernel at once).
package syncio
