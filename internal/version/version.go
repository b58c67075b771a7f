// Package version holds the build's version and revision, set at link
// time (the Makefile does, and the Dockerfile through it):
//
//	go build -ldflags "-X github.com/ioprobe/ioprobe/internal/version.Version=v1.2.3 -X github.com/ioprobe/ioprobe/internal/version.revision=0123abc"
package version

import (
	"runtime"
	"runtime/debug"
)

// Version of this build; "dev" unless set at link time.
var Version = "dev"

// revision is the VCS revision set at link time, if it was.
var revision string

// Revision is the VCS revision the binary was built from: the one set at
// link time, else the one Go stamped from the checkout it built in, else
// "unknown" (a build from a tree without .git, such as a Docker context,
// given none).
func Revision() string {
	if revision != "" {
		return revision
	}
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
