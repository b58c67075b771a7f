package hostfs

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The test binary serves as its own helper, as ioprobe's main does.
func TestMain(m *testing.M) {
	if ServeHelper() {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The protocol, without a process: answers come back by id, errors as
// the errno they were.
func TestServeHelperAnswers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, []byte("abc"), 0o600))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { serveHelper(inR, outW); outW.Close() }()
	enc := json.NewEncoder(inW)
	require.NoError(t, enc.Encode(helperRequest{ID: 7, Op: "stat", Path: file}))
	require.NoError(t, enc.Encode(helperRequest{ID: 8, Op: "stat", Path: file + ".gone"}))
	require.NoError(t, enc.Encode(helperRequest{ID: 9, Op: "loop", Path: "/dev/null"}))
	require.NoError(t, enc.Encode(helperRequest{ID: 10, Op: "rm -rf"}))
	got := map[uint64]helperAnswer{}
	dec := json.NewDecoder(outR)
	for range 4 {
		var a helperAnswer
		require.NoError(t, dec.Decode(&a))
		got[a.ID] = a
	}
	inW.Close()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(file, &st))
	require.Equal(t, st.Ino, got[7].Ino)
	require.EqualValues(t, 3, got[7].Size)
	require.NoError(t, got[7].error())
	require.ErrorIs(t, got[8].error(), fs.ErrNotExist)
	require.ErrorIs(t, got[9].error(), syscall.ENOTTY, "LOOP_GET_STATUS64 of what is no loop device")
	require.ErrorContains(t, got[10].error(), `unknown request "rm -rf"`)
}

// Through a real helper process: the same answers as in-process; a
// helper that dies fails what it was asked, and the next call starts
// another.
func TestHelperProcess(t *testing.T) {
	useTestHelper(t)
	h := &Host{Calls: NewCalls(8), Deadline: time.Minute}
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	var want unix.Stat_t
	require.NoError(t, unix.Stat(file, &want))
	st, err := h.Stat(context.Background(), file, file)
	require.NoError(t, err)
	require.Equal(t, want.Ino, st.Ino)
	require.Equal(t, want.Dev, st.Dev)
	require.Equal(t, want.Mode, st.Mode)
	_, err = h.Stat(context.Background(), file+".gone", file+".gone")
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = h.LoopStatus(context.Background(), Loop{Name: "null"}, "/dev/null", nil)
	require.ErrorIs(t, err, syscall.ENOTTY)

	helperMu.Lock()
	first := helperCur
	helperMu.Unlock()
	require.NotNil(t, first)
	require.NotEqual(t, os.Getpid(), first.pid)
	require.NoError(t, syscall.Kill(first.pid, syscall.SIGKILL)) // ours, by its pid
	require.Eventually(t, func() bool {
		first.mu.Lock()
		defer first.mu.Unlock()
		return first.ended != nil
	}, 30*time.Second, time.Millisecond)
	st, err = h.Stat(context.Background(), file, file)
	require.NoError(t, err)
	require.Equal(t, want.Ino, st.Ino)
	helperMu.Lock()
	require.NotSame(t, first, helperCur, "a new helper")
	helperMu.Unlock()
}
