package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// What the daemon's config may be, and what errors about it, a job file
// or an included file say: the line and the key, never the text of a line
// that is no known key.

// secretLine is the first line of a shadow file, as a config path that is
// a symlink to one would make the daemon read it.
const secretLine = "root:$6$Zq8s3cretSalt$TopSecretHashValue0123456789:19000:0:99999:7:::"

// TestInputsConfigSymlinkToSecretNotQuoted: the config is a symlink;
// repointed to a 0600 file that is no config, POST /-/reload fails naming
// the file and the line, and neither the answer nor the log holds the
// file's text.
func TestInputsConfigSymlinkToSecretNotQuoted(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.yaml")
	require.NoError(t, os.WriteFile(real, fmt.Appendf(nil, "targets:\n  data: {path: %s, size: 8MiB}\nmodules:\n  quick: {profile: random-read, max_duration: 1s}\n", filepath.Join(dir, "probe.dat")), 0o600))
	shadow := filepath.Join(dir, "shadow")
	require.NoError(t, os.WriteFile(shadow, []byte(secretLine+"\ndaemon:*:19000:0:99999:7:::\n"), 0o600))
	link := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.Symlink(real, link))
	d := startDaemon(t, "--config", link, "--web.enable-lifecycle")

	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(shadow, link))
	resp, err := http.Post("http://"+d.addr+"/-/reload", "", nil)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, string(body))
	require.Contains(t, string(body), link+":1: unknown key (its text is not shown: it is no known key)")
	require.Contains(t, string(body), link+":2: unknown key")
	// The daemon logs the failure before it answers; the log reaches the
	// test through a pipe and a copying goroutine, so it is waited for.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, d.log(), "unknown key")
	}, time.Minute, 10*time.Millisecond, "the reload's failure in the daemon's log")
	for _, part := range []string{"s3cret", "TopSecretHashValue", "root:", "daemon:*"} {
		require.NotContains(t, string(body), part)
		require.NotContains(t, d.log(), part)
	}
	require.Contains(t, fetch(t, "http://"+d.addr+"/metrics"), "ioprobe_config_last_reload_successful 0")
}

// TestInputsJobFileLinesNotQuoted: a job file that includes the same
// secret through a symlink is refused naming the file and the line, not
// its text; so is a job file that is the secret itself.
func TestInputsJobFileLinesNotQuoted(t *testing.T) {
	dir := t.TempDir()
	shadow := filepath.Join(dir, "shadow")
	require.NoError(t, os.WriteFile(shadow, []byte(secretLine+"\n"), 0o600))
	require.NoError(t, os.Symlink(shadow, filepath.Join(dir, "common.inc")))
	job := filepath.Join(dir, "job.fio")
	require.NoError(t, os.WriteFile(job, []byte("[j]\nrw=randread\nbs=4k\ninclude common.inc\n"), 0o600))
	for _, f := range []string{job, shadow} {
		o := ioprobe(t, dir, "run", "--fio-job", f, "--target", filepath.Join(dir, "t.dat"), "--dry-run")
		require.Equal(t, 2, o.code, o.stderr)
		require.Contains(t, o.stderr, ":1: ")
		require.Contains(t, o.stderr, "the line's text is not shown")
		require.NotContains(t, o.stderr, "s3cret")
		require.NotContains(t, o.stderr, "root:")
	}
}

// configMapLayout writes the files of a Kubernetes ConfigMap volume in
// dir, as the kubelet's atomic writer does: the data in a timestamped
// directory, ..data a symlink to it, each key a symlink through ..data.
func configMapLayout(t *testing.T, dir, config string) string {
	t.Helper()
	ts := filepath.Join(dir, "..2026_11_29_04_00_00.123456789")
	require.NoError(t, os.Mkdir(ts, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ts, "ioprobe.yaml"), []byte(config), 0o644))
	require.NoError(t, os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data")))
	link := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.Symlink("..data/ioprobe.yaml", link))
	return link
}

