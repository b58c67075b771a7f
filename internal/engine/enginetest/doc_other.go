//go:build !linux

// Package enginetest is the engine conformance suite; it runs on Linux only.
package enginetest
