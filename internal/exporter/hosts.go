package exporter

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ioprobe/ioprobe/internal/config"
)

// The Host rule. A web page cannot reach the daemon through its reader's
// browser by its own name: the browser sends the page's Origin and the
// cross-origin check (authorised, in http.go) refuses it. But a page whose
// DNS name the attacker points at the daemon's address (DNS rebinding) is
// the daemon's own origin as far as the browser and that check can tell:
// its requests carry Host: that name. So the daemon answers only the Host
// names it is reachable as — its addresses, localhost, the machine's names
// and http.allowed_hosts — and refuses every other with 421 Misdirected
// Request before anything is run or read. An attacker chooses the name, not
// the address, so the port is not compared: a Service or a port forward
// may rightly put another one in Host.
//
// The health endpoints are exempt: they change nothing and say nothing but
// "Healthy."/"Ready.", and a load balancer's or an orchestrator's checker
// may name the daemon however it likes. Everything else, /metrics included
// (its gauges are results), follows the rule. Prometheus scrapes by the
// address its service discovery gives (a pod IP, a node's address, a
// static HOST:PORT) and the kubelet probes the pod IP: those are names the
// daemon knows. A name it cannot know goes in http.allowed_hosts.

// ifaceRefresh is how often, at most, the machine's interface addresses
// are read again when a Host that is an IP address is not among them:
// addresses come and go (DHCP, a new interface), and a flood of requests
// naming other addresses must not read them for each.
const ifaceRefresh = time.Second

// fqdnTimeout bounds the lookup of the machine's fully qualified name,
// which runs beside the server and never delays a request.
const fqdnTimeout = 5 * time.Second

// hostRule knows the names the daemon is reachable as.
type hostRule struct {
	// listen are the hosts of the listen addresses as given (names or
	// addresses), lower case; wildcard: one of them listens on every
	// address of the machine.
	mu       sync.Mutex
	listen   map[string]bool
	wildcard bool

	fqdn atomic.Pointer[string]

	ifMu   sync.Mutex
	ifAt   time.Time
	ifAddr map[netip.Addr]bool
	// interfaceAddrs reads the machine's addresses (net.InterfaceAddrs).
	interfaceAddrs func() ([]net.Addr, error)
	hostname       func() (string, error)
}

func newHostRule() *hostRule {
	return &hostRule{listen: map[string]bool{}, interfaceAddrs: net.InterfaceAddrs, hostname: os.Hostname}
}

// addListener records what a listener answers as: the host of the listen
// address given (spec, "" when none was: systemd's sockets, a test's
// listener) and the address it is bound to.
func (h *hostRule) addListener(spec string, a net.Addr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if host, _, err := net.SplitHostPort(spec); err == nil && host != "" {
		h.listen[normalHost(host)] = true
	}
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return
	}
	ip = ip.Unmap()
	if ip.IsUnspecified() {
		h.wildcard = true
	}
	h.listen[ip.String()] = true
}

// lookupFQDN finds the machine's fully qualified name (what `hostname -f`
// says: /etc/hosts, then DNS) in the background.
func (h *hostRule) lookupFQDN() {
	name, err := h.hostname()
	if err != nil || name == "" {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), fqdnTimeout)
		defer cancel()
		if cname, err := net.DefaultResolver.LookupCNAME(ctx, name); err == nil {
			fqdn := normalHost(cname)
			h.fqdn.Store(&fqdn)
		}
	}()
}

// normalHost is a Host's name as compared: lower case, without the
// brackets of an IPv6 address or a trailing dot; an IP address in
// netip's form, without its zone.
func normalHost(s string) string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip.WithZone("").Unmap().String()
	}
	return strings.ToLower(strings.TrimSuffix(s, "."))
}

