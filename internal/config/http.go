package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// HTTP is the `http` section: what the daemon's HTTP server answers to.
type HTTP struct {
	// AllowedHosts are the Host names the daemon answers besides the ones
	// it knows itself (its listen and interface addresses, localhost, its
	// host name): a name it is reached by through a proxy, a load
	// balancer or a Kubernetes Service, or an address it is reached at
	// through NAT (a Docker port mapping, a hostPort or NodePort). Each is
	// a DNS name (lower case, no trailing dot), "*.SUFFIX" (any name under
	// SUFFIX), an IP address or a network of them (as netip formats them),
	// or "*" (any Host: the rule is off).
	AllowedHosts []string
}

// AllowedHostsKey is the config key of the allow-list, as refusals name it.
const AllowedHostsKey = "http.allowed_hosts"

// maxAllowedHosts bounds the allow-list: each request may walk it.
const maxAllowedHosts = 256

func validateHTTP(r rawHTTP, ps *problems) HTTP {
	var h HTTP
	if len(r.AllowedHosts) > maxAllowedHosts {
		ps.add(AllowedHostsKey, "%d names, at most %d (use *.SUFFIX for the names under a domain)", len(r.AllowedHosts), maxAllowedHosts)
		return h
	}
	seen := map[string]bool{}
	for i, v := range r.AllowedHosts {
		key := fmt.Sprintf("%s[%d]", AllowedHostsKey, i)
		name, err := AllowedHost(v)
		switch {
		case err != nil:
			ps.add(key, "%v", err)
		case seen[name]:
			ps.add(key, "%q is listed twice", v)
		default:
			seen[name] = true
			h.AllowedHosts = append(h.AllowedHosts, name)
		}
	}
	return h
}

// AllowedHost checks one entry of http.allowed_hosts and returns it as
// the daemon compares it: a DNS name or "*.SUFFIX" in lower case without
// a trailing dot, an IP address or a network (ADDRESS/BITS) in netip's
// form, or "*".
func AllowedHost(v string) (string, error) {
	switch {
	case v == "":
		return "", fmt.Errorf("is empty: give a host name (ioprobe.example.com), *.SUFFIX, an IP address, a network (10.0.0.0/8) or *")
	case v == "*":
		return v, nil
	case strings.HasPrefix(v, "[") || strings.Contains(v, "://") || strings.ContainsAny(v, "?#@"):
		return "", fmt.Errorf("%q: give the name alone, as the Host header carries it without a port (ioprobe.example.com, 2001:db8::1)", v)
	}
	if strings.Contains(v, "/") {
		p, err := netip.ParsePrefix(v)
		if err != nil || p.Addr().Zone() != "" {
			return "", fmt.Errorf("%q: not a network (want an address and a prefix length, 10.0.0.0/8, 2001:db8::/32)", v)
		}
		if p.Bits() == 0 {
			return "", fmt.Errorf("%q: every address: give * for any Host", v)
		}
		return p.Masked().String(), nil
	}
	if ip, err := netip.ParseAddr(v); err == nil {
		if ip.Zone() != "" {
			return "", fmt.Errorf("%q: an address with a zone (%%%s) names a link, not a host: give it without", v, ip.Zone())
		}
		return ip.Unmap().String(), nil
	}
	if strings.Contains(v, ":") {
		return "", fmt.Errorf("%q: the Host rule compares names, not ports: give the name without :PORT", v)
	}
	name := strings.ToLower(strings.TrimSuffix(v, "."))
	rest, wild := strings.CutPrefix(name, "*.")
	if !ValidDNSName(rest) {
		return "", fmt.Errorf("%q: not a DNS name (labels of letters, digits, '-' and '_', 1 to 63 characters each, 253 in all; '*' only as a whole first label, *.example.com)", v)
	}
	if wild && !strings.Contains(rest, ".") {
		return "", fmt.Errorf("%q: would match every name under a top-level domain: give a domain of your own after *. (or * for any Host)", v)
	}
	return name, nil
}

// ValidDNSName says whether s (lower case, no trailing dot) is a DNS name
// as a Host header may carry it. Underscores are allowed: some internal
// names have them, and they fool no browser.
func ValidDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
