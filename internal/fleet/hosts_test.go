package fleet

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseHostsListAndFile(t *testing.T) {
	ctx := context.Background()
	got, err := ParseHosts(ctx, "node1:9816, [::1]:9816,https://node2:443", net.DefaultResolver)
	require.NoError(t, err)
	require.Equal(t, []string{"node1:9816", "[::1]:9816", "https://node2:443"}, got)

	dir := t.TempDir()
	file := filepath.Join(dir, "hosts.txt")
	require.NoError(t, os.WriteFile(file, []byte("# the rack\nnode3:9816   # top\n\n  node4:9816\n#node5:9816\n"), 0o600))
	got, err = ParseHosts(ctx, "node1:9816,@"+file, net.DefaultResolver)
	require.NoError(t, err)
	require.Equal(t, []string{"node1:9816", "node3:9816", "node4:9816"}, got)

	for spec, want := range map[string]string{
		"":                       "an empty item",
		"node1:9816,":            "an empty item",
		"node1":                  `"node1" is not HOST:PORT`,
		"node1:0":                "the port must be a number from 1 to 65535",
		"node1:http":             "the port must be a number",
		"http://node1:1/metrics": "is not HOST:PORT",
		"node3:9816,@" + file:    "node3:9816 is named twice",
		"dns+:9816":              "is not dns+NAME:PORT",
		"dns+localhost":          "is not dns+NAME:PORT",
	} {
		_, err := ParseHosts(ctx, spec, net.DefaultResolver)
		require.ErrorContains(t, err, want, spec)
	}

	nested := filepath.Join(dir, "nested.txt")
	require.NoError(t, os.WriteFile(nested, []byte("node1:1\n@"+file+"\n"), 0o600))
	_, err = ParseHosts(ctx, "@"+nested, net.DefaultResolver)
	require.ErrorContains(t, err, "nested.txt line 2: --hosts: @"+file+": a hosts file cannot name another")
	empty := filepath.Join(dir, "empty.txt")
	require.NoError(t, os.WriteFile(empty, []byte("# nobody\n"), 0o600))
	_, err = ParseHosts(ctx, "@"+empty, net.DefaultResolver)
	require.ErrorContains(t, err, "names no hosts")
}

// TestParseHostsDNS resolves localhost with the system's resolver: every
// address it has (127.0.0.1, and ::1 where /etc/hosts lists it), sorted,
// with the port.
func TestParseHostsDNS(t *testing.T) {
	ctx := context.Background()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, "localhost")
	require.NoError(t, err)
	var want []string
	for _, a := range addrs {
		want = append(want, net.JoinHostPort(a.IP.String(), "9816"))
	}
	got, err := ParseHosts(ctx, "dns+localhost:9816", net.DefaultResolver)
	require.NoError(t, err)
	require.ElementsMatch(t, want, got)
	require.Contains(t, got, "127.0.0.1:9816")
	require.IsNonDecreasing(t, got)

	_, err = ParseHosts(ctx, "dns+no-such-host.invalid:9816", net.DefaultResolver)
	require.ErrorContains(t, err, "dns+no-such-host.invalid:9816")
}
