package test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testcert"
	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// TestRedteamConfigReadOnlyBindOfSharedDir: a read-only bind mount of a
// directory every user can write does not make the config in it one that
// nobody can change: the directory is still writable through its own
// name. The config is refused as if it were read there; the same bind of
// a directory only root can write passes.
func TestRedteamConfigReadOnlyBindOfSharedDir(t *testing.T) {
	testdeps.Need(t, testdeps.Root)
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.Mkdir(shared, 0o755))
	require.NoError(t, os.Chmod(shared, 0o777))
	cfg := fmt.Sprintf("targets:\n  data: {path: %s, size: 8MiB}\nmodules:\n  quick: {profile: random-read, max_duration: 1s}\n", filepath.Join(dir, "probe.dat"))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "ioprobe.yaml"), []byte(cfg), 0o644))

	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o755))
	run(t, "mount", "--bind", shared, ro)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", ro).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", ro, err, out)
		}
	})
	run(t, "mount", "-o", "remount,bind,ro", ro)
	file := filepath.Join(ro, "ioprobe.yaml")
	require.ErrorIs(t, os.WriteFile(filepath.Join(ro, "x"), nil, 0o644), unix.EROFS, "the bind is read-only")

	o := ioprobe(t, dir, "serve", "--config.check", file)
	require.Equal(t, 2, o.code, "a read-only view of a directory everyone can write: refused\n%s", o.stderr)
	require.Equal(t, "ioprobe: config file "+file+" is refused: its directory "+ro+" is writable by every user (mode 0777, not sticky)"+
		", who could change what this daemon runs and writes; make it writable only by root or the daemon's user (chmod go-w, chown) (rule shared-directory)\n", o.stderr)

	require.NoError(t, os.Chmod(shared, 0o755))
	o = ioprobe(t, dir, "serve", "--config.check", file)
	require.Equal(t, 0, o.code, o.stderr)
}

// TestRedteamWebConfigNotQuotedNorShared: exporter-toolkit reads
// --web.config.file again for every request and logs why it cannot; with
// the file a symlink repointed to a shadow-like file, neither the daemon's
// log nor the answer holds a byte of it, only line numbers. A web config
// (or a TLS file it names) in a directory others can write is refused at
// start, as the config is: whoever writes it gives themselves a password.
func TestRedteamWebConfigNotQuotedNorShared(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, "targets:\n  data: {path: %s, size: 8MiB}\nmodules:\n  quick: {profile: random-read, max_duration: 1s}\n", filepath.Join(dir, "probe.dat")), 0o600))
	web := filepath.Join(dir, "web.yml")
	require.NoError(t, os.WriteFile(web, []byte("basic_auth_users:\n  admin: $2a$04$K2IKb5c4F3B1hAXn.WO6Be6ZTNc7TJCZMA8MM46zPP8o92MIrHa4W\n"), 0o600))
	shadow := filepath.Join(dir, "shadow")
	require.NoError(t, os.WriteFile(shadow, []byte(secretLine+"\ndaemon:*:19000:0:99999:7:::\n"), 0o600))
	link := filepath.Join(dir, "web-link.yml")
	require.NoError(t, os.Symlink(web, link))

	o := ioprobe(t, dir, "serve", "--config", cfg, "--web.config.file", shadow, "--web.listen-address", "127.0.0.1:0")
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, "ioprobe: --web.config.file "+shadow+": yaml: line 1, line 2: not an exporter-toolkit web configuration: an unknown key, or a value of the wrong type (the file's text is not shown)\n", o.stderr)

	d := startDaemon(t, "--config", cfg, "--web.config.file", link)
	req, err := http.NewRequest(http.MethodGet, "http://"+d.addr+"/api/v1/runs", nil)
	require.NoError(t, err)
	req.Host = "localhost"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the web config is in force")

	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(shadow, link))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, string(body))
	require.Eventually(t, func() bool { return strings.Contains(d.log(), "Unable to parse configuration") }, testwait.Patience, 50*time.Millisecond)
	require.Contains(t, d.log(), "yaml: line 1, line 2: not an exporter-toolkit web configuration")
	for _, part := range []string{"s3cret", "TopSecretHashValue", "root:", "daemon:*"} {
		require.NotContains(t, string(body), part)
		require.NotContains(t, d.log(), part)
	}

	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.Mkdir(shared, 0o755))
	require.NoError(t, os.Chmod(shared, 0o777))
	inShared := filepath.Join(shared, "web.yml")
	require.NoError(t, os.WriteFile(inShared, []byte("basic_auth_users:\n  admin: $2a$04$K2IKb5c4F3B1hAXn.WO6Be6ZTNc7TJCZMA8MM46zPP8o92MIrHa4W\n"), 0o600))
	o = ioprobe(t, dir, "serve", "--config", cfg, "--web.config.file", inShared, "--web.listen-address", "127.0.0.1:0")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "ioprobe: --web.config.file "+inShared+": web config file "+inShared+" is refused: its directory "+shared+
		" is writable by every user (mode 0777, not sticky), who could change what this daemon runs and writes")

	// A TLS file it names, the same.
	certs := filepath.Join(dir, "certs")
	require.NoError(t, os.Mkdir(certs, 0o700))
	crt, key, _ := testcert.Write(t, certs)
	require.NoError(t, os.Rename(key, filepath.Join(shared, "server.key")))
	tlsWeb := filepath.Join(dir, "tls.yml")
	require.NoError(t, os.WriteFile(tlsWeb, fmt.Appendf(nil, "tls_server_config:\n  cert_file: %s\n  key_file: %s\n", crt, filepath.Join(shared, "server.key")), 0o600))
	o = ioprobe(t, dir, "serve", "--config", cfg, "--web.config.file", tlsWeb, "--web.listen-address", "127.0.0.1:0")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "TLS file "+filepath.Join(shared, "server.key")+" is refused: its directory "+shared+" is writable by every user")
}
