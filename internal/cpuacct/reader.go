package cpuacct

import (
	"os"
	"path/filepath"
)

// Reader reads host CPU state from procfs and sysfs. The zero value reads
// the live /proc and /sys; set the roots to read a host's filesystems
// mounted elsewhere (a container given the host's /proc as /host/proc, as
// node_exporter's --path.procfs and --path.sysfs do) or test fixtures.
type Reader struct {
	ProcRoot string // default "/proc"
	SysRoot  string // default "/sys"
}

func (r Reader) proc(elem ...string) string {
	root := r.ProcRoot
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

func (r Reader) sys(elem ...string) string {
	root := r.SysRoot
	if root == "" {
		root = "/sys"
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// Stat reads the cpu lines of /proc/stat.
func (r Reader) Stat() (Stat, error) {
	f, err := os.Open(r.proc("stat"))
	if err != nil {
		return Stat{}, err
	}
	defer f.Close()
	return parseStat(f)
}
