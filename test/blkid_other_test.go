package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid"
	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// otherCases are the RAID, volume-manager, crypto, swap and
// partition-table images of the differential test (blkid_test.go).
var otherCases = otherSigCases()

// otherSigCases are the RAID, volume-manager, crypto, swap and
// partition-table images of the differential test: made by the real tools
// where Debian has one that works on a loop device here, hand-built from
// the published formats (internal/blkid/handmade) for the rest.
func otherSigCases() []sigCase {
	cs := toolOtherCases()
	for _, h := range handmade.Headers() {
		if !h.Libblkid {
			continue // libblkid does not report it: TestBlkidBeyondLibblkid
		}
		cs = append(cs, handmadeCase(h))
	}
	return cs
}

func toolOtherCases() []sigCase {
	var cs []sigCase
	for _, meta := range []string{"0.90", "1.0", "1.1", "1.2"} {
		cs = append(cs, sigCase{name: "mdadm --create --metadata=" + meta, want: "linux_raid_member", tools: []string{"mdadm"}, make: mdadmCreate(meta)})
	}
	cs = append(cs,
		sigCase{name: "pvcreate", want: "LVM2_member", tools: []string{"pvcreate"}, make: func(t *testing.T, dev string) {
			lvm(t, "pvcreate", "-ff", "-y", dev)
		}},
		sigCase{name: "pvcreate --labelsector 3", want: "LVM2_member", tools: []string{"pvcreate"}, make: func(t *testing.T, dev string) {
			lvm(t, "pvcreate", "-ff", "-y", "--labelsector", "3", dev)
		}},
		sigCase{name: "cryptsetup luksFormat --type luks1", want: "crypto_LUKS", tools: []string{"cryptsetup"}, make: luksFormat("luks1")},
		sigCase{name: "cryptsetup luksFormat --type luks2", want: "crypto_LUKS", tools: []string{"cryptsetup"}, make: luksFormat("luks2")},
		sigCase{name: "cryptsetup luksFormat --type luks2, primary header destroyed", want: "crypto_LUKS", tools: []string{"cryptsetup"}, make: func(t *testing.T, dev string) {
			luksFormat("luks2")(t, dev)
			writeAt(t, dev, 0, randomBytes(t, 4096)) // the primary binary header; the secondary one is at 16 KiB
		}},
		sigCase{name: "cryptsetup luksFormat --type luks2 --luks2-metadata-size 256k, primary header destroyed", want: "crypto_LUKS", tools: []string{"cryptsetup"}, make: func(t *testing.T, dev string) {
			luksFormat("luks2", "--luks2-metadata-size", "256k", "--luks2-keyslots-size", "1m")(t, dev)
			writeAt(t, dev, 0, randomBytes(t, 4096)) // the secondary header is at 256 KiB
		}},
		// An OPAL drive's LUKS2 header names the subsystem HW-OPAL
		// (libblkid luks.c probes it first since 2.41: reads of a locked
		// range fail); no OPAL drive here, the header is the real tool's.
		sigCase{name: "cryptsetup luksFormat --type luks2 --subsystem HW-OPAL", want: "crypto_LUKS", tools: []string{"cryptsetup"}, make: luksFormat("luks2", "--subsystem", "HW-OPAL")},
		sigCase{name: "veritysetup format (hash device)", want: "DM_verity_hash", tools: []string{"veritysetup"}, make: func(t *testing.T, dev string) {
			data := filepath.Join(t.TempDir(), "data")
			require.NoError(t, os.WriteFile(data, randomBytes(t, 1<<20), 0o600))
			run(t, "veritysetup", "format", data, dev)
		}},
		sigCase{name: "integritysetup format", want: "DM_integrity", tools: []string{"integritysetup"}, make: func(t *testing.T, dev string) {
			needDeviceMapper(t)
			run(t, "integritysetup", "format", "-q", "--batch-mode", "--no-wipe", dev)
		}},
		sigCase{name: "make-bcache -B", want: "bcache", tools: []string{"make-bcache"}, make: func(t *testing.T, dev string) {
			run(t, "make-bcache", "--wipe-bcache", "-B", dev)
		}},
		sigCase{name: "make-bcache -C", want: "bcache", tools: []string{"make-bcache"}, make: func(t *testing.T, dev string) {
			run(t, "make-bcache", "--wipe-bcache", "-C", dev)
		}},
		sigCase{name: "drbdmeta create-md v08", want: "drbd", tools: []string{"drbdmeta"}, make: func(t *testing.T, dev string) {
			drbdmeta(t, "v08", dev)
		}},
		sigCase{name: "drbdmeta create-md v09", want: "drbd", tools: []string{"drbdmeta"}, make: func(t *testing.T, dev string) {
			drbdmeta(t, "v09", dev, "1")
		}},
	)
	for _, page := range []int{4096, 8192, 16384, 32768, 65536} {
		page := page
		cs = append(cs, sigCase{name: fmt.Sprintf("mkswap -p %d", page), want: "swap", tools: []string{"mkswap"}, make: func(t *testing.T, dev string) {
			run(t, "mkswap", "-p", fmt.Sprint(page), dev)
		}})
	}
	cs = append(cs,
		sigCase{name: "sfdisk label: dos, no partitions (an empty DOS label)", want: "dos", tools: []string{"sfdisk"}, make: func(t *testing.T, dev string) {
			runIn(t, "label: dos\n", "sfdisk", "-q", "--wipe", "never", dev)
		}},
		sigCase{name: "sfdisk label: dos, one partition", want: "dos", tools: []string{"sfdisk"}, make: func(t *testing.T, dev string) {
			runIn(t, "label: dos\n,16MiB,L\n", "sfdisk", "-q", "--wipe", "never", dev)
		}},
		sigCase{name: "sgdisk -o -n (GPT, protective MBR)", want: "gpt", tools: []string{"sgdisk"}, make: func(t *testing.T, dev string) {
			run(t, "sgdisk", "-o", "-n", "1:2048:+16M", dev)
		}},
		sigCase{name: "sgdisk -o -n, primary GPT header destroyed (backup only)", want: "gpt", tools: []string{"sgdisk"}, make: func(t *testing.T, dev string) {
			run(t, "sgdisk", "-o", "-n", "1:2048:+16M", dev)
			writeAt(t, dev, 512, randomBytes(t, 512))
		}},
		sigCase{name: "sfdisk label: sun", want: "sun", tools: []string{"sfdisk"}, make: func(t *testing.T, dev string) {
			runIn(t, "label: sun\n", "sfdisk", "-q", "--wipe", "never", dev)
		}},
		sigCase{name: "sfdisk label: sgi", want: "sgi", tools: []string{"sfdisk"}, make: func(t *testing.T, dev string) {
			runIn(t, "label: sgi\n", "sfdisk", "-q", "--wipe", "never", dev)
		}},
		sigCase{name: "parted mklabel atari, mkpart", want: "atari", tools: []string{"parted"}, make: func(t *testing.T, dev string) {
			run(t, "parted", "-s", dev, "mklabel", "atari", "mkpart", "primary", "1MiB", "16MiB")
			_ = exec.Command("partx", "-d", dev).Run()
		}},
		sigCase{name: "sfdisk label: gpt", want: "gpt", tools: []string{"sfdisk"}, make: func(t *testing.T, dev string) {
			runIn(t, "label: gpt\n,16MiB\n", "sfdisk", "-q", "--wipe", "never", dev)
		}},
	)
	for _, l := range []struct{ label, want string }{{"msdos", "dos"}, {"gpt", "gpt"}, {"mac", "mac"}, {"sun", "sun"}, {"dvh", "sgi"}, {"pc98", "dos"}} {
		l := l
		cs = append(cs, sigCase{name: "parted mklabel " + l.label, want: l.want, tools: []string{"parted"}, make: func(t *testing.T, dev string) {
			run(t, "parted", "-s", dev, "mklabel", l.label)
			// parted tells the kernel about the partitions some labels
			// define (mac's map, dvh's volume header); drop them so that
			// the refusal is about the label, not about partitions.
			_ = exec.Command("partx", "-d", dev).Run()
		}})
	}
	return cs
}

