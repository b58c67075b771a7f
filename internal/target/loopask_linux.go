package target

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// Asking a loop device what backs it makes the kernel stat its backing
// file, which waits for as long as that file's filesystem does not
// answer: a loop device over a file on a hung NFS server or a stuck FUSE
// daemon once held up every write run on the host, at open and before
// the first write, and the signal that should have ended it (issue 31).
// So a check lists the loop devices from sysfs, which asks no filesystem
// (name, backing file's name, offset, size limit), places each backing
// file's name in the mount table, and asks the kernel only about the loop
// devices that may matter to the target (loopScope):
//
//   - a file: those whose backing file lies on the target's filesystem (a
//     file on a filesystem whose device differs cannot be the target);
//   - a block device: the target itself and the loop devices it is a view
//     into, those whose backing may be a device node (any mount without
//     nodev: devtmpfs, the root filesystem), and those whose backing file
//     lies on the filesystem of a file the target is a view into.
//
// A name that the mount table cannot place (not absolute) is asked about.
// The calls run through hostfs with its deadline, all at once; one that
// does not answer in time fails the check closed, naming the loop device
// and the mount of its backing file. A name is the kernel's, from this
// process's root: the file of a loop device attached in another mount
// namespace, or on a mount since detached, is placed where its name
// points here; a wrong place means asking too much (a filesystem that
// does not answer then refuses writes it need not), or, for a name that
// leads to another filesystem of this namespace, not asking a loop device
// whose backing is the target — which needs the same filesystem mounted
// both inside that namespace under a name that is another filesystem's
// here, and is the price of not waiting on every filesystem of the host.

// loopScope says which attached loop devices a check asks what backs
// them. The zero scope (and nil) asks all of them.
type loopScope struct {
	all    bool            // ask every loop device
	fsDevs []hostfs.DevNum // filesystems whose files matter (mount table devices and st_dev)
	nodes  bool            // device nodes matter: ask those whose backing may be one
	self   []string        // always asked: the target and the loop devices it is a view into
}

func (s *loopScope) addDev(d hostfs.DevNum) bool {
	if slices.Contains(s.fsDevs, d) {
		return false
	}
	s.fsDevs = append(s.fsDevs, d)
	return true
}

func (s *loopScope) clone() *loopScope {
	if s == nil {
		return &loopScope{all: true}
	}
	c := *s
	c.fsDevs, c.self = slices.Clone(s.fsDevs), slices.Clone(s.self)
	return &c
}

// asks says whether loop device l must be asked what backs it.
func (s *loopScope) asks(l hostfs.Loop, ms hostfs.Mounts) bool {
	if s.all || slices.Contains(s.self, l.Name) {
		return true
	}
	under := ms.Under(l.BackingFile)
	if len(under) == 0 {
		return true // a name the mount table cannot place
	}
	for _, m := range under {
		if s.nodes && !m.HasOption("nodev") || slices.Contains(s.fsDevs, m.DevNum) {
			return true
		}
	}
	return false
}

// mayHold says whether the file named path may lie on a filesystem in
// the scope (a name the mount table cannot place may).
func (s *loopScope) mayHold(path string, ms hostfs.Mounts) bool {
	if s == nil || s.all {
		return true
	}
	under := ms.Under(path)
	if len(under) == 0 {
		return true
	}
	return slices.ContainsFunc(under, func(m hostfs.Mount) bool { return slices.Contains(s.fsDevs, m.DevNum) })
}

// fileScope is the scope of a check of the regular file open as fd (st,
// resolved path): the loop devices whose backing file lies on its
// filesystem, known by its st_dev, its mount's device (by mount id: a
// btrfs subvolume's st_dev is not its mount's) and the mounts its name
// lies under.
func fileScope(fd int, st *unix.Stat_t, resolved string, ms hostfs.Mounts) *loopScope {
	s := &loopScope{}
	s.addDev(hostfs.DevNumOf(st.Dev))
	var sx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &sx) == nil && sx.Mask&unix.STATX_MNT_ID != 0 {
		if m, ok := ms.ByID(int(sx.Mnt_id)); ok {
			s.addDev(m.DevNum)
		}
	}
	for _, m := range ms.Under(resolved) {
		s.addDev(m.DevNum)
	}
	return s
}

// blockScope is the scope of a check of block device dev.
func blockScope(dev string) *loopScope {
	return &loopScope{nodes: true, self: []string{dev}}
}

// widen adds to s what the loop devices asked so far (got) show of the
// target's chain: the next loop device down it (named from h's sysfs),
// and the filesystem of the file at its bottom. It says whether s grew.
func (s *loopScope) widen(h *hostfs.Host, got []loopDev, ms hostfs.Mounts) bool {
	if s.all || !s.nodes || len(s.self) == 0 {
		return false
	}
	grew := false
	cur := s.self[0]
	for depth := 0; depth < maxLoopDepth; depth++ {
		i := slices.IndexFunc(got, func(l loopDev) bool { return l.Name == cur })
		if i < 0 {
			if !slices.Contains(s.self, cur) {
				s.self = append(s.self, cur)
				grew = true
			}
			return grew
		}
		l := got[i]
		if l.backRdev == 0 {
			if l.backIno != 0 {
				grew = s.addDev(hostfs.DevNumOf(l.backDev)) || grew
			}
			for _, m := range ms.Under(strings.TrimSuffix(l.file, " (deleted)")) {
				grew = s.addDev(m.DevNum) || grew
			}
			return grew
		}
		d := hostfs.DevNumOf(l.backRdev)
		name, ok := h.BlockName(d)
		if !ok {
			return grew
		}
		cur = name
	}
	return grew
}