// hostOf is the host part of a Host header: [v6]:port, [v6], name:port,
// name, or a bare IPv6 address.
func hostOf(hostport string) string {
	if strings.HasPrefix(hostport, "[") {
		if end := strings.IndexByte(hostport, ']'); end > 0 {
			return hostport[1:end]
		}
		return hostport
	}
	if strings.Count(hostport, ":") == 1 {
		host, _, _ := strings.Cut(hostport, ":")
		return host
	}
	return hostport
}

// allows says whether the daemon answers r's Host, with the allow-list
// of the live config.
func (h *hostRule) allows(r *http.Request, allowed []string) bool {
	raw := hostOf(r.Host)
	if raw == "" {
		return true // HTTP/1.0 without Host: no browser sends that
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	tcp, isTCP := local.(*net.TCPAddr)
	if local != nil && !isTCP {
		return true // vsock, a unix socket from systemd: no browser reaches them
	}
	host := normalHost(raw)
	ip, err := netip.ParseAddr(host)
	isIP := err == nil
	for _, a := range allowed {
		switch {
		case a == "*" || a == host || strings.HasPrefix(a, "*.") && strings.HasSuffix(host, a[1:]):
			return true
		case isIP && strings.Contains(a, "/"):
			if p, err := netip.ParsePrefix(a); err == nil && p.Contains(ip) {
				return true
			}
		}
	}
	h.mu.Lock()
	listed, wildcard := h.listen[host], h.wildcard
	h.mu.Unlock()
	if listed {
		return true
	}
	if !isIP {
		return h.isMachineName(host)
	}
	if isTCP {
		if l, ok := netip.AddrFromSlice(tcp.IP); ok && l.Unmap() == ip {
			return true // the address the client reached the daemon at
		}
	}
	return wildcard && h.isInterfaceAddr(ip)
}

// isMachineName: localhost, the host name, the fully qualified name.
func (h *hostRule) isMachineName(name string) bool {
	if name == "localhost" {
		return true
	}
	if hn, err := h.hostname(); err == nil && name == normalHost(hn) {
		return true
	}
	fqdn := h.fqdn.Load()
	return fqdn != nil && name == *fqdn
}

// isInterfaceAddr says whether ip is an address of one of the machine's
// interfaces, reading them again when it is not and they were last read
// more than ifaceRefresh ago.
func (h *hostRule) isInterfaceAddr(ip netip.Addr) bool {
	h.ifMu.Lock()
	defer h.ifMu.Unlock()
	if h.ifAddr[ip] {
		return true
	}
	if !h.ifAt.IsZero() && time.Since(h.ifAt) < ifaceRefresh {
		return false
	}
	h.ifAt = time.Now()
	addrs, err := h.interfaceAddrs()
	if err != nil {
		return false
	}
	h.ifAddr = make(map[netip.Addr]bool, len(addrs))
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				h.ifAddr[ip.Unmap()] = true
			}
		}
	}
	return h.ifAddr[ip]
}

// misdirected answers 421 to a request whose Host the daemon does not
// answer as, the health endpoints aside, and says whether it did. The
// front asks first, before the password check: a rebinding page's
// requests cost no bcrypt and learn nothing from a 401; Handler asks
// again for the servers and tests that have no front.
func (d *Daemon) misdirected(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path == "/-/healthy" || r.URL.Path == "/-/ready" || d.hosts.allows(r, d.cfg.Load().HTTP.AllowedHosts) {
		return false
	}
	cut(w, r)
	w.Header().Set("Connection", "close")
	msg := fmt.Sprintf("misdirected request: this daemon does not answer to Host %q (it answers to its addresses, localhost, "+
		"its host name and the names in %s: add the name it is reached by there)", r.Host, config.AllowedHostsKey)
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, http.StatusMisdirectedRequest, apiError{msg})
	} else {
		http.Error(w, msg, http.StatusMisdirectedRequest)
	}
	return true
}

// hostGuard serves next the requests that are not misdirected.
func (d *Daemon) hostGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !d.misdirected(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}
