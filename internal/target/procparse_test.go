package target

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFDInfoFull(t *testing.T) {
	in, err := parseFDInfoFull(strings.NewReader("pos:\t0\nflags:\t0100002\nmnt_id:\t27\nino:\t5\nlock:\t1: FLOCK  ADVISORY  WRITE 812 fe:00:5 0 EOF\n"))
	require.NoError(t, err)
	require.Equal(t, fdInfo{write: true, mntID: 27, ino: 5, locks: []string{"1: FLOCK  ADVISORY  WRITE 812 fe:00:5 0 EOF"}, flock: true}, in)

	in, err = parseFDInfoFull(strings.NewReader("pos:\t0\nflags:\t02100000\nmnt_id:\t24\nino:\t1041\n"))
	require.NoError(t, err)
	require.Equal(t, fdInfo{mntID: 24, ino: 1041}, in, "O_RDONLY|O_CLOEXEC|O_LARGEFILE, no lock")

	for _, bad := range []string{"flags:\tzz\n", "mnt_id:\tx\n", "ino:\t-1\n"} {
		_, err := parseFDInfoFull(strings.NewReader(bad))
		require.Error(t, err, bad)
	}
}

func TestParseMapsLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
		want mapping
	}{
		{"7f322ea7e000-7f322ea7f000 rw-s 00000000 fe:00 10224820                   /tmp/hx/f.img",
			true, mapping{span: "7f322ea7e000-7f322ea7f000", id: fileID{0xfe, 0, 10224820}, path: "/tmp/hx/f.img"}},
		{"7f0000000000-7f0000001000 -w-s 00001000 00:06 12 /dev/loop3", true,
			mapping{span: "7f0000000000-7f0000001000", id: fileID{0, 6, 12}, path: "/dev/loop3"}},
		{"7f0000000000-7f0000001000 rw-s 00000000 103:02 77 /srv/my db (deleted)", true,
			mapping{span: "7f0000000000-7f0000001000", id: fileID{0x103, 2, 77}, path: "/srv/my db (deleted)"}},
		{"55da9bd92000-55da9bdc1000 r--p 00000000 fe:00 1311 /usr/bin/sleep", false, mapping{}},
		{"7f3c0c000000-7f3c0c021000 rw-p 00000000 00:00 0 ", false, mapping{}},
		{"7f0000000000-7f0000001000 r--s 00000000 fe:00 10 /srv/ro", false, mapping{}},
		{"7f0000000000-7f0000001000 rw-s 00000000 00:01 0 /dev/zero (deleted)", false, mapping{}},
		{"7ffd6d5e1000-7ffd6d5e3000 r-xp 00000000 00:00 0                          [vdso]", false, mapping{}},
	} {
		m, ok, err := parseMapsLine(tc.line)
		require.NoError(t, err, tc.line)
		require.Equal(t, tc.ok, ok, tc.line)
		require.Equal(t, tc.want, m, tc.line)
	}
	for _, bad := range []string{"7f00-7f01 rw-s 0 fe", "7f00-7f01 rw 0 fe:00 1 /x", "7f00-7f01 rw-s 0 fe00 1 /x", "7f00-7f01 rw-s 0 fe:00 x /x"} {
		_, _, err := parseMapsLine(bad)
		require.Error(t, err, bad)
	}
}

// An io_uring's fdinfo as Linux 6.13 and later print it (paths, empty
// slots left out) and as earlier ones do (last components, <none>), and
// as Linux 6.15 prints it while the ring is busy (nothing of the ring).
func TestParseRingFiles(t *testing.T) {
	newer := "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t38382\nSqMask:\t0x3\nSqHead:\t0\nSQEs:\t0\nCQEs:\t1\n    0: user_data:1, res:0, flag:0\n" +
		"SqThread:\t-1\nSqThreadCpu:\t-1\nUserFiles:\t3\n    0: /tmp/hx/f.img\n    2: /srv/with\\040space\nUserBufs:\t1\n    0: 0x7f00/4096\nPollList:\nCqOverflowList:\nNAPI:\tdisabled\n"
	rf, err := parseRingFiles(strings.NewReader(newer), nil)
	require.NoError(t, err)
	require.Equal(t, ringFiles{listed: true, count: 3, names: []string{"/tmp/hx/f.img", "/srv/with space"}}, rf, "a CQE line and a buffer are no files")

	older := "SqThread:\t-1\nSqThreadCpu:\t-1\nUserFiles:\t2\n    0: loop3\n    1: <none>\nUserBufs:\t0\nPollList:\n"
	rf, err = parseRingFiles(strings.NewReader(older), nil)
	require.NoError(t, err)
	require.Equal(t, ringFiles{listed: true, count: 2, names: []string{"loop3"}}, rf)

	rf, err = parseRingFiles(strings.NewReader(older), func(n string) bool { return n == "loop4" })
	require.NoError(t, err)
	require.Empty(t, rf.names, "kept only what keep keeps")

	rf, err = parseRingFiles(strings.NewReader("pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t38382\n"), nil)
	require.NoError(t, err)
	require.False(t, rf.listed, "a busy ring lists nothing: ioprobe cannot tell")

	_, err = parseRingFiles(strings.NewReader("UserFiles:\tmany\n"), nil)
	require.Error(t, err)
}

func TestParseProcBits(t *testing.T) {
	ino, err := parseNSInode("pid:[4026531836]", "pid")
	require.NoError(t, err)
	require.EqualValues(t, initPIDNSIno, ino, "the first PID namespace's inode")
	_, err = parseNSInode("mnt:[4026531840]", "pid")
	require.Error(t, err)

	n, err := parseLoadavgTasks("8.93 4.11 1.59 6/139 22934\n")
	require.NoError(t, err)
	require.Equal(t, 139, n)
	_, err = parseLoadavgTasks("8.93 4.11 1.59\n")
	require.Error(t, err)

	st, err := parseProcStatus(strings.NewReader("Name:\tioprobe\nGroups:\t6 27 \nNSpid:\t812\t1\nCapEff:\t0000000000080004\n"))
	require.NoError(t, err)
	require.Equal(t, procStatus{nspid: []int{812, 1}, capEff: 1<<capSysPtrace | 1<<capDacReadSearch, groups: []int{6, 27}}, st)

	o := parseProcOptions("rw,nosuid,nodev,noexec,relatime,hidepid=invisible,gid=27")
	require.Equal(t, procOptions{hidepid: "invisible", gid: 27}, o)
	require.True(t, o.hides())
	require.False(t, parseProcOptions("rw").hides())
	require.False(t, parseProcOptions("rw,hidepid=off").hides())
	require.True(t, parseProcOptions("rw,hidepid=2").hides())
	require.Equal(t, "pid", parseProcOptions("rw,subset=pid").subset)
}