// loops lists the attached loop devices in e's scope and what backs each.
// It fails closed: a loop device in scope that it cannot ask, or that
// does not answer in time, is an error naming it and the mount of its
// backing file.
func (e env) loops() ([]loopDev, error) {
	h := e.host()
	ls, err := h.Loops()
	if err != nil {
		return nil, err
	}
	ms, err := e.mountTable()
	if err != nil {
		ms = nil // nothing can be placed: every loop device is asked
	}
	scope := e.scope.clone()
	asked := map[string]bool{}
	var out []loopDev
	for round := 0; round <= maxLoopDepth; round++ {
		var batch []hostfs.Loop
		for _, l := range ls {
			if !asked[l.Name] && scope.asks(l, ms) {
				asked[l.Name] = true
				batch = append(batch, l)
			}
		}
		if len(batch) > 0 {
			got, err := e.askLoops(batch, ms)
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		if !scope.widen(h, out, ms) {
			break
		}
	}
	return out, nil
}

// askLoops asks the loop devices of batch what backs them, all at once
// (each call waits for the deadline at most, not one after another). A
// loop device detached meanwhile is left out.
func (e env) askLoops(batch []hostfs.Loop, ms hostfs.Mounts) ([]loopDev, error) {
	type answer struct {
		l    loopDev
		gone bool
		err  error
	}
	answers := make([]answer, len(batch))
	var wg sync.WaitGroup
	for i, l := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &answers[i]
			a.l, a.gone, a.err = e.askLoop(l, ms)
		}()
	}
	wg.Wait()
	var out []loopDev
	var errs []string
	for _, a := range answers {
		switch {
		case a.err != nil:
			errs = append(errs, a.err.Error())
		case !a.gone:
			out = append(out, a.l)
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return out, nil
}

// askLoop asks loop device l what backs it (LOOP_GET_STATUS64, through
// hostfs with its deadline). Where ioprobe may not ask (it runs without
// root) or the kernel cannot stat the backing file because its FUSE
// daemon is gone (ENOTCONN: nothing on that filesystem can be opened
// again, so no target can be that file), the name sysfs gives is
// stat'ed instead (statBacking). gone: l was detached meanwhile.
func (e env) askLoop(l hostfs.Loop, ms hostfs.Mounts) (loopDev, bool, error) {
	bd := blockDev{Name: l.Name, Major: l.Dev.Major, Minor: l.Dev.Minor}
	out := loopDev{blockDev: bd, offset: l.Offset, sizelimit: l.SizeLimit, file: l.BackingFile}
	if l.Deleted {
		out.file += " (deleted)"
	}
	node, err := e.deviceNode(bd)
	if err != nil {
		return out, false, fmt.Errorf("cannot ask loop device %s what backs it: %w", l.Name, err)
	}
	b, err := e.host().LoopStatus(e.ctx(), l, node, ms)
	switch {
	case errors.Is(err, unix.ENXIO):
		return out, true, nil // detached since sysfs was read
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOTCONN):
		b, err = e.statBacking(l, ms)
	case err == nil:
		out.offset, out.sizelimit = b.Offset, b.Limit
	}
	if errors.Is(err, hostfs.ErrNoAnswer) {
		return out, false, err // it names the loop device and the mount
	}
	if err != nil {
		return out, false, fmt.Errorf("cannot ask loop device %s what backs it: %w", l.Name, err)
	}
	out.backDev, out.backIno, out.backRdev = b.Dev, b.Ino, b.Rdev
	return out, false, nil
}

// statBacking is what the name sysfs gives of loop device l's backing
// file says, stat'ed through hostfs with its deadline. A name that is
// gone ("(deleted)", or from another mount namespace) matches nothing:
// the loop device's contents live in a file no target can name. Only a
// deadline that passed or a wait that was stopped is an error.
func (e env) statBacking(l hostfs.Loop, ms hostfs.Mounts) (hostfs.LoopBacking, error) {
	b := hostfs.LoopBacking{Offset: l.Offset, Limit: l.SizeLimit}
	if l.Deleted {
		return b, nil
	}
	st, err := e.host().Stat(e.ctx(), l.BackingFile, l.Describe(ms))
	if err != nil {
		if errors.Is(err, hostfs.ErrNoAnswer) || e.ctx().Err() != nil {
			return b, err
		}
		return b, nil
	}
	b.Dev, b.Ino = st.Dev, st.Ino
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		b.Rdev = st.Rdev
	}
	return b, nil
}
