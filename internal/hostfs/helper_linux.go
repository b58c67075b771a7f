package hostfs

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// A thread stuck in the kernel holds up the end of its process: Linux
// tells the parent that a process ended only once its last thread has,
// and a FUSE request its daemon has read waits uninterruptibly, even for
// SIGKILL. A deadline frees the caller of such a call, not the process:
// ioprobe would print its refusal and its result, and then not exit until
// the filesystem answered. So, where the binary can serve them
// (UseHelper), the calls that may wait on another filesystem (LoopStatus,
// Stat) run in a helper process instead: a copy of ioprobe started once,
// on the first such call, that answers requests on its standard input,
// each on a goroutine of its own. A request that never answers holds the
// helper, not ioprobe, which ends when it means to; the helper ends when
// its input does (ioprobe exited), or, stuck, once the kernel lets it go.
// The helper is in a process group of its own (a Ctrl-C for ioprobe is
// not one for it) and its output goes nowhere but back to ioprobe.

// helperEnv, set in the helper's environment, makes the binary serve
// (ServeHelper) instead of running its command line.
const helperEnv = "IOPROBE_HOSTFS_HELPER"

// maxHelperLine bounds a request or an answer.
const maxHelperLine = 64 << 10

type helperRequest struct {
	ID   uint64 `json:"id"`
	Op   string `json:"op"` // "loop": LOOP_GET_STATUS64 of the device node Path; "stat"; "file" (FileInfo)
	Path string `json:"path"`
}

type helperAnswer struct {
	ID   uint64 `json:"id"`
	Dev  uint64 `json:"dev,omitempty"`
	Ino  uint64 `json:"ino,omitempty"`
	Rdev uint64 `json:"rdev,omitempty"`
	Mode uint32 `json:"mode,omitempty"`
	Size int64  `json:"size,omitempty"`
	Off  uint64 `json:"off,omitempty"`
	Lim  uint64 `json:"lim,omitempty"`
	// "file" (FileInfo): st_blocks, the extent count, statfs's type and
	// block size.
	Blocks  int64  `json:"blocks,omitempty"`
	Extents int64  `json:"extents,omitempty"`
	FSType  int64  `json:"fs_type,omitempty"`
	FSBlock int64  `json:"fs_block,omitempty"`
	MountID int    `json:"mnt_id,omitempty"`
	Errno   int    `json:"errno,omitempty"`
	Err     string `json:"err,omitempty"`
}

func (a helperAnswer) error() error {
	switch {
	case a.Errno != 0:
		return syscall.Errno(a.Errno)
	case a.Err != "":
		return errors.New(a.Err)
	}
	return nil
}

// ServeHelper serves hostfs's requests on standard input when this
// process was started as the helper, and says so: the caller then exits
// with status 0 without running its command line. Call it first in main.
func ServeHelper() bool {
	if os.Getenv(helperEnv) != "1" {
		return false
	}
	serveHelper(os.Stdin, os.Stdout)
	return true
}

func serveHelper(in io.Reader, out io.Writer) {
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 4096), maxHelperLine)
	for sc.Scan() {
		var req helperRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return // not ioprobe talking: stop
		}
		go func() {
			a := answerRequest(req)
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(a)
		}()
	}
}

// answerRequest makes the system call a request asks for.
func answerRequest(req helperRequest) helperAnswer {
	a := helperAnswer{ID: req.ID}
	fail := func(err error) helperAnswer {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			a.Errno = int(errno)
		} else {
			a.Err = err.Error()
		}
		return a
	}
	switch req.Op {
	case "loop":
		b, err := loopStatusHere(req.Path)
		if err != nil {
			return fail(err)
		}
		a.Dev, a.Ino, a.Rdev, a.Off, a.Lim = b.Dev, b.Ino, b.Rdev, b.Offset, b.Limit
	case "stat":
		var st unix.Stat_t
		if err := unix.Stat(req.Path, &st); err != nil {
			return fail(err)
		}
		a.Dev, a.Ino, a.Rdev, a.Mode, a.Size = st.Dev, st.Ino, st.Rdev, st.Mode, st.Size
	case "file":
		fi, err := fileInfoHere(req.Path)
		if err != nil {
			return fail(err)
		}
		a.Dev, a.Ino, a.Rdev, a.Mode, a.Size = fi.Dev, fi.Ino, fi.Rdev, fi.Mode, fi.Size
		a.Blocks, a.Extents, a.FSType, a.FSBlock, a.MountID = fi.Blocks, fi.Extents, fi.FSType, fi.FSBlock, fi.MountID
	default:
		return fail(fmt.Errorf("unknown request %q", req.Op))
	}
	return a
}