// TestInputsConfigOthersCanWriteRefused: a config in a directory its
// group or every user can write (not sticky), or a config file others
// can write, is refused with the shared-directory rule, exit 2; a sticky
// directory (as /tmp) and the ConfigMap layout are accepted; so is that
// layout on a read-only mount whose top directory is 0777, as the
// kubelet makes it.
func TestInputsConfigOthersCanWriteRefused(t *testing.T) {
	testdeps.Need(t, testdeps.Root)
	dir := t.TempDir()
	cfg := fmt.Sprintf("targets:\n  data: {path: %s, size: 8MiB}\nmodules:\n  quick: {profile: random-read, max_duration: 1s}\n", filepath.Join(dir, "probe.dat"))
	conf := filepath.Join(dir, "conf")
	require.NoError(t, os.Mkdir(conf, 0o755))
	file := filepath.Join(conf, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(file, []byte(cfg), 0o644))

	check := func(want int) string {
		t.Helper()
		o := ioprobe(t, dir, "serve", "--config.check", file)
		require.Equal(t, want, o.code, o.stderr)
		return o.stderr
	}
	check(0)
	for mode, why := range map[os.FileMode]string{0o777: "is writable by every user (mode 0777, not sticky)", 0o775: "is writable by the users of group 0 (mode 0775, not sticky)"} {
		require.NoError(t, os.Chmod(conf, mode))
		require.Equal(t, "ioprobe: config file "+file+" is refused: its directory "+conf+" "+why+
			", who could change what this daemon runs and writes; make it writable only by root or the daemon's user (chmod go-w, chown) (rule shared-directory)\n", check(2))
	}
	require.NoError(t, os.Chmod(conf, os.ModeSticky|0o777))
	check(0)
	require.NoError(t, os.Chmod(file, 0o666))
	require.Contains(t, check(2), "config file "+file+" is refused: is writable by every user (mode 0666, not sticky)")
	require.NoError(t, os.Chmod(file, 0o644))
	require.NoError(t, os.Chown(file, 65534, 65534))
	require.Contains(t, check(2), "config file "+file+" is refused: belongs to another user (uid 65534)")

	// The ConfigMap as the kubelet lays it out, from the shipped one.
	b, err := os.ReadFile("../configs/kubernetes/configmap.yaml")
	require.NoError(t, err)
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	require.NoError(t, yaml.Unmarshal(b, &cm))
	inner := strings.ReplaceAll(cm.Data["ioprobe.yaml"], "path: /data/", "path: "+dir+"/")
	vol := filepath.Join(dir, "configmap")
	require.NoError(t, os.Mkdir(vol, 0o755))
	link := configMapLayout(t, vol, inner)
	o := ioprobe(t, dir, "serve", "--config.check", link)
	require.Equal(t, 0, o.code, o.stderr)

	// The same on a read-only tmpfs whose top directory is 0777.
	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o755))
	run(t, "mount", "-t", "tmpfs", "-o", "size=1m,mode=0777", "ioprobe-configmap", ro)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", ro).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", ro, err, out)
		}
	})
	link = configMapLayout(t, ro, inner)
	o = ioprobe(t, dir, "serve", "--config.check", link)
	require.Equal(t, 2, o.code, "writable and 0777: refused\n%s", o.stderr)
	require.Contains(t, o.stderr, "its directory "+ro+" is writable by every user (mode 0777, not sticky)")
	run(t, "mount", "-o", "remount,ro", ro)
	o = ioprobe(t, dir, "serve", "--config.check", link)
	require.Equal(t, 0, o.code, "read-only: nobody can change it\n%s", o.stderr)
}

// TestInputsEnvNotRecorded: ${VAR} in a job file is expanded for the run
// (as fio does) and recorded as written in every output: the variable's
// value is in none of them.
func TestInputsEnvNotRecorded(t *testing.T) {
	besideOthers(t)
	const secret = "tok-5f3a9c1e-not-for-sharing"
	dir := t.TempDir()
	job := filepath.Join(dir, "job.fio")
	require.NoError(t, os.WriteFile(job, []byte("[global]\ndescription=${IOPROBE_TEST_SECRET}\n[j]\nname=${IOPROBE_TEST_SECRET}\nrw=randread\nbs=4k\nsize=4m\niodepth=2\nioengine=psync\ntime_based\nruntime=1\n"), 0o600))
	for _, output := range []string{"json", "fio-json", "text", "csv"} {
		cmd := exec.Command(binary, "run", "--fio-job", job, "--target", filepath.Join(dir, "t.dat"), "--output", output)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "IOPROBE_TEST_SECRET="+secret)
		o := runCmd(t, cmd)
		require.Equal(t, 0, o.code, o.stderr)
		require.Falsef(t, strings.Contains(o.stdout+o.stderr, secret), "the %s output holds the variable's value", output)
		if output == "json" {
			require.Contains(t, o.stdout, "${IOPROBE_TEST_SECRET}", "recorded as written")
			var v any
			require.NoError(t, json.Unmarshal([]byte(o.stdout), &v))
		}
	}
}
