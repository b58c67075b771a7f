package dashboards

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/dashboards/dashquery"
)

const repo = "../.."

// The committed grafana/ is what this code generates.
func TestGrafanaIsUpToDate(t *testing.T) {
	files, err := Files()
	require.NoError(t, err)
	stale, err := Stale(filepath.Join(repo, "grafana"), files)
	require.NoError(t, err)
	require.Empty(t, stale, "grafana/ is stale: run `make dashboards` (or `go generate ./internal/dashboards`) and commit the result")
}

func TestWriteRemovesWhatIsNoLongerGenerated(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "dashboards", "gone.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(old), 0o755))
	require.NoError(t, os.WriteFile(old, []byte("{}"), 0o644))
	keep := filepath.Join(dir, "README.md")
	require.NoError(t, os.WriteFile(keep, []byte("mine"), 0o644))
	require.NoError(t, Write(dir))
	_, err := os.Stat(old)
	require.True(t, os.IsNotExist(err), "a dashboard no longer generated is removed")
	_, err = os.Stat(keep)
	require.NoError(t, err, "files outside dashboards/ and provisioning/ are left alone")
	files, err := Files()
	require.NoError(t, err)
	stale, err := Stale(dir, files)
	require.NoError(t, err)
	require.Empty(t, stale)
}

func generated(t *testing.T) map[string]*dashquery.Dashboard {
	t.Helper()
	files, err := Files()
	require.NoError(t, err)
	out := map[string]*dashquery.Dashboard{}
	for name, b := range files {
		if !strings.HasPrefix(name, "dashboards/") {
			continue
		}
		d, err := dashquery.Parse(b)
		require.NoError(t, err, name)
		out[name] = d
	}
	require.Len(t, out, 3)
	return out
}

var (
	// a metric name or recording rule in an expression
	nameRE   = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	recordRE = regexp.MustCompile(`(?m)^\s*- record:\s*(\S+)`)
)

// exported is every series name of the exporter's contract (the golden
// file of the end-to-end test), histogram parts included.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "test", "testdata", "metrics.golden"))
	require.NoError(t, err)
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			out[f[0]] = true
			if f[1] == "histogram" {
				out[strings.TrimSuffix(f[0], "_bucket")] = true
			}
		}
	}
	return out
}

// Every query names only series the exporter exports or the recording
// rules record, and only variables its dashboard defines.
func TestQueriesUseTheContract(t *testing.T) {
	names := exported(t)
	rules, err := os.ReadFile(filepath.Join(repo, "configs", "prometheus", "rules.yml"))
	require.NoError(t, err)
	recorded := map[string]bool{}
	for _, m := range recordRE.FindAllStringSubmatch(string(rules), -1) {
		recorded[m[1]] = true
	}
	used := map[string]bool{}
	for file, d := range generated(t) {
		defined := map[string]bool{}
		for _, v := range d.Variables {
			defined[v.Name] = true
		}
		for _, want := range []string{"datasource", "instance", "target", "ioprobe_job"} {
			require.True(t, defined[want], "%s has no variable %s", file, want)
		}
		var exprs []string
		for _, p := range d.Panels {
			require.NotEmpty(t, p.Targets, "%s: panel %q has no query", file, p.Title)
			for _, tg := range p.Targets {
				require.NotEmpty(t, tg.RefID, "%s: %q", file, p.Title)
				exprs = append(exprs, tg.Expr)
			}
		}
		for _, a := range d.Annotations {
			exprs = append(exprs, a.Expr)
		}
		for _, v := range d.Variables {
			if v.Type == "query" {
				exprs = append(exprs, v.QueryString())
			}
		}
		for _, e := range exprs {
			for _, ref := range dashquery.References(e) {
				require.True(t, defined[ref], "%s: %s refers to $%s, which the dashboard does not define", file, e, ref)
			}
			for _, n := range nameRE.FindAllString(stripStrings(e), -1) {
				switch {
				case strings.Contains(n, ":"):
					require.True(t, recorded[n], "%s: %s reads %s, which configs/prometheus/rules.yml does not record", file, e, n)
					used[n] = true
				case strings.HasPrefix(n, "ioprobe_") && n != "ioprobe_job": // the label of that name aside
					require.True(t, names[n], "%s: %s reads %s, which the exporter does not export (test/testdata/metrics.golden)", file, e, n)
				}
			}
		}
	}
	require.NotEmpty(t, used, "the dashboards read recording rules")
}

// stripStrings drops PromQL string literals (label values, regexes).
func stripStrings(e string) string {
	return regexp.MustCompile(`"(?:[^"\\]|\\.)*"`).ReplaceAllString(e, `""`)
}

// Panels are numbered uniquely, every one reads the datasource variable,
// and docs/dashboards.md says what each one shows.
func TestPanelsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repo, "docs", "dashboards.md"))
	require.NoError(t, err)
	files, err := Files()
	require.NoError(t, err)
	var names []string
	for name := range files {
		if strings.HasPrefix(name, "dashboards/") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		var raw struct {
			Title  string
			Panels []struct {
				ID         int
				Type       string
				Title      string
				Datasource *struct{ UID string }
				Panels     []struct {
					ID         int
					Title      string
					Datasource *struct{ UID string }
				}
			}
		}
		require.NoError(t, json.Unmarshal(files[name], &raw))
		require.Contains(t, string(doc), raw.Title, "docs/dashboards.md does not mention the dashboard %s", raw.Title)
		ids := map[int]bool{}
		check := func(id int, title string, src *struct{ UID string }) {
			require.False(t, ids[id], "%s: id %d twice", name, id)
			ids[id] = true
			require.NotNil(t, src, "%s: %q has no data source", name, title)
			require.Equal(t, "${datasource}", src.UID, "%s: %q", name, title)
			require.Contains(t, string(doc), "| "+title+" |", "docs/dashboards.md has no row for the panel %q of %s", title, raw.Title)
		}
		for _, p := range raw.Panels {
			if p.Type == "row" {
				ids[p.ID] = true
				for _, c := range p.Panels {
					check(c.ID, c.Title, c.Datasource)
				}
				continue
			}
			check(p.ID, p.Title, p.Datasource)
		}
	}
}

// Characterization's tables have a cell per data size and pattern, which
// two hosts would fill twice: every panel is under a row repeated by the
// multi-valued instance, so that each repeat draws one host.
func TestCharacterizationDrawsOneHostPerRow(t *testing.T) {
	files, err := Files()
	require.NoError(t, err)
	var d struct {
		Panels []struct {
			Type   string `json:"type"`
			Title  string `json:"title"`
			Repeat string `json:"repeat"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Multi bool   `json:"multi"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(files["dashboards/ioprobe-characterization.json"], &d))
	require.NotEmpty(t, d.Panels)
	require.Equal(t, "row", d.Panels[0].Type, "the first panel is a row: none is outside the repeats")
	rows := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			rows++
			require.Equal(t, "instance", p.Repeat, "row %q", p.Title)
			require.Contains(t, p.Title, "$instance", "row %q names its host", p.Title)
		}
	}
	require.Equal(t, 3, rows)
	multi := false
	for _, v := range d.Templating.List {
		if v.Name == "instance" {
			multi = v.Multi
		}
	}
	require.True(t, multi, "instance is multi-valued")
}
