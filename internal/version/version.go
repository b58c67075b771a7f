// Package version holds the build's version, set at link time:
//
//	go build -ldflags "-X github.com/ioprobe/ioprobe/internal/version.Version=v1.2.3"
package version

import (
	"runtime"
	"runtime/debug"
)

// Version of this build; "dev" unless set at link time.
var Version = "dev"

// Revision is the VCS revision the binary was built from, when known.
func Revision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// GoVersion is the Go toolchain that built the binary.
func GoVersion() string { return runtime.Version() }
