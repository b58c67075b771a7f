package fleet

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
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

// countingResolver answers every name with one address of its own and
// counts the lookups.
type countingResolver struct{ n int }

func (c *countingResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	c.n++
	return []net.IPAddr{{IP: net.IPv4(10, byte(c.n>>16), byte(c.n>>8), byte(c.n))}}, nil
}

// TestParseHostsStopsAtTheBound: a hosts file of 5000 dns+ items is not
// looked up whole before the bound refuses it (each lookup may wait on a
// resolver): the lookups stop at the first host past MaxHosts, and the
// error names the line; a list that fills the bound exactly is read.
func TestParseHostsStopsAtTheBound(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "dns+node%d:9816\n", i)
		}
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o600))
		return p
	}
	r := &countingResolver{}
	_, err := ParseHosts(context.Background(), "@"+write("many", 5000), r)
	require.EqualError(t, err, fmt.Sprintf("--hosts: %s line %d: more than %d hosts", filepath.Join(dir, "many"), MaxHosts+1, MaxHosts))
	require.Equal(t, MaxHosts+1, r.n)

	// Items before the file count against it.
	r = &countingResolver{}
	_, err = ParseHosts(context.Background(), "a:1,b:1,@"+write("fill", MaxHosts-1), r)
	require.ErrorContains(t, err, "more than 1024 hosts")
	require.Equal(t, MaxHosts-1, r.n)

	r = &countingResolver{}
	got, err := ParseHosts(context.Background(), "a:1,@"+write("exact", MaxHosts-1), r)
	require.NoError(t, err)
	require.Len(t, got, MaxHosts)
}
