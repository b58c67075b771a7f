package blkid

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

func sigKeys(sigs []Signature) []string {
	out := make([]string, len(sigs))
	for i, s := range sigs {
		out[i] = fmt.Sprintf("%s@%d:%s", s.Type, s.Offset, s.Usage)
	}
	return out
}

// The fixtures are what util-linux 2.38.1 printed for a GPT disk made by
// sgdisk and for a hand-built BitLocker volume with an empty DOS label.
func TestParseWipefsJSON(t *testing.T) {
	out, err := os.ReadFile("testdata/wipefs-gpt.json")
	require.NoError(t, err)
	sigs, err := ParseWipefsJSON(out)
	require.NoError(t, err)
	require.Equal(t, []string{"gpt@512:", "gpt@67108352:", "PMBR@510:"}, sigKeys(sigs))

	sigs, err = ParseWipefsJSON([]byte("{\n   \"signatures\": [\n\n   ]\n}\n"))
	require.NoError(t, err)
	require.Empty(t, sigs)
	sigs, err = ParseWipefsJSON(nil)
	require.NoError(t, err)
	require.Empty(t, sigs)

	_, err = ParseWipefsJSON([]byte("wipefs: error: /dev/x: probing initialization failed"))
	require.ErrorContains(t, err, "not the JSON")
	_, err = ParseWipefsJSON([]byte(`{"signatures":[{"offset":"0xzz","type":"swap"}]}`))
	require.ErrorContains(t, err, "does not describe")
}

func TestParseBlkidExport(t *testing.T) {
	out, err := os.ReadFile("testdata/blkid-bitlocker-dos.export")
	require.NoError(t, err)
	sigs, err := ParseBlkidExport(out, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"BitLocker@-1:crypto", "dos@-1:partition_table"}, sigKeys(sigs))
	require.Equal(t, "a dos signature that util-linux's blkid -p recognises and ioprobe's own probes do not (PTTYPE=dos)", sigs[1].String(),
		"blkid -p says no offset; the refusal does not invent one")

	sigs, err = ParseBlkidExport([]byte("DEVNAME=/dev/loop7\nTYPE=swap\nUSAGE=other\nSBMAGIC_OFFSET=4086\n"), 0)
	require.NoError(t, err)
	require.Equal(t, []string{"swap@4086:other"}, sigKeys(sigs))

	sigs, err = ParseBlkidExport(nil, 2)
	require.NoError(t, err)
	require.Empty(t, sigs, "exit status 2: nothing found")

	sigs, err = ParseBlkidExport([]byte("blkid: /dev/loop7: ambivalent result (probably more filesystems on the device, use wipefs(8) to see more details)"), 8)
	require.NoError(t, err)
	require.Equal(t, []string{"ambivalent@-1:other"}, sigKeys(sigs), "exit status 8 refuses too")

	_, err = ParseBlkidExport([]byte("blkid: error: /dev/loop7: Permission denied"), 4)
	require.ErrorContains(t, err, "exit status 4")
	_, err = ParseBlkidExport([]byte("DEVNAME=/dev/loop7\n"), 0)
	require.ErrorContains(t, err, "names no TYPE")
	_, err = ParseBlkidExport([]byte("DEVNAME=/dev/loop7\nUUID=1234\n"), 0)
	require.ErrorContains(t, err, "names no TYPE", "a UUID without a type is an answer ioprobe does not understand")

	// What util-linux 2.38.1 (and 2.43-devel alike) prints, exit status
	// 0, for a blank partition of a DOS disk: its entry in the disk's
	// table, nothing on it.
	out, err = os.ReadFile("testdata/blkid-blank-dos-partition.export")
	require.NoError(t, err)
	sigs, err = ParseBlkidExport(out, 0)
	require.NoError(t, err)
	require.Empty(t, sigs, "a partition's own entry is not a signature on it")
	// ... but what lies on the partition is.
	sigs, err = ParseBlkidExport(append(out, "TYPE=ext4\nUSAGE=filesystem\n"...), 0)
	require.NoError(t, err)
	require.Equal(t, []string{"ext4@-1:filesystem"}, sigKeys(sigs))
}

func TestMissing(t *testing.T) {
	mine := []Signature{{Type: "gpt", Offset: 512}, {Type: "gpt", Offset: 67108352}}
	others := []Signature{
		{Type: "gpt", Offset: 512}, {Type: "PMBR", Offset: 510}, // wipefs
		{Type: "gpt", Offset: -1}, {Type: "PMBR", Offset: -1}, {Type: "zfs_member", Offset: -1}, // blkid -p
		{Type: "zfs_member", Offset: -1},
	}
	require.Equal(t, []string{"PMBR@510:", "zfs_member@-1:"}, sigKeys(Missing(mine, others)))
	require.Empty(t, Missing(others, others))
}

// TestExternalAgainstUtilLinux runs the real tools on image files (both
// take regular files as well as devices): what they find comes back,
// nothing is found on zeros, and the image is not changed.
func TestExternalAgainstUtilLinux(t *testing.T) {
	for _, tool := range []string{"wipefs", "blkid", "mkswap"} {
		if lookTool(tool) == "" {
			testdeps.Missing(t, testdeps.Tool(tool), "it is not in /usr/sbin or /sbin")
		}
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "swap.img")
	require.NoError(t, os.WriteFile(img, make([]byte, 1<<20), 0o600))
	sigs, err := External(context.Background(), img)
	require.NoError(t, err)
	require.Empty(t, sigs)

	out, err := exec.Command("mkswap", "-p", "16384", img).CombinedOutput()
	require.NoError(t, err, "%s", out)
	before, err := os.ReadFile(img)
	require.NoError(t, err)
	sigs, err = External(context.Background(), img)
	require.NoError(t, err)
	require.Equal(t, []string{"swap@16374:"}, sigKeys(sigs), "wipefs gives the offset; blkid -p's offset-less swap adds nothing")
	after, err := os.ReadFile(img)
	require.NoError(t, err)
	require.Equal(t, before, after)

	_, err = External(context.Background(), filepath.Join(dir, "missing"))
	require.Error(t, err, "wipefs fails on a device that is not there: no silent 'nothing found'")

	// A user's PATH often lacks /usr/sbin, where Debian puts them.
	t.Setenv("PATH", "/usr/bin:/bin")
	sigs, err = External(context.Background(), img)
	require.NoError(t, err)
	require.Equal(t, []string{"swap@16374:"}, sigKeys(sigs))

	// Tools of the same names first on PATH, that would call the image
	// blank, are not asked.
	fake := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(fake, "wipefs"), []byte("#!/bin/sh\necho '{\"signatures\": []}'\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(fake, "blkid"), []byte("#!/bin/sh\nexit 2\n"), 0o755))
	t.Setenv("PATH", fake+":/usr/sbin:/usr/bin:/sbin:/bin")
	sigs, err = External(context.Background(), img)
	require.NoError(t, err)
	require.Equal(t, []string{"swap@16374:"}, sigKeys(sigs), "the tools on the caller's PATH answered")
}
