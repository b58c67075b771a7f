package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// boards lists every dashboard, by the file name it is written to.
var boards = []struct {
	file  string
	build func() (board, error)
}{
	{"ioprobe-overview.json", overview},
	{"ioprobe-characterization.json", characterization},
	{"ioprobe-comparison.json", comparison},
}

// Files returns every file of grafana/, by its path relative to grafana/
// (slash-separated): the dashboards under dashboards/, their selectors
// filled in with the mixin's default _config, and the provisioning files
// under provisioning/.
func Files() (map[string][]byte, error) {
	templates, err := dashboardTemplates()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for name, b := range templates {
		out["dashboards/"+name] = fillJSON(b)
	}
	for name, content := range provisioning {
		out[name] = []byte(content)
	}
	return out, nil
}

// dashboardTemplates returns every dashboard's JSON by file name, its
// queries naming the mixin's _config as %(name)s (dashboardSelector,
// ioprobeSelector): the mixin fills them with the user's _config, Files
// with the defaults.
func dashboardTemplates() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, b := range boards {
		def, err := b.build()
		if err != nil {
			return nil, err
		}
		d, err := def.build()
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // PromQL's > and & stay readable in the files
		if err := enc.Encode(d); err != nil {
			return nil, fmt.Errorf("%s: %w", b.file, err)
		}
		if err := checkConfigRefs(buf.Bytes()); err != nil {
			return nil, fmt.Errorf("%s: %w", b.file, err)
		}
		out[b.file] = buf.Bytes()
	}
	return out, nil
}

// queryFields are the dashboard fields that hold PromQL: the mixin formats
// these, and only these, with its _config.
var queryFields = map[string]bool{"expr": true, "query": true, "definition": true}

// checkConfigRefs makes sure that the mixin's formatting of a dashboard's
// query fields with _config is all that it needs: every %(name)s is in one
// of them and names a _config key, and they have no other % (jsonnet's
// format would take it for a directive).
func checkConfigRefs(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	inQueries := 0
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if str, ok := x.(string); ok && queryFields[k] {
					refs := configRef.FindAllStringSubmatch(str, -1)
					for _, r := range refs {
						if r[0] == "%%" {
							return fmt.Errorf("%s %q: a literal %% in a query", k, str)
						}
						configValue(r[1]) // panics on an unknown key
					}
					if strings.Count(str, "%") != len(refs) {
						return fmt.Errorf("%s %q: a %% that is not a _config reference", k, str)
					}
					inQueries += len(refs)
					continue
				}
				if err := walk(x); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(v); err != nil {
		return err
	}
	if all := len(configRef.FindAll(b, -1)); all != inQueries {
		return fmt.Errorf("%d _config references outside the query fields", all-inQueries)
	}
	return nil
}

// fillJSON fills a dashboard template's _config references with the
// defaults, as JSON string content.
func fillJSON(b []byte) []byte {
	return configRef.ReplaceAllFunc(b, func(m []byte) []byte {
		var v bytes.Buffer
		enc := json.NewEncoder(&v)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(configValue(string(configRef.FindSubmatch(m)[1]))); err != nil {
			panic(err) // a string
		}
		return bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSuffix(v.Bytes(), []byte("\n")), []byte(`"`)), []byte(`"`))
	})
}

// Write writes Files under dir and removes the files of dir/dashboards and
// dir/provisioning that Files no longer has.
func Write(dir string) error {
	files, err := Files()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	stale, err := Stale(dir, files)
	if err != nil {
		return err
	}
	for _, name := range stale {
		if _, generated := files[name]; !generated {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
				return err
			}
		}
	}
	return nil
}

// Stale compares dir with files: it returns the paths that differ, are
// missing, or exist under dir/dashboards or dir/provisioning without being
// generated.
func Stale(dir string, files map[string][]byte) ([]string, error) {
	var out []string
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if err != nil || !bytes.Equal(got, want) {
			out = append(out, name)
		}
	}
	for _, sub := range []string{"dashboards", "provisioning"} {
		root := filepath.Join(dir, sub)
		err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
			if os.IsNotExist(err) {
				return nil
			}
			if err != nil || e.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			if _, ok := files[filepath.ToSlash(rel)]; !ok {
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}
