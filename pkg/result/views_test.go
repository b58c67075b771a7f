package result

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The outputs take every figure from the catalogue: none reads a figure's
// field of a summary itself (it would list the figure by hand, with its
// own label and unit, and a new figure would need it changed too). The
// code that measures, merges and derives the figures does read them, as
// does fio-json, which speaks fio's language field by field.
var outputPackages = map[string]func(file string) bool{
	"github.com/ioprobe/ioprobe/internal/report":   func(f string) bool { return !strings.HasPrefix(f, "fiojson") },
	"github.com/ioprobe/ioprobe/internal/exporter": func(string) bool { return true },
	"github.com/ioprobe/ioprobe/internal/cli":      func(string) bool { return true },
	"github.com/ioprobe/ioprobe/internal/fleet":    func(string) bool { return true },
	"github.com/ioprobe/ioprobe/pkg/result": func(f string) bool {
		return f == "compare.go" || f == "spread.go" || f == "views.go"
	},
}

// figureTypes are the summary's types whose number fields are figures.
var figureTypes = []string{"Summary", "Latency", "CPU", "DeviceStats", "SyncSummary"}

type listed struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
}

// goList lists pkgs and, with deps, their dependencies: their files for
// this platform and their compiled export data (built by the go command,
// from its cache once built).
func goList(t *testing.T, deps bool, pkgs []string) []listed {
	t.Helper()
	args := []string{"list", "-json=ImportPath,Dir,Export,GoFiles"}
	if deps {
		args = append(args, "-export", "-deps")
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var ps []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			return ps
		} else {
			require.NoError(t, err)
		}
		ps = append(ps, p)
	}
}

func TestNoOutputReadsAFigureByHand(t *testing.T) {
	var pkgs []string
	for p := range outputPackages {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	exports := map[string]string{}
	for _, p := range goList(t, true, pkgs) {
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, os.ErrNotExist
		}
		return os.Open(f)
	})
	const self = "github.com/ioprobe/ioprobe/pkg/result"
	reads := 0
	for _, p := range goList(t, false, pkgs) {
		var files []*ast.File
		for _, n := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, n), nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
		_, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info)
		require.NoError(t, err, p.ImportPath)
		for sel, s := range info.Selections {
			if s.Kind() != types.FieldVal {
				continue
			}
			named, ok := types.Unalias(derefType(s.Recv())).(*types.Named)
			if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != self || !isFigureType(named.Obj().Name()) {
				continue
			}
			if !isFigureField(s.Obj().Type()) {
				continue
			}
			reads++
			pos := fset.Position(sel.Pos())
			if outputPackages[p.ImportPath](filepath.Base(pos.Filename)) {
				t.Errorf("%s: reads %s.%s by hand: take it from the catalogue (result.Value(result.Fig…, s), a view of views.go)", pos, named.Obj().Name(), s.Obj().Name())
			}
		}
	}
	require.Positive(t, reads, "the check sees the code that may read figures (fio-json, the catalogue)")
}

func derefType(t types.Type) types.Type {
	if p, ok := t.(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

func isFigureType(name string) bool {
	for _, n := range figureTypes {
		if n == name {
			return true
		}
	}
	return false
}

// isFigureField says that a field holds a figure: a number, or the
// percentiles' map.
func isFigureField(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&types.IsNumeric != 0
	case *types.Map:
		b, ok := u.Elem().Underlying().(*types.Basic)
		return ok && b.Info()&types.IsFloat != 0
	}
	return false
}
