package fleet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/internal/safefile"
)

// MaxHosts bounds the host list (a typo in a DNS name must not fan out to
// a whole data centre, and every host costs the controller a connection).
const MaxHosts = 1024

// lookupTimeout bounds one dns+ item's lookup: a resolver that does not
// answer must not hold the command (the list is read before any host is
// asked anything, and SIGINT is the only other way out).
const lookupTimeout = 10 * time.Second

// Resolver looks up every address of a name (net.DefaultResolver).
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// ParseHosts reads --hosts: a comma-separated list whose items are
// HOST:PORT (optionally http:// or https://), @FILE (one item per line,
// # comments and blank lines ignored) or dns+NAME:PORT (every A and AAAA
// address of NAME, sorted: a Kubernetes headless Service). The order is
// kept; a host named twice is an error.
func ParseHosts(ctx context.Context, spec string, r Resolver) ([]string, error) {
	var out []string
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		hosts, err := parseItem(ctx, item, r, true, len(out))
		if err != nil {
			return nil, err
		}
		// Stop at the first host past the bound: a list or file of
		// thousands of dns+ items is not looked up whole first.
		if out = append(out, hosts...); len(out) > MaxHosts {
			return nil, fmt.Errorf("--hosts: more than %d hosts", MaxHosts)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--hosts %q: no hosts", spec)
	}
	for i, h := range out {
		if slices.Contains(out[:i], h) {
			return nil, fmt.Errorf("--hosts: %s is named twice", h)
		}
	}
	return out, nil
}

// parseItem reads one item; before is how many hosts the items before it
// named (a file stops past MaxHosts).
func parseItem(ctx context.Context, item string, r Resolver, fileOK bool, before int) ([]string, error) {
	switch {
	case item == "":
		return nil, fmt.Errorf("--hosts: an empty item (want HOST:PORT, @FILE or dns+NAME:PORT)")
	case strings.HasPrefix(item, "@"):
		if !fileOK {
			return nil, fmt.Errorf("--hosts: %s: a hosts file cannot name another (%s)", item, item)
		}
		return readHostsFile(ctx, item[1:], r, before)
	case strings.HasPrefix(item, "dns+"):
		return resolve(ctx, item, r)
	}
	if err := checkAddress(item); err != nil {
		return nil, err
	}
	return []string{item}, nil
}

// checkAddress accepts [http://|https://]HOST:PORT.
func checkAddress(item string) error {
	a := item
	if rest, ok := strings.CutPrefix(a, "https://"); ok {
		a = rest
	} else if rest, ok := strings.CutPrefix(a, "http://"); ok {
		a = rest
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" || strings.ContainsAny(a, "/?#@ ") {
		return fmt.Errorf("--hosts: %q is not HOST:PORT (want node1:9816, [::1]:9816, @FILE or dns+NAME:PORT)", item)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("--hosts: %q: the port must be a number from 1 to 65535", item)
	}
	return nil
}

func readHostsFile(ctx context.Context, path string, r Resolver, before int) ([]string, error) {
	data, err := safefile.HostList.Read(path)
	if err != nil {
		return nil, fmt.Errorf("--hosts: %w", err)
	}
	return parseHostsFile(ctx, path, bytes.NewReader(data), r, before)
}

// parseHostsFile reads one item per line; # starts a comment.
func parseHostsFile(ctx context.Context, name string, rd io.Reader, r Resolver, before int) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(rd)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		hosts, err := parseItem(ctx, line, r, false, 0)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, n, err)
		}
		if out = append(out, hosts...); before+len(out) > MaxHosts {
			return nil, fmt.Errorf("--hosts: %s line %d: more than %d hosts", name, n, MaxHosts)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--hosts: %s: %v", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--hosts: %s names no hosts", name)
	}
	return out, nil
}

// resolve expands dns+NAME:PORT into every address of NAME.
func resolve(ctx context.Context, item string, r Resolver) ([]string, error) {
	name, port, err := net.SplitHostPort(strings.TrimPrefix(item, "dns+"))
	if err != nil || name == "" {
		return nil, fmt.Errorf("--hosts: %q is not dns+NAME:PORT", item)
	}
	if err := checkAddress(net.JoinHostPort(name, port)); err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := r.LookupIPAddr(lctx, name)
	if err != nil {
		return nil, fmt.Errorf("--hosts: %s: %v", item, err)
	}
	var ips []string
	for _, a := range addrs {
		ips = append(ips, a.IP.String())
	}
	slices.Sort(ips)
	ips = slices.Compact(ips)
	if len(ips) == 0 {
		return nil, fmt.Errorf("--hosts: %s: %s has no address", item, name)
	}
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = net.JoinHostPort(ip, port)
	}
	return out, nil
}
