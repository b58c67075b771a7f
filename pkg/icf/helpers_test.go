package icf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// setup is a TEST SETUP section (Iometer 2006's layout) for a test type
// and its cycling lines ("start step TYPE", and "start end step TYPE"
// for the queue depth).
func setup(testType, workers, disks, queue string) string {
	return fmt.Sprintf(`Version 2006.07.27
'TEST SETUP ====================================================================
'Test Description
	generated
'Run Time
'	hours      minutes    seconds
	0          0          10
'Ramp Up Time (s)
	1
'Default Disk Workers to Spawn
	NUMBER_OF_CPUS
'Default Network Workers to Spawn
	0
'Record Results
	ALL
'Worker Cycling
'	start      step       step type
	%s
'Disk Cycling
'	start      step       step type
	%s
'Queue Depth Cycling
'	start      end        step       step type
	%s
'Test Type
	%s
'END test setup
`, workers, disks, queue, testType)
}

// specs is an ACCESS SPECIFICATIONS section of one-line specifications
// "name=size,share,reads,random,delay,burst,align,reply".
func specs(lines ...string) string {
	var b strings.Builder
	b.WriteString("'ACCESS SPECIFICATIONS =========================================================\n")
	for _, l := range lines {
		name, rest, _ := strings.Cut(l, "=")
		fmt.Fprintf(&b, "'Access specification name,default assignment\n\t%s,NONE\n'size,%% of size,%% reads,%% random,delay,burst,align,reply\n", name)
		for _, x := range strings.Split(rest, ";") {
			fmt.Fprintf(&b, "\t%s\n", x)
		}
	}
	b.WriteString("'END access specifications\n")
	return b.String()
}

// worker is a disk worker with its outstanding I/Os, assigned
// specifications and targets.
func worker(name string, qd int, assigned []string, targets ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "'Worker\n\t%s\n'Worker type\n\tDISK\n'Default target settings for worker\n"+
		"'Number of outstanding IOs,test connection rate,transactions per connection\n\t%d,DISABLED,1\n"+
		"'Disk maximum size,starting sector\n\t0,0\n'End default target settings for worker\n'Assigned access specs\n", name, qd)
	for _, a := range assigned {
		fmt.Fprintf(&b, "\t%s\n", a)
	}
	b.WriteString("'End assigned access specs\n'Target assignments\n")
	for _, t := range targets {
		fmt.Fprintf(&b, "'Target\n\t%s\n'Target type\n\tDISK\n'End target\n", t)
	}
	b.WriteString("'End target assignments\n'End worker\n")
	return b.String()
}

// managers is a MANAGER LIST of one manager with these workers.
func managers(workers ...string) string {
	return "'MANAGER LIST ==================================================================\n" +
		"'Manager ID, manager name\n\t1,PROBE\n'Manager network address\n\t\n" +
		strings.Join(workers, "") + "'End manager\n'END manager list\nVersion 2006.07.27\n"
}

// pointNames are the points' names in order.
func pointNames(pts []Point) []string {
	out := make([]string, len(pts))
	for i, p := range pts {
		out[i] = p.Name
	}
	return out
}

func parseFile(t *testing.T, name string) *Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	c, err := Parse(name, data, Options{})
	require.NoError(t, err)
	return c
}
