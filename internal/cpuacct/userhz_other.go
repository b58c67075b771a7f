//go:build !linux

package cpuacct

func userHZ() uint64 { return defaultUserHZ }
