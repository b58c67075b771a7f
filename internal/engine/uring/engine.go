package uring

import (
	"sync"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Engine is the io_uring engine. Make one with New; it caches the answer of
// its availability probe.
type Engine struct {
	probeOnce sync.Once
	probeErr  error
	probeInfo string
}

// New returns the io_uring engine.
func New() *Engine { return &Engine{} }

// Name implements engine.Engine.
func (*Engine) Name() workload.EngineName { return workload.EngineURing }

// Available implements engine.Engine: it sets up and tears down a tiny
// probe ring once (catching a kernel without io_uring, a seccomp filter, the
// kernel.io_uring_disabled sysctl) and returns the cached answer after that.
func (e *Engine) Available() error {
	e.probeOnce.Do(func() { e.probeInfo, e.probeErr = probe() })
	return e.probeErr
}

// Describe says what the probe ring was set up with (the optional setup
// flags the kernel accepted), or why io_uring cannot be used.
func (e *Engine) Describe() string {
	if err := e.Available(); err != nil {
		return err.Error()
	}
	return e.probeInfo
}

// Suits implements engine.TargetChecker. io_uring issues an I/O without
// blocking only when the file takes non-blocking I/O (FMODE_NOWAIT); on
// anything else (zram and other bio-based drivers, some network file
// systems) it hands every I/O to an io-wq kernel thread, and two context
// switches per I/O cost more CPU than the blocking pread of the sync engine.
func (*Engine) Suits(fd int) error { return suits(fd) }
