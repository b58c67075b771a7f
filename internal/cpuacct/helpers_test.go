package cpuacct

import "path/filepath"

func fixtureReader(name string) Reader {
	root := filepath.Join("testdata", "hosts", name)
	return Reader{ProcRoot: filepath.Join(root, "proc"), SysRoot: filepath.Join(root, "sys")}
}
