package cpuacct

import (
	"bytes"
	"path/filepath"

	"github.com/ioprobe/ioprobe/internal/hostfs"
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
	b, err := hostfs.ReadFile(r.proc("stat"), hostfs.LimitTable)
	if err != nil {
		return Stat{}, err
	}
	return parseStat(bytes.NewReader(b))
}
