package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
)

// The fleet's end-to-end tests run several daemons on this one machine as
// if each were a host of its own: its own network namespace and address
// behind a bridge (the test, in the root namespace, is the fleet client),
// its own hostname (a UTS namespace), its own loop device as the target
// `data`. Everything is named after this process's pid and a counter, so
// parallel test runs never collide, and torn down at cleanup in reverse
// order even when the test fails.

// apiPort is the daemons' port: each namespace has its own port space,
// so every "host" listens on the same one, as real hosts would.
const apiPort = "9816"

// nsHost is one daemon in its namespace.
type nsHost struct {
	Name string // hostname inside its UTS namespace (node1, node2, …)
	NS   string // network namespace
	Veth string // the veth end on the bridge (its peer is in NS)
	IP   string
	Addr string // IP:apiPort, what the fleet client dials
	Dev  string // its loop device, /dev/loopN
	Cfg  string
	*daemon
}

// netFleet is the bridge and the hosts behind it.
type netFleet struct {
	Bridge string
	Subnet string // 10.213.X.0/24
	Hosts  []*nsHost
}

var fleetSeq atomic.Int32

// needNetns skips unless this process may create namespaces, links and
// loop devices.
func needNetns(t *testing.T) {
	t.Helper()
	testdeps.Need(t, testdeps.Root, testdeps.LoopDevices, testdeps.Tool("ip"), testdeps.Tool("unshare"), testdeps.Tool("nsenter"))
}

// sh runs a command that must succeed.
func sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return string(out)
}

// undo registers a teardown command; its failure is reported, not fatal
// (the other teardowns must still run).
func undo(t *testing.T, name string, args ...string) {
	t.Cleanup(func() {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Errorf("teardown: %s %s: %v: %s", name, strings.Join(args, " "), err, out)
		}
	})
}

// freeSubnet picks a 10.213.X.0/24 that no interface of the root
// namespace uses, starting from one derived from the pid.
func freeSubnet(t *testing.T, seq int) string {
	t.Helper()
	used := sh(t, "ip", "-o", "-4", "addr", "show")
	start := (os.Getpid()*7 + seq) % 250
	for i := range 250 {
		x := (start+i)%250 + 1
		prefix := "10.213." + strconv.Itoa(x) + "."
		if !strings.Contains(used, " "+prefix) {
			return prefix
		}
	}
	t.Fatal("no free 10.213.X.0/24")
	return ""
}

// What the harness names: io<pid>-<seq> and a suffix (links and
// namespaces), the loop devices' files under a directory of orphanDirPrefix
// and the same io<pid>-<seq>.
var (
	orphanRE     = regexp.MustCompile(`^io([0-9a-f]+)-[0-9a-f]+[bnpv][0-9]*$`)
	orphanLoopRE = regexp.MustCompile(`^(/dev/loop[0-9]+): .*\((\S*/` + orphanDirPrefix + `io([0-9a-f]+)-[0-9a-f]+)/([^\s)]+)`)
)

const orphanDirPrefix = "ioprobe-netns-"

// sweepOrphans removes what a test process that died before its cleanup
// (a timeout's panic, a SIGKILL) left: its pid is gone. Its daemons died
// with it (Pdeathsig); its namespaces, links and loop devices stay
// until this finds them.
func sweepOrphans(t *testing.T) {
	t.Helper()
	deadPid := func(hexPid string) bool {
		pid, err := strconv.ParseInt(hexPid, 16, 64)
		if err != nil || int(pid) == os.Getpid() {
			return false
		}
		_, err = os.Stat(fmt.Sprintf("/proc/%d", pid))
		return os.IsNotExist(err)
	}
	dead := func(name string) bool {
		m := orphanRE.FindStringSubmatch(name)
		return m != nil && deadPid(m[1])
	}
	for _, line := range strings.Split(sh(t, "losetup", "-a"), "\n") {
		if m := orphanLoopRE.FindStringSubmatch(line); m != nil && deadPid(m[3]) {
			t.Logf("detaching %s of a test process that is gone", m[1])
			// Only if still over that file: another test process's sweep
			// may have detached it, and the name be another's by now.
			if err := testloop.Detach(m[1], filepath.Join(m[2], m[4])); err != nil {
				t.Logf("detach %s: %v", m[1], err)
			}
			_ = os.RemoveAll(m[2])
		}
	}
	for _, line := range strings.Split(sh(t, "ip", "netns", "list"), "\n") {
		if f := strings.Fields(line); len(f) > 0 && dead(f[0]) {
			t.Logf("removing namespace %s of a test process that is gone", f[0])
			_ = exec.Command("ip", "netns", "del", f[0]).Run()
		}
	}
	for _, line := range strings.Split(sh(t, "ip", "-o", "link", "show"), "\n") {
		// "7: iob3f-1b: <BROADCAST,…" or "9: iob3f-1v1@if8: …"
		if f := strings.Fields(line); len(f) > 1 {
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			if dead(name) {
				t.Logf("removing link %s of a test process that is gone", name)
				_ = exec.Command("ip", "link", "del", name).Run()
			}
		}
	}
}

// serveConfigFor is a daemon's config: its loop device as target data,
// writable (the device is the test's own, blank), no job that would run
// by itself (a daemon needs a job or a module: a /probe module nobody
// calls).
func serveConfigFor(dev string) string {
	return "global:\n  snapshot_interval: 500ms\ntargets:\n  data: {path: " + dev + ", allow_destructive: true}\n" +
		"modules:\n  idle: {profile: random-read, max_duration: 1s}\n"
}

