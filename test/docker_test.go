package test

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// There is no Docker engine here: TestDockerBuildNamesItsVersion builds
// the way the Dockerfile's build stage does, with its own RUN command, in
// a copy of the build context that .dockerignore leaves (no .git), and
// checks what the image's binary would report in ioprobe_build_info.

// dockerBuildRun is the Dockerfile's build stage: the ARGs it declares
// and the RUN instruction that runs make build (continuation lines
// joined).
func dockerBuildRun(t *testing.T) (args []string, run string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	require.NoError(t, err)
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		l := sc.Text()
		for strings.HasSuffix(l, `\`) && sc.Scan() {
			l = strings.TrimSuffix(l, `\`) + "\n" + sc.Text()
		}
		lines = append(lines, l)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "FROM ") && len(args) > 0 {
			break // the next stage
		}
		if a, ok := strings.CutPrefix(l, "ARG "); ok {
			args = append(args, strings.TrimSpace(a))
		}
		if r, ok := strings.CutPrefix(l, "RUN "); ok && strings.Contains(r, "make build") {
			require.Empty(t, run, "two RUN instructions run make build")
			run = r
		}
	}
	require.NotEmpty(t, run, "the Dockerfile's build stage runs make build")
	return args, run
}

// dockerignore is a .dockerignore's matcher: Docker's rules as far as the
// file uses them (patterns rooted at the context, a leading / ignored, *
// and ? within one path element, ** across them, a match on a directory
// excluding what is under it, ! re-including).
type dockerignore []struct {
	re      *regexp.Regexp
	include bool
}

func loadDockerignore(t *testing.T) dockerignore {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", ".dockerignore"))
	require.NoError(t, err)
	var out dockerignore
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		include := strings.HasPrefix(l, "!")
		p := strings.Trim(strings.TrimPrefix(l, "!"), "/")
		var re strings.Builder
		for i := 0; i < len(p); i++ {
			switch {
			case strings.HasPrefix(p[i:], "**/"):
				re.WriteString(`(.*/)?`)
				i += 2
			case strings.HasPrefix(p[i:], "**"):
				re.WriteString(`.*`)
				i++
			case p[i] == '*':
				re.WriteString(`[^/]*`)
			case p[i] == '?':
				re.WriteString(`[^/]`)
			default:
				re.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		}
		out = append(out, struct {
			re      *regexp.Regexp
			include bool
		}{regexp.MustCompile(`^` + re.String() + `(/.*)?$`), include})
	}
	return out
}

// excludes says whether the context leaves out a slash-separated path.
func (d dockerignore) excludes(path string) bool {
	out := false
	for _, p := range d {
		if p.re.MatchString(path) {
			out = !p.include
		}
	}
	return out
}

// dockerContext copies what `docker build ..` would send into a new
// directory and returns it with the size sent.
func dockerContext(t *testing.T) (string, int64) {
	t.Helper()
	ignore := loadDockerignore(t)
	dst := t.TempDir()
	var size int64
	err := filepath.WalkDir("..", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel("..", path)
		if err != nil || rel == "." {
			return err
		}
		if ignore.excludes(filepath.ToSlash(rel)) {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case e.IsDir():
			return os.MkdirAll(target, 0o755)
		case e.Type().IsRegular():
			info, err := e.Info()
			if err != nil {
				return err
			}
			size += info.Size()
			return copyFile(path, target, info.Mode())
		}
		return nil // symlinks: none that the build needs
	})
	require.NoError(t, err)
	return dst, size
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// The context leaves out what the image does not need: .git (so the
// build cannot ask git for its version), build output, the root binary
// of a plain go build, local tools, node_modules.
func TestDockerContext(t *testing.T) {
	ignore := loadDockerignore(t)
	for _, p := range []string{".git", ".git/HEAD", "bin/ioprobe", "ioprobe", "ioprobe.dat", ".tools/prometheus3/prometheus",
		"test/grafana-schema/node_modules", "x.test"} {
		require.True(t, ignore.excludes(p), "the Docker context has %s", p)
	}
	for _, p := range []string{".version", "go.mod", "Makefile", "cmd/ioprobe/main.go", "internal/version/version.go",
		"cmd/ioprobe", "test/testdata/metrics.golden"} {
		require.False(t, ignore.excludes(p), "the Docker context lacks %s", p)
	}
}

// An image built from the Dockerfile names its build: with the build
// arguments make image passes, those; with none, the ones make wrote to
// .version; never "dev", although the context has no .git.
func TestDockerBuildNamesItsVersion(t *testing.T) {
	// It waits on three builds in its own copy and checks names, not speed.
	besideOthers(t)
	testdeps.Need(t, testdeps.Tool("make")) // the Dockerfile's build runs make build
	args, run := dockerBuildRun(t)
	require.Equal(t, []string{"VERSION", "REVISION"}, args, "the build stage's ARGs")

	// What make image passes, from git.
	out, err := exec.Command("make", "-s", "-C", "..", "-n", "image").CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := regexp.MustCompile(`docker build --build-arg VERSION=(\S+) --build-arg REVISION=(\S+) -t \S+:(\S+) \.`).FindStringSubmatch(string(out))
	require.NotNil(t, m, "make image runs docker build with VERSION and REVISION: %s", out)
	version, revision := m[1], m[2]
	require.Equal(t, version, m[3], "the image is tagged with its version")
	require.NotEqual(t, "dev", version, "git names this tree")
	require.Regexp(t, `^[0-9a-f]{40}$`, revision)

	ctx, size := dockerContext(t)
	t.Logf("Docker context: %.1f MB", float64(size)/1e6)
	_, err = os.Stat(filepath.Join(ctx, ".git"))
	require.True(t, os.IsNotExist(err))
	// The .version make writes beside the Dockerfile (here into the copy).
	out, err = exec.Command("make", "-s", "-C", "..", "version-file", "VERSION_FILE="+filepath.Join(ctx, ".version")).CombinedOutput()
	require.NoError(t, err, "%s", out)

	for _, c := range []struct {
		name               string
		env                []string
		version, revision  string
		withoutVersionFile bool
	}{
		// In this order: make build, which the RUN runs, writes .version
		// again, with what it was given.
		{name: "from .version", version: version, revision: revision},
		{name: "build arguments", env: []string{"VERSION=v9.8.7-test", "REVISION=0123456789abcdef"}, version: "v9.8.7-test", revision: "0123456789abcdef"},
		{name: "neither", withoutVersionFile: true, version: "dev", revision: "unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.withoutVersionFile {
				require.NoError(t, os.Remove(filepath.Join(ctx, ".version")))
			}
			cmd := exec.Command("sh", "-c", run)
			cmd.Dir = ctx
			// The build stage's environment: ARGs are set only when given.
			env := []string{}
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "VERSION=") && !strings.HasPrefix(kv, "REVISION=") && !strings.HasPrefix(kv, "MAKEFLAGS=") {
					env = append(env, kv)
				}
			}
			cmd.Env = append(env, c.env...)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s\n%s", run, out)
			bin := filepath.Join(ctx, "bin", "ioprobe")
			o := runCmd(t, exec.Command(bin, "version"))
			require.Equal(t, 0, o.code, o.stderr)
			require.True(t, strings.HasPrefix(o.stdout, "ioprobe "+c.version+" (revision "+c.revision+","), o.stdout)
			if c.withoutVersionFile {
				return
			}
			// ioprobe_build_info says the same.
			dir := t.TempDir()
			cfg := filepath.Join(dir, "ioprobe.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte("targets:\n  data: {path: "+dir+"/p.dat, size: 8MiB}\nmodules:\n  m: {profile: random-read}\n"), 0o644))
			d := startDaemonAs(t, bin, nil, "--config", cfg)
			require.Regexp(t, `(?m)^ioprobe_build_info\{[^}]*revision="`+regexp.QuoteMeta(c.revision)+`"[^}]*version="`+regexp.QuoteMeta(c.version)+`"\} 1$`,
				fetch(t, "http://"+d.addr+"/metrics"))
		})
	}
}
