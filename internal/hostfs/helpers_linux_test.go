package hostfs

import (
	"os"
	"testing"
)

// useTestHelper makes this test's calls go through a helper process (the
// test binary), undone when the test ends.
func useTestHelper(t *testing.T) {
	t.Helper()
	UseHelper(os.Args[0])
	t.Cleanup(func() {
		helperExe.Store(nil)
		helperMu.Lock()
		p := helperCur
		helperCur = nil
		helperMu.Unlock()
		if p != nil {
			_ = p.in.Close() // it ends when its input does
		}
	})
}
