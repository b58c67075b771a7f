package target

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeProc makes a /proc with what the view reads of this process: its
// PID namespace link, its status and its mount table.
func fakeProc(t *testing.T, pidNS, userNS, status, mountinfo, loadavg string) env {
	t.Helper()
	root := t.TempDir()
	self := filepath.Join(root, "self")
	require.NoError(t, os.MkdirAll(filepath.Join(self, "ns"), 0o755))
	require.NoError(t, os.Symlink(pidNS, filepath.Join(self, "ns/pid")))
	require.NoError(t, os.Symlink(userNS, filepath.Join(self, "ns/user")))
	require.NoError(t, os.WriteFile(filepath.Join(self, "status"), []byte(status), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(self, "mountinfo"), []byte(mountinfo), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "loadavg"), []byte(loadavg), 0o644))
	return env{proc: root}
}

const (
	hostPID   = "pid:[4026531836]"
	hostUser  = "user:[4026531837]"
	rootCaps  = "NSpid:\t812\nGroups:\t0\nCapEff:\t000001ffffffffff\n"
	userCaps  = "NSpid:\t812\nGroups:\t6 27\nCapEff:\t0000000000000000\n"
	procPlain = "22 27 0:21 / /proc rw,relatime - proc proc rw\n27 1 254:0 / / rw - ext4 /dev/vda rw\n"
)

func procMount(super string) string {
	return "22 27 0:21 / /proc rw,relatime - proc proc rw\n27 1 254:0 / / rw - ext4 /dev/vda rw\n40 22 0:50 / /proc rw,nosuid,nodev - proc proc " + super + "\n"
}

// Each way /proc may hide processes from ioprobe is said; a /proc that
// hides nothing from it is no reason.
func TestNamespaceView(t *testing.T) {
	for _, tc := range []struct {
		name, pidNS, status, mountinfo, want string
	}{
		{"the host's, root", hostPID, rootCaps, procPlain, ""},
		{"another PID namespace", "pid:[4026532301]", rootCaps, procPlain, "it runs in a PID namespace of its own (pid:[4026532301]"},
		{"not a namespace link", "whatever", rootCaps, procPlain, "it cannot tell which PID namespace it runs in"},
		{"a /proc of an outer namespace", hostPID, "NSpid:\t9000\t1\nCapEff:\t0\n", procPlain, "belongs to another PID namespace than its own"},
		{"hidepid=invisible, a user", hostPID, userCaps, procMount("rw,hidepid=invisible"), "/proc is mounted hidepid=invisible (systemd's ProtectProc=invisible does that)"},
		{"hidepid=2, a user in its gid", hostPID, userCaps, procMount("rw,hidepid=2,gid=27"), ""},
		{"hidepid=ptraceable, CAP_SYS_PTRACE", hostPID, "NSpid:\t812\nCapEff:\t0000000000080000\n", procMount("rw,hidepid=ptraceable"), ""},
		{"subset=pid", hostPID, rootCaps, procMount("rw,subset=pid"), "/proc is mounted subset=pid, which leaves out /proc/locks"},
		{"no /proc mounted", hostPID, rootCaps, "27 1 254:0 / / rw - ext4 /dev/vda rw\n", "no proc filesystem is mounted at /proc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := fakeProc(t, tc.pidNS, hostUser, tc.status, tc.mountinfo, "0 0 0 1/100 1\n")
			fs := e.namespaceView()
			if tc.want == "" {
				require.Empty(t, fs)
				return
			}
			require.Len(t, fs, 1)
			require.Equal(t, RefuseHiddenProcs, fs[0].id)
			require.Contains(t, fs[0].text, tc.want)
			require.True(t, strings.HasSuffix(fs[0].text, viewHelp), "what gives the view: %s", fs[0].text)
		})
	}
}