// newNetFleet builds n hosts, each with a daemon listening on its own
// address with the admin API on, and registers their teardown.
func newNetFleet(t *testing.T, n int, devSize int64) *netFleet {
	t.Helper()
	needNetns(t)
	seq := int(fleetSeq.Add(1))
	sweepOrphans(t)
	// Interface names have at most 15 bytes: "io" + pid (hex, ≤6) + "-" +
	// seq (hex) + a suffix of 2 or 3.
	prefix := fmt.Sprintf("io%x-%x", os.Getpid(), seq)
	net := freeSubnet(t, seq)
	f := &netFleet{Bridge: prefix + "b", Subnet: net + "0/24"}
	// Root without the kernel's bridge (or in a container without
	// CAP_NET_ADMIN) cannot build the network: a skip, not a failure.
	if out, err := exec.Command("ip", "link", "add", f.Bridge, "type", "bridge").CombinedOutput(); err != nil {
		t.Skipf("cannot create a bridge: %v: %s", err, out) //hygiene:skip the kernel's bridge or the container's capabilities
	}
	undo(t, "ip", "link", "del", f.Bridge)
	sh(t, "ip", "addr", "add", net+"1/24", "dev", f.Bridge)
	sh(t, "ip", "link", "set", f.Bridge, "up")
	// The loop devices' files in a directory named like the links, so a
	// later run can tell whose they were; in memory (/dev/shm, which takes
	// direct I/O), so that the hosts' storage answers whatever the other
	// tests do to the machine's disk: a 500 ms point on a file in /tmp
	// completed no I/O while parallel tests ran mkfs on it, and a point
	// that measured nothing is an error.
	base := os.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	dir := filepath.Join(base, orphanDirPrefix+prefix)
	require.NoError(t, os.Mkdir(dir, 0o700))
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for i := 1; i <= n; i++ {
		h := &nsHost{Name: fmt.Sprintf("node%d", i), NS: fmt.Sprintf("%sn%d", prefix, i), Veth: fmt.Sprintf("%sv%d", prefix, i),
			IP: net + strconv.Itoa(10+i)}
		h.Addr = h.IP + ":" + apiPort
		peer := fmt.Sprintf("%sp%d", prefix, i)
		sh(t, "ip", "netns", "add", h.NS)
		undo(t, "ip", "netns", "del", h.NS)
		sh(t, "ip", "link", "add", h.Veth, "type", "veth", "peer", "name", peer)
		// Deleting the namespace destroys the peer and with it the pair;
		// deleting the bridge end first (reverse order) is the explicit way.
		undo(t, "ip", "link", "del", h.Veth)
		sh(t, "ip", "link", "set", peer, "netns", h.NS)
		sh(t, "ip", "link", "set", h.Veth, "master", f.Bridge)
		sh(t, "ip", "link", "set", h.Veth, "up")
		sh(t, "ip", "-n", h.NS, "addr", "add", h.IP+"/24", "dev", peer)
		sh(t, "ip", "-n", h.NS, "link", "set", peer, "up")
		sh(t, "ip", "-n", h.NS, "link", "set", "lo", "up")

		h.Dev = testloop.DeviceAt(t, filepath.Join(dir, h.Name+".img"), devSize) // detached at cleanup, after the daemon is gone
		h.Cfg = filepath.Join(dir, h.Name+".yaml")
		require.NoError(t, os.WriteFile(h.Cfg, []byte(serveConfigFor(h.Dev)), 0o644))
		// ip netns exec, unshare and sh each exec the next: the pid
		// started is the daemon's own, to kill and to find.
		cmd := exec.Command("ip", "netns", "exec", h.NS, "unshare", "--uts", "sh", "-c", `hostname "$0" && exec "$@"`,
			h.Name, binary, "serve", "--web.listen-address", h.Addr, "--web.enable-admin-api", "--config", h.Cfg)
		// Killed with the test process, should it die before its cleanup.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		h.daemon = superviseDaemon(t, cmd)
		require.Equal(t, h.Addr, h.daemon.addr)
		f.Hosts = append(f.Hosts, h)
	}
	return f
}

// Addrs are the hosts' addresses, as --hosts takes them.
func (f *netFleet) Addrs(hosts ...*nsHost) string {
	if hosts == nil {
		hosts = f.Hosts
	}
	var a []string
	for _, h := range hosts {
		a = append(a, h.Addr)
	}
	return strings.Join(a, ",")
}

// diskIOs is what the kernel counts for a block device: reads and writes
// completed (/sys/block/DEV/stat fields 1 and 5), the reference nobody on
// the team wrote.
type diskIOs struct{ Reads, Writes uint64 }

func deviceIOs(t *testing.T, dev string) diskIOs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "stat"))
	require.NoError(t, err)
	f := strings.Fields(string(b))
	require.GreaterOrEqual(t, len(f), 11, "%s", b)
	r, err := strconv.ParseUint(f[0], 10, 64)
	require.NoError(t, err)
	w, err := strconv.ParseUint(f[4], 10, 64)
	require.NoError(t, err)
	return diskIOs{Reads: r, Writes: w}
}
