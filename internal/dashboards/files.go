package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
// (slash-separated): the dashboards under dashboards/ and the provisioning
// files under provisioning/.
func Files() (map[string][]byte, error) {
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
		out["dashboards/"+b.file] = buf.Bytes()
	}
	for name, content := range provisioning {
		out[name] = []byte(content)
	}
	return out, nil
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