// What a look could not see: denied processes (refused for, or named as
// unseen when ioprobe had every privilege), a bound, a kernel count the
// look falls short of by more than the slack.
func TestScanView(t *testing.T) {
	denied := []deniedProc{{1, errors.New("fd: permission denied")}, {2, errors.New("maps: permission denied")},
		{3, unix.EACCES}, {4, unix.EACCES}}
	t.Run("denied, without the privilege", func(t *testing.T) {
		e := fakeProc(t, hostPID, hostUser, userCaps, procPlain, "0 0 0 1/100 1\n")
		fs, unseen := e.scanView(&scanResult{denied: denied, tasks: 100}, 100)
		require.Empty(t, unseen)
		require.Len(t, fs, 1)
		require.Contains(t, fs[0].text, fmt.Sprintf("it may not read what 4 processes hold (pid 1: fd: permission denied; pid 2: maps: permission denied; pid 3: permission denied and 1 more), as uid %d", os.Geteuid()))
		require.Equal(t, viewDenied, fs[0].key)
	})
	// The fake /proc's ancestry: this process's parent is 7, whose is 1.
	ancestry := func(t *testing.T, e env) {
		for pid, ppid := range map[int]int{os.Getpid(): 7, 7: 1} {
			dir := filepath.Join(e.proc, fmt.Sprint(pid))
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(fmt.Sprintf("%d (a (b) c) S %d 1 1 0", pid, ppid)), 0o644))
		}
	}
	t.Run("an ancestor denied to an ioprobe with every privilege", func(t *testing.T) {
		e := fakeProc(t, hostPID, hostUser, rootCaps, procPlain, "0 0 0 1/100 1\n")
		ancestry(t, e)
		fs, unseen := e.scanView(&scanResult{denied: []deniedProc{{1, errors.New("fd: permission denied")}, {7, unix.EACCES}}, tasks: 100}, 100)
		require.Empty(t, fs, "the sandbox that started it guards itself: named, not refused for")
		require.Equal(t, []string{"pid 1: fd: permission denied", "pid 7: permission denied"}, unseen)
	})
	t.Run("another process denied to an ioprobe with every privilege", func(t *testing.T) {
		e := fakeProc(t, hostPID, hostUser, rootCaps, procPlain, "0 0 0 1/100 1\n")
		ancestry(t, e)
		fs, unseen := e.scanView(&scanResult{denied: denied, tasks: 100}, 100)
		require.Equal(t, []string{"pid 1: fd: permission denied"}, unseen)
		require.Len(t, fs, 1, "a confined ioprobe (AppArmor in a container) does not see the host")
		require.Contains(t, fs[0].text, "it may not read what 3 processes hold (pid 2: maps: permission denied;")
	})
	t.Run("in a user namespace, every privilege is not", func(t *testing.T) {
		e := fakeProc(t, hostPID, "user:[4026532400]", rootCaps, procPlain, "0 0 0 1/100 1\n")
		ancestry(t, e)
		fs, unseen := e.scanView(&scanResult{denied: denied[:1], tasks: 100}, 100)
		require.Empty(t, unseen)
		require.Len(t, fs, 1)
	})
	t.Run("a bound", func(t *testing.T) {
		e := fakeProc(t, hostPID, hostUser, rootCaps, procPlain, "0 0 0 1/100 1\n")
		fs, _ := e.scanView(&scanResult{bound: "there are more than 65536 processes, the most it looks at", tasks: 100}, 100)
		require.Len(t, fs, 1)
		require.Contains(t, fs[0].text, "there are more than 65536 processes")
	})
	for _, tc := range []struct {
		seen, before int
		loadavg      string
		hidden       bool
	}{
		{100, 100, "0 0 0 1/100 1\n", false},
		{100 - countSlack(100), 100, "0 0 0 1/100 1\n", false},
		{99 - countSlack(100), 100, "0 0 0 1/100 1\n", true},
		{90, 100, "0 0 0 1/400 1\n", false}, // the smaller of the two counts
		{40, 400, "0 0 0 1/400 1\n", true},
	} {
		t.Run(fmt.Sprintf("%d tasks seen of %d", tc.seen, tc.before), func(t *testing.T) {
			e := fakeProc(t, hostPID, hostUser, rootCaps, procPlain, tc.loadavg)
			fs, _ := e.scanView(&scanResult{tasks: tc.seen}, tc.before)
			if !tc.hidden {
				require.Empty(t, fs)
				return
			}
			require.Len(t, fs, 1)
			require.Contains(t, fs[0].text, "(/proc/loadavg) and /proc showed it")
		})
	}
}

// The looks of persistentHolders take a reason with a key for the same
// reason when its words change, and say it as the last look did.
func TestPersistKey(t *testing.T) {
	a, b := hidden(viewDenied, "3 processes"), hidden(viewDenied, "4 processes")
	require.Equal(t, a.persistKey(), b.persistKey())
	c, d := because(RefuseLocked, "x"), because(RefuseLocked, "y")
	require.NotEqual(t, c.persistKey(), d.persistKey())
}
