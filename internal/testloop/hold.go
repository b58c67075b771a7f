package testloop

import (
	"bufio"
	"os/exec"
	"syscall"
	"testing"
)

// Hold starts cmd, a process that holds a device (open for writing, under
// a lock) and prints "ready" once it does, in a process group of its own;
// it returns the process's pid after "ready", and kills the group when the
// test ends.
func Hold(t testing.TB, cmd *exec.Cmd) int {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("%s did not get ready: %q, %v", cmd, line, err)
	}
	return pid
}
