package exporter

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// hostsConfig serves the run API, one on-demand job and one probe module,
// with the allow-list of a daemon behind a Service.
const hostsConfig = `
global: {snapshot_interval: 100ms}
api:
  runs: {max_duration: 1m, max_ramp: 10s, max_queue_depth: 8, max_workers: 2}
targets:
  data: {path: DIR/data.dat, size: 4MiB}
jobs:
  adhoc: {target: data, profile: random-read, duration: 1s, ramp: 0s}
modules:
  quick: {profile: random-read, max_duration: 200ms}
http:
  allowed_hosts: [ioprobe.monitoring.svc, "*.nodes.example.com"]
`

// hostReq sends method path to base with Host host, the Origin and
// body given ("" for none), and returns the answer.
func hostReq(t *testing.T, base, method, path, host, origin, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	require.NoError(t, err)
	req.Host = host
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func runBody(t *testing.T) string {
	b, err := json.Marshal(map[string]any{"target": "data", "specs": []any{readSpec(100)}, "ramp": "0s", "duration": "200ms"})
	require.NoError(t, err)
	return string(b)
}

// TestHostRuleRefusesRebinding: a request whose Host is a name the
// daemon does not know — what a page whose DNS name was pointed at the
// daemon sends, with its own Origin or none — is refused 421 on every
// endpoint that runs or reads something, and nothing runs. On main the
// run was accepted (202): Origin and Host agreed.
func TestHostRuleRefusesRebinding(t *testing.T) {
	d, dir := newDaemon(t, hostsConfig, WebOptions{EnableAdminAPI: true, EnableLifecycle: true})
	base, stop := start(t, d)
	port := base[strings.LastIndexByte(base, ':')+1:]
	reloads := value(t, d.Registry(), "ioprobe_config_last_reload_success_timestamp_seconds", nil)

	for _, host := range []string{"rebind.test:" + port, "rebind.test", "ioprobe.monitoring.svc.attacker.example:" + port,
		"nodes.example.com", "192.0.2.7:" + port, "[2001:db8::7]:" + port} {
		for _, origin := range []string{"http://" + host, ""} {
			for _, r := range []struct{ method, path, body string }{
				{http.MethodPost, "/api/v1/runs", runBody(t)},
				{http.MethodPost, "/api/v1/jobs/adhoc/run", ""},
				{http.MethodPost, "/-/reload", ""},
				{http.MethodGet, "/api/v1/runs", ""},
				{http.MethodGet, "/api/v1/jobs", ""},
				{http.MethodGet, "/metrics", ""},
				{http.MethodGet, "/probe?target=data&module=quick", ""},
				{http.MethodGet, "/", ""},
			} {
				code, body := hostReq(t, base, r.method, r.path, host, origin, r.body)
				require.Equal(t, http.StatusMisdirectedRequest, code, "%s %s Host %s Origin %q: %s", r.method, r.path, host, origin, body)
				require.Contains(t, body, "http.allowed_hosts", "the refusal says what to set")
			}
		}
	}
	d.apiRuns.mu.Lock()
	require.Empty(t, d.apiRuns.runs, "no run was accepted")
	d.apiRuns.mu.Unlock()
	require.Zero(t, d.sched.info(d.cfg.Load().Jobs["adhoc"]).RunsStarted, "the job was not triggered")
	require.Equal(t, reloads, value(t, d.Registry(), "ioprobe_config_last_reload_success_timestamp_seconds", nil), "no reload")
	require.LessOrEqual(t, value(t, d.Registry(), "ioprobe_io_operations_total", map[string]string{"target": "data"}), 0.0, "no I/O: no run, job or probe")
	require.NoFileExists(t, filepath.Join(dir, "data.dat"), "the target was never prepared")

	// Health endpoints say nothing and change nothing: any Host.
	for _, p := range []string{"/-/healthy", "/-/ready"} {
		code, _ := hostReq(t, base, http.MethodGet, p, "rebind.test:"+port, "", "")
		require.Equal(t, http.StatusOK, code, p)
	}
	err, _ := stop()
	require.NoError(t, err)
}

// TestHostRuleServesOwnNames: the address the client reached, localhost,
// the machine's host name and the allow-list's names are served; a run
// posted by one of them with its own Origin starts.
func TestHostRuleServesOwnNames(t *testing.T) {
	d, _ := newDaemon(t, hostsConfig, WebOptions{EnableAdminAPI: true})
	base, stop := start(t, d)
	port := base[strings.LastIndexByte(base, ':')+1:]
	hn, err := os.Hostname()
	require.NoError(t, err)
	for _, host := range []string{"127.0.0.1:" + port, "127.0.0.1", "localhost:" + port, "LOCALHOST.", hn + ":" + port, strings.ToUpper(hn),
		"ioprobe.monitoring.svc:" + port, "ioprobe.monitoring.svc:80", "node-3.nodes.example.com:" + port, "", "[::ffff:127.0.0.1]:" + port} {
		code, body := hostReq(t, base, http.MethodGet, "/metrics", host, "", "")
		require.Equal(t, http.StatusOK, code, "Host %q: %s", host, body)
		code, body = hostReq(t, base, http.MethodGet, "/api/v1/jobs", host, "", "")
		require.Equal(t, http.StatusOK, code, "Host %q: %s", host, body)
	}
	host := "ioprobe.monitoring.svc:" + port
	code, body := hostReq(t, base, http.MethodPost, "/api/v1/runs", host, "http://"+host, runBody(t))
	require.Equal(t, http.StatusAccepted, code, body)
	var a accepted
	require.NoError(t, json.Unmarshal([]byte(body), &a))
	st := waitRun(t, base, a.ID)
	require.Positive(t, st.Result.Summary.Ops)
	err, _ = stop()
	require.NoError(t, err)
}

// TestHostRuleReload: the allow-list is the live config's.
func TestHostRuleReload(t *testing.T) {
	d, dir := newDaemon(t, hostsConfig, WebOptions{})
	base, stop := start(t, d)
	code, _ := hostReq(t, base, http.MethodGet, "/metrics", "storage.example.org", "", "")
	require.Equal(t, http.StatusMisdirectedRequest, code)
	cfg := strings.ReplaceAll(hostsConfig, `"*.nodes.example.com"`, `"*.nodes.example.com", storage.example.org`)
	require.NoError(t, os.WriteFile(dir+"/ioprobe.yaml", []byte(strings.ReplaceAll(cfg, "DIR", dir)), 0o644))
	require.NoError(t, d.Reload())
	code, body := hostReq(t, base, http.MethodGet, "/metrics", "Storage.Example.Org.", "", "")
	require.Equal(t, http.StatusOK, code, body)
	err, _ := stop()
	require.NoError(t, err)
}

// TestHostRuleWildcardListen: a daemon listening on every address
// answers each of the machine's addresses, read when a request names
// one (an address added after the start counts), and no other address.
func TestHostRuleWildcardListen(t *testing.T) {
	h := newHostRule()
	var addrs []net.Addr
	reads := 0
	h.interfaceAddrs = func() ([]net.Addr, error) {
		reads++
		return addrs, nil
	}
	h.addListener(":9816", &net.TCPAddr{IP: net.IPv6unspecified, Port: 9816})
	req := func(host string) bool {
		r, err := http.NewRequest(http.MethodGet, "http://x/metrics", nil)
		require.NoError(t, err)
		r.Host = host
		return h.allows(r, nil)
	}
	_, lan, _ := net.ParseCIDR("10.1.2.3/24")
	lan.IP = net.ParseIP("10.1.2.3")
	addrs = []net.Addr{lan, &net.IPNet{IP: net.ParseIP("fe80::1"), Mask: net.CIDRMask(64, 128)}}
	require.True(t, req("10.1.2.3:9816"))
	require.True(t, req("[fe80::1%25eth0]:9816"), "a link-local address with its zone")
	require.True(t, req("[FE80::1]"))
	require.False(t, req("10.1.2.4:9816"))
	n := reads
	require.False(t, req("10.1.2.5:9816"), "within ifaceRefresh: not read again")
	require.Equal(t, n, reads)

	// An address the machine gains later is answered once read again.
	h.ifAt = h.ifAt.Add(-2 * ifaceRefresh)
	addrs = append(addrs, &net.IPNet{IP: net.ParseIP("10.9.9.9"), Mask: net.CIDRMask(8, 32)})
	require.True(t, req("10.9.9.9"))

	// A daemon on one address answers that one, not the machine's others.
	one := newHostRule()
	one.interfaceAddrs = h.interfaceAddrs
	one.addListener("127.0.0.1:9816", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9816})
	r, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	r.Host = "10.1.2.3:9816"
	require.False(t, one.allows(r, nil))
	r.Host = "127.0.0.1:9816"
	require.True(t, one.allows(r, nil))
}