// helperExe is the binary UseHelper starts; nil: calls run in-process.
var helperExe atomic.Pointer[string]

// UseHelper makes the calls that may wait on another filesystem run in a
// helper process started from exe ("/proc/self/exe": this very binary,
// whose main calls ServeHelper first). Without it (tests of other
// packages) they run on goroutines of this process.
func UseHelper(exe string) { helperExe.Store(&exe) }

// helper is the running helper process; replaced when it ends.
var (
	helperMu  sync.Mutex
	helperCur *helperProc
)

type helperProc struct {
	pid     int
	mu      sync.Mutex
	in      io.WriteCloser
	next    uint64
	waiting map[uint64]chan helperAnswer
	ended   error // set once its output ended
}

// currentHelper is the helper process, started when there is none (or
// the last one ended); nil without UseHelper.
func currentHelper() (*helperProc, error) {
	exe := helperExe.Load()
	if exe == nil {
		return nil, nil
	}
	helperMu.Lock()
	defer helperMu.Unlock()
	if p := helperCur; p != nil {
		p.mu.Lock()
		ended := p.ended
		p.mu.Unlock()
		if ended == nil {
			return p, nil
		}
	}
	cmd := exec.Command(*exe)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the helper that asks the host's filesystems: %w", err)
	}
	p := &helperProc{pid: cmd.Process.Pid, in: in, waiting: map[uint64]chan helperAnswer{}}
	go p.read(out, cmd)
	helperCur = p
	return p, nil
}

// read delivers the helper's answers until its output ends, then fails
// the requests still waiting and reaps it.
func (p *helperProc) read(out io.Reader, cmd *exec.Cmd) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 4096), maxHelperLine)
	for sc.Scan() {
		var a helperAnswer
		if json.Unmarshal(sc.Bytes(), &a) != nil {
			continue
		}
		p.mu.Lock()
		ch := p.waiting[a.ID]
		delete(p.waiting, a.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- a
		}
	}
	err := sc.Err()
	if err == nil {
		err = io.EOF
	}
	p.mu.Lock()
	p.ended = fmt.Errorf("the helper that asks the host's filesystems ended: %w", err)
	for id, ch := range p.waiting {
		ch <- helperAnswer{ID: id, Err: p.ended.Error()}
		delete(p.waiting, id)
	}
	p.mu.Unlock()
	_ = p.in.Close()
	_ = cmd.Wait()
}

// call asks the helper and waits for its answer, however long that takes
// (Do bounds the caller's wait, and keeps one call per object).
func (p *helperProc) call(op, path string) (helperAnswer, error) {
	ch := make(chan helperAnswer, 1)
	p.mu.Lock()
	if p.ended != nil {
		err := p.ended
		p.mu.Unlock()
		return helperAnswer{}, err
	}
	p.next++
	req := helperRequest{ID: p.next, Op: op, Path: path}
	p.waiting[req.ID] = ch
	b, _ := json.Marshal(req)
	_, err := p.in.Write(append(b, '\n'))
	if err != nil {
		delete(p.waiting, req.ID)
	}
	p.mu.Unlock()
	if err != nil {
		return helperAnswer{}, fmt.Errorf("ask the helper that asks the host's filesystems: %w", err)
	}
	a := <-ch
	return a, a.error()
}

// viaHelper runs op on path in the helper when there is one: ok false
// means there is none, and the caller makes the call itself.
func viaHelper(op, path string) (a helperAnswer, ok bool, err error) {
	p, err := currentHelper()
	if err != nil {
		return a, true, err
	}
	if p == nil {
		return a, false, nil
	}
	a, err = p.call(op, path)
	return a, true, err
}
