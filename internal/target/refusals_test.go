package target

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docRefusal is one entry of a docs' list: the id and its override
// ("none" when nothing overrides it).
type docRefusal struct{ id, override string }

func codeRefusals() []docRefusal {
	var out []docRefusal
	for _, r := range Refusals {
		o := r.Override
		if o == "" {
			o = "none"
		}
		out = append(out, docRefusal{string(r.ID), o})
	}
	return out
}

var (
	readmeItem = regexp.MustCompile("^- `([a-z0-9-]+)`: ")
	tableRow   = regexp.MustCompile("^\\| `([a-z0-9-]+)` \\|.*\\| (`[^`]+`|none) \\|$")
)

// section is the text under the level-2 heading title, up to the next one.
func section(t *testing.T, text, title string) string {
	t.Helper()
	_, sec, ok := strings.Cut(text, "\n## "+title+"\n")
	require.True(t, ok, "no section %q", title)
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	return sec
}

// readmeRefusals parses README's "Safety" section: one bullet per refusal,
// "- `id`: ... Overridden by `FLAG`." or "... Nothing overrides this."
func readmeRefusals(t *testing.T, text string) []docRefusal {
	t.Helper()
	sec := section(t, text, "Safety")
	var items []string
	for _, line := range strings.Split(sec, "\n") {
		switch {
		case strings.HasPrefix(line, "- "):
			items = append(items, line)
		case strings.HasPrefix(line, "  ") && len(items) > 0:
			items[len(items)-1] += " " + strings.TrimSpace(line)
		}
	}
	var out []docRefusal
	for _, it := range items {
		m := readmeItem.FindStringSubmatch(it)
		if m == nil {
			continue // a promise, not a refusal
		}
		over := regexp.MustCompile("Overridden by (`[^`]+`)\\.").FindAllStringSubmatch(it, -1)
		none := strings.Count(it, "Nothing overrides this.")
		switch {
		case len(over) == 1 && none == 0:
			out = append(out, docRefusal{m[1], strings.Trim(over[0][1], "`")})
		case len(over) == 0 && none == 1:
			out = append(out, docRefusal{m[1], "none"})
		default:
			t.Fatalf("README Safety: %q must say once either \"Overridden by `FLAG`.\" or \"Nothing overrides this.\"", it)
		}
	}
	return out
}

// outputRefusals parses the table of docs/output.md's "Refusals" section.
func outputRefusals(t *testing.T, text string) []docRefusal {
	t.Helper()
	sec := section(t, text, "Refusals")
	var out []docRefusal
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		m := tableRow.FindStringSubmatch(line)
		require.NotNil(t, m, "docs/output.md Refusals: a row must end with its override (`FLAG` or none): %q", line)
		out = append(out, docRefusal{m[1], strings.Trim(m[2], "`")})
	}
	return out
}

// README's Safety list and docs/output.md's Refusals table name exactly
// the refusals of the code, in its order, with the same overrides.
func TestRefusalListMatchesDocs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	output, err := os.ReadFile("../../docs/output.md")
	require.NoError(t, err)
	want := codeRefusals()
	require.Equal(t, want, readmeRefusals(t, string(readme)), "README.md \"Safety\" and target.Refusals disagree")
	require.Equal(t, want, outputRefusals(t, string(output)), "docs/output.md \"Refusals\" and target.Refusals disagree")
}

// The parsers above see a list that drifted: a test that cannot fail is a
// defect.
func TestRefusalListParsersSeeDrift(t *testing.T) {
	readme := "x\n## Safety\n\n- A promise.\n- `mounted`: writing to a\n  mounted device. Nothing overrides this.\n- `foreign-file`: writing. Overridden by\n  `--allow-destructive`.\n\n## Next\n- `other`: x. Nothing overrides this.\n"
	require.Equal(t, []docRefusal{{"mounted", "none"}, {"foreign-file", "--allow-destructive"}}, readmeRefusals(t, readme))
	output := "x\n## Refusals\n\n| id | a | b | override |\n| --- | --- | --- | --- |\n| `mounted` | x | y | none |\n| `foreign-file` | x | y \\| z | `--allow-destructive` |\n\n## Result\n| `other` | x | y | none |\n"
	require.Equal(t, []docRefusal{{"mounted", "none"}, {"foreign-file", "--allow-destructive"}}, outputRefusals(t, output))
}

// Every refusal the code makes carries an id from the list: SafetyError is
// made only by refusal(), every reason by because() with a RefusalID
// constant, and every id of the list is used somewhere.
func TestEveryRefusalHasAnID(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	declared := map[string]RefusalID{}
	for _, r := range Refusals {
		declared[string(r.ID)] = r.ID
	}
	consts := map[string]bool{} // names of the RefusalID constants
	used := map[string]bool{}   // their values, as because() uses them
	var problems []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, sp := range gd.Specs {
					vs := sp.(*ast.ValueSpec)
					if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "RefusalID" {
						for i, n := range vs.Names {
							lit := vs.Values[i].(*ast.BasicLit)
							consts[n.Name] = true
							if _, ok := declared[strings.Trim(lit.Value, `"`)]; !ok {
								problems = append(problems, n.Name+" is not in Refusals")
							}
						}
					}
				}
			}
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CompositeLit:
					if id, ok := x.Type.(*ast.Ident); ok && id.Name == "SafetyError" && fn.Name.Name != "refusal" {
						problems = append(problems, fset.Position(x.Pos()).String()+": a SafetyError made outside refusal(), without ids")
					}
					if id, ok := x.Type.(*ast.Ident); ok && id.Name == "finding" && fn.Name.Name != "because" {
						problems = append(problems, fset.Position(x.Pos()).String()+": a finding made outside because()")
					}
				case *ast.CallExpr:
					if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "because" {
						arg, ok := x.Args[0].(*ast.Ident)
						if !ok || !strings.HasPrefix(arg.Name, "Refuse") {
							problems = append(problems, fset.Position(x.Pos()).String()+": because() needs a Refuse… constant")
						} else {
							used[arg.Name] = true
						}
					}
				}
				return true
			})
		}
	}
	require.Len(t, consts, len(Refusals), "every entry of Refusals has its constant")
	for c := range consts {
		if !used[c] {
			problems = append(problems, c+" is listed but no code refuses with it")
		}
	}
	for u := range used {
		if !consts[u] {
			problems = append(problems, u+" is used but not declared")
		}
	}
	require.Empty(t, problems)
}
