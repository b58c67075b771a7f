package test

import "testing"

// fsCases are the filesystem images of the differential test.
var fsCases = []sigCase{
	{name: "mkfs.ext4", tools: []string{"mkfs.ext4"}, want: "ext4", make: func(t *testing.T, dev string) {
		run(t, "mkfs.ext4", "-q", "-F", dev)
	}},
}