// mdadmCreate makes a one-disk RAID1 with the given metadata version and
// stops it again. It needs the kernel's md driver.
func mdadmCreate(meta string) func(t *testing.T, dev string) {
	return func(t *testing.T, dev string) {
		if _, err := os.Stat("/proc/mdstat"); err != nil {
			t.Skip("the kernel has no md driver (/proc/mdstat): mdadm cannot create arrays here; the hand-built md cases cover the formats") //hygiene:skip the kernel's md driver
		}
		// One name per metadata version: the cases run beside each other.
		name := fmt.Sprintf("/dev/md/ioprobe-test-%d-%s", os.Getpid(), strings.ReplaceAll(meta, ".", ""))
		run(t, "mdadm", "--create", name, "--run", "--force", "--level=1", "--raid-devices=1", "--metadata="+meta, "--homehost=any", dev)
		t.Cleanup(func() { _ = exec.Command("mdadm", "--stop", name).Run() })
		run(t, "mdadm", "--stop", name)
	}
}

// needDeviceMapper skips a case whose tool needs the kernel's
// device-mapper (integritysetup formats through it).
func needDeviceMapper(t *testing.T) {
	misc, err := os.ReadFile("/proc/misc")
	if err != nil || !strings.Contains(string(misc), "device-mapper") {
		t.Skip("the kernel has no device-mapper (/proc/misc): integritysetup cannot format here; the hand-built dm-integrity case covers the format") //hygiene:skip the kernel's device-mapper
	}
}

