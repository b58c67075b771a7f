//go:build !linux

package ownio

// Do runs fn: I/O priorities are Linux's.
func Do(fn func() error) (marked bool, err error) { return false, fn() }

// Marks is false: I/O priorities are Linux's.
func Marks() bool { return false }
