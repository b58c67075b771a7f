package engine_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// fake is an engine whose availability and suitability tests choose.
type fake struct {
	name     string
	avail    error
	unsuited map[int]error // by fd
}

func (f *fake) Name() workload.EngineName { return workload.EngineName(f.name) }
func (f *fake) Available() error          { return f.avail }
func (f *fake) Run(*engine.Worker) error  { return nil }
func (f *fake) Describe() string          { return f.name + " set up" }
func (f *fake) Suits(fd int) error        { return f.unsuited[fd] }
func plain(name string) *plainEngine      { return &plainEngine{name} }

type plainEngine struct{ name string }

func (p *plainEngine) Name() workload.EngineName { return workload.EngineName(p.name) }
func (p *plainEngine) Available() error          { return nil }
func (p *plainEngine) Run(*engine.Worker) error  { return nil }

func TestResolveAuto(t *testing.T) {
	ring := &fake{name: "ring", unsuited: map[int]error{7: errors.New("no nowait")}}
	reg := engine.NewRegistry(ring, plain("sync"))
	targets := []engine.Target{{FD: 3, Path: "/dev/a"}, {FD: 7, Path: "/dev/b"}}

	e, why, err := reg.Resolve("auto")
	require.NoError(t, err)
	require.Equal(t, workload.EngineName("ring"), e.Name())
	require.Equal(t, "ring is available (ring set up)", why)

	e, why, err = reg.ResolveFor("auto", targets[:1])
	require.NoError(t, err)
	require.Equal(t, workload.EngineName("ring"), e.Name())
	require.Equal(t, "ring is available (ring set up)", why)

	e, why, err = reg.ResolveFor("", targets)
	require.NoError(t, err)
	require.Equal(t, workload.EngineName("sync"), e.Name())
	require.Equal(t, "ring passed over: /dev/b: no nowait; using sync", why)

	// Asked for by name, it runs, and the reason warns.
	e, why, err = reg.ResolveFor("ring", targets)
	require.NoError(t, err)
	require.Equal(t, workload.EngineName("ring"), e.Name())
	require.Equal(t, "requested; beware: /dev/b: no nowait", why)

	// Unavailable engines are skipped as before.
	ring.avail = errors.New("ENOSYS")
	e, why, err = reg.ResolveFor("auto", targets)
	require.NoError(t, err)
	require.Equal(t, workload.EngineName("sync"), e.Name())
	require.Equal(t, "ring unavailable: ENOSYS; using sync", why)
	_, _, err = reg.ResolveFor("ring", targets)
	require.ErrorContains(t, err, "engine ring cannot run here: ENOSYS")
}

func TestResolveAutoFallsBackToAnUnsuitedEngine(t *testing.T) {
	ring := &fake{name: "ring", unsuited: map[int]error{7: errors.New("no nowait")}}
	down := &fake{name: "down", avail: errors.New("not here")}
	reg := engine.NewRegistry(ring, down)
	e, why, err := reg.ResolveFor("auto", []engine.Target{{FD: 7, Index: 2}})
	require.NoError(t, err)
	require.Equal(t, workload.EngineName("ring"), e.Name())
	require.Equal(t, "ring passed over: target 2: no nowait; down unavailable: not here; using ring all the same: no other engine is available", why)

	_, _, err = engine.NewRegistry(down).ResolveFor("auto", nil)
	require.ErrorContains(t, err, "no engine can run here: down unavailable: not here")
	_, _, err = reg.Resolve("aio")
	require.ErrorContains(t, err, `unknown engine "aio" (known: auto, down, ring)`)
}