// drbdmeta writes DRBD's internal metadata for a minor nobody uses and
// removes what drbdmeta leaves on the host for it (its lock file and its
// record of the minor's last backing device).
func drbdmeta(t *testing.T, version, dev string, extra ...string) {
	t.Helper()
	// One minor per metadata version: the cases run beside each other.
	minor := fmt.Sprint(4000 + os.Getpid()%1000*2 + map[string]int{"v08": 0, "v09": 1}[version])
	leftovers := []string{"/var/lib/drbd/drbd-minor-" + minor + ".lkbd", "/var/lock/drbd-147-" + minor}
	for _, f := range leftovers {
		if _, err := os.Lstat(f); err == nil {
			t.Skipf("%s exists: DRBD minor %s is somebody's", f, minor) //hygiene:skip another user of the machine
		}
	}
	t.Cleanup(func() {
		for _, f := range leftovers {
			_ = os.Remove(f)
		}
	})
	run(t, "drbdmeta", append([]string{"--force", minor, version, dev, "internal", "create-md"}, extra...)...)
}

// luksFormat formats dev with a cheap key derivation: the test checks the
// header, not the cipher.
func luksFormat(typ string, extra ...string) func(t *testing.T, dev string) {
	return func(t *testing.T, dev string) {
		args := append([]string{"luksFormat", "-q", "--type", typ, "--pbkdf", "pbkdf2",
			"--pbkdf-force-iterations", "1000", "--key-file", "-"}, extra...)
		runIn(t, "not a secret", "cryptsetup", append(args, dev)...)
	}
}

// TestBlkidBeyondLibblkid covers the labels libblkid knows but does not
// report on a whole device (a BSD disklabel, which it looks for only
// inside a DOS partition; a Minix subpartition table inside its DOS
// partition): ioprobe finds them and refuses, bytes unchanged.
func TestBlkidBeyondLibblkid(t *testing.T) {
	testdeps.Need(t, testdeps.LoopDevices)
	cases := []sigCase{{name: "parted mklabel bsd", want: "bsd", size: 64 << 20, tools: []string{"parted"}, make: func(t *testing.T, dev string) {
		run(t, "parted", "-s", dev, "mklabel", "bsd")
	}}}
	for _, h := range handmade.Headers() {
		if !h.Libblkid {
			cases = append(cases, handmadeCase(h))
		}
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // as the differential test's cases: own device, nothing timed
			for _, tool := range c.tools {
				testdeps.Need(t, testdeps.Tool(tool))
			}
			dev := randomLoop(t, c.size)
			c.make(t, dev)
			f, err := os.Open(dev)
			require.NoError(t, err)
			defer f.Close()
			var types []string
			for _, s := range blkid.Scan(f, c.size, 512) {
				types = append(types, s.Type)
			}
			require.Contains(t, types, c.want)

			before := sha256Dev(t, dev)
			out := ioprobe(t, "", "run", "--target", dev, "--allow-destructive", "--read-pct", "0", "--duration", "1s")
			require.Equal(t, 2, out.code, "ioprobe must refuse: %s", out.stderr)
			require.Contains(t, out.stderr, c.want)
			require.Equal(t, before, sha256Dev(t, dev), "the device's bytes changed")
		})
	}
}
