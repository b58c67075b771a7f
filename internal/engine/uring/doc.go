// Package uring is the io_uring engine, written directly on the raw
// io_uring_setup, io_uring_enter and io_uring_register system calls of
// golang.org/x/sys/unix: no cgo and no ring library.
//
// Each worker owns one ring on a locked OS thread, so the ring can be set up
// with IORING_SETUP_SINGLE_ISSUER and DEFER_TASKRUN (completions are posted
// only when that thread asks for them, with no interrupting task work). The
// worker's buffers and target descriptors are registered with the ring, so
// the kernel neither maps pages nor looks up files per I/O. Every pass of
// the loop submits the I/Os of all free slots and waits for at least one
// completion in the same io_uring_enter, then reaps every completion there
// is. Each queue slot has a fixed target and buffer and is named by its
// index in the SQE's user_data, so the loop allocates nothing.
//
// What the engine times is set out in docs/engines.md: from just before the
// io_uring_enter that submits an I/O to just after the io_uring_enter that
// returned with its completion.
package uring