// TestHostRuleNames: the machine's names, the allow-list's patterns, and
// names that only look like them.
func TestHostRuleNames(t *testing.T) {
	h := newHostRule()
	h.hostname = func() (string, error) { return "Node-7", nil }
	fqdn := "node-7.dc1.example.com"
	h.fqdn.Store(&fqdn)
	h.addListener("storage-7.example.net:9816", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 9816})
	allowed := []string{"ioprobe.monitoring.svc", "*.ioprobe.monitoring.svc.cluster.local", "10.20.0.0/16", "2001:db8::/32"}
	for host, want := range map[string]bool{
		"node-7": true, "NODE-7:9816": true, "node-7.dc1.example.com.": true, "localhost": true, "storage-7.example.net:1": true,
		"10.0.0.7": true, "ioprobe.monitoring.svc": true, "x.ioprobe.monitoring.svc.cluster.local": true,
		"node-7.attacker.example": false, "ioprobe.monitoring.svc.attacker.example": false, "ioprobe.monitoring.svc.cluster.local": false,
		"10.20.3.4:30080": true, "[2001:db8::5]:9816": true, "10.21.0.1": false, "[2001:db9::1]": false,
		"localhost.attacker.example": false, "attacker-ioprobe.monitoring.svc": false, "2130706433": false, "127.0.0.1": false,
	} {
		r, err := http.NewRequest(http.MethodGet, "http://x/", nil)
		require.NoError(t, err)
		r.Host = host
		require.Equal(t, want, h.allows(r, allowed), host)
	}
	r, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	r.Host = "anything.example"
	require.True(t, h.allows(r, []string{"*"}), "* turns the rule off")
}

// TestHostRuleBeforeThePassword: with basic auth, a misdirected request
// is 421 before its password is checked (a rebinding page's requests
// cost no bcrypt); the daemon's own names still need the password.
func TestHostRuleBeforeThePassword(t *testing.T) {
	s := startSecured(t, hostsConfig, false, bcrypt.MinCost, WebOptions{EnableAdminAPI: true}, nil)
	for _, c := range []struct {
		host, user string
		want       int
	}{
		{"rebind.test", "", http.StatusMisdirectedRequest},
		{"rebind.test", "prom", http.StatusMisdirectedRequest},
		{s.addr, "", http.StatusUnauthorized},
		{s.addr, "prom", http.StatusOK},
		{"localhost", "prom", http.StatusOK},
	} {
		req, err := http.NewRequest(http.MethodGet, s.base+"/api/v1/jobs", nil)
		require.NoError(t, err)
		req.Host = c.host
		if c.user != "" {
			req.SetBasicAuth(c.user, "s3cret")
		}
		resp, err := s.client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, c.want, resp.StatusCode, "%+v", c)
	}
}
