package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAllowedHostsAsCompared: the allow-list is kept as the daemon
// compares Host names: lower case, no trailing dot, addresses and
// networks in one form.
func TestAllowedHostsAsCompared(t *testing.T) {
	cfg, err := Load("testdata/good/full.yaml", Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"ioprobe.monitoring.svc", "*.ioprobe.monitoring.svc.cluster.local", "203.0.113.7", "2001:db8::7", "10.20.0.0/16"},
		cfg.HTTP.AllowedHosts)
	for in, want := range map[string]string{
		"Storage.Example.COM.": "storage.example.com",
		"*.Nodes.Example.com":  "*.nodes.example.com",
		"::ffff:10.1.2.3":      "10.1.2.3",
		"2001:DB8:0::1":        "2001:db8::1",
		"10.1.2.3/8":           "10.0.0.0/8",
		"*":                    "*",
		"my_host.lan":          "my_host.lan",
	} {
		got, err := AllowedHost(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"-a.example.com", "a..example.com", "x.*", "*.*.example.com", "ex ample.com", "host:80", "a.example.com/", "ünicode.example"} {
		_, err := AllowedHost(bad)
		require.Error(t, err, bad)
	}
}
