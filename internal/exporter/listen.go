package exporter

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/mdlayher/vsock"
	"github.com/prometheus/exporter-toolkit/web"
)

// listeners opens what --web.listen-address and --web.systemd-socket
// name, as exporter-toolkit's ListenAndServe opens them (TCP, vsock://:PORT,
// systemd's sockets). ioprobe opens them itself so that each is served by
// its own http.Server: exporter-toolkit's ServeMultiple serves every
// listener with one server whose Handler each of its goroutines replaces,
// and ioprobe's front (front.go) must go around the handler it installs.
func (d *Daemon) listeners() ([]net.Listener, error) {
	if d.opts.Listener != nil {
		return []net.Listener{d.opts.Listener}, nil
	}
	w := d.opts.Web
	if w.SystemdSocket {
		d.logger.Info("Listening on systemd activated listeners instead of port listeners.")
		ls, err := activation.Listeners()
		if err != nil {
			return nil, err
		}
		if len(ls) == 0 {
			return nil, errors.New("no socket activation file descriptors found")
		}
		return ls, nil
	}
	if len(w.ListenAddresses) == 0 {
		return nil, web.ErrNoListeners
	}
	var out []net.Listener
	for _, addr := range w.ListenAddresses {
		l, err := listen(addr)
		if err != nil {
			for _, o := range out {
				o.Close()
			}
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// CheckListenAddress says whether a --web.listen-address is well formed
// (a TCP host:port with a port of 0 to 65535 or a service name, or
// vsock://:PORT) without opening it: bad input is found before anything
// starts, and is not confused with a port another process holds.
func CheckListenAddress(addr string) error {
	if strings.HasPrefix(addr, "vsock://") {
		u, err := url.Parse(addr)
		if err != nil {
			return err
		}
		_, p, err := net.SplitHostPort(u.Host)
		if err != nil {
			return err
		}
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return fmt.Errorf("vsock port %q: want a whole number below 2^32", p)
		}
		return nil
	}
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want HOST:PORT, e.g. :9816 or 127.0.0.1:9816 (%v)", err)
	}
	if _, err := net.LookupPort("tcp", p); err != nil {
		return fmt.Errorf("port %q: want 0 to 65535 or a service name", p)
	}
	return nil
}

// listen opens one --web.listen-address: vsock://:PORT or a TCP address.
func listen(addr string) (net.Listener, error) {
	if !strings.HasPrefix(addr, "vsock://") {
		return net.Listen("tcp", addr)
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, err
	}
	_, p, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(p, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return vsock.Listen(uint32(port), nil)
}

// newServer is the server of one listener.
func (d *Daemon) newServer() *http.Server {
	return &http.Server{Handler: d.Handler(), ReadHeaderTimeout: d.readHeaderTimeout, IdleTimeout: d.idleTimeout, MaxHeaderBytes: maxHeaderBytes}
}

// serveOn serves l with server through exporter-toolkit (TLS and basic
// auth from --web.config.file) until the server is shut down. By the
// time the server accepts its first connection, exporter-toolkit has
// installed its handler (basic auth around ioprobe's); the front goes
// around that, so that it sees every request before the password check.
func (d *Daemon) serveOn(l net.Listener, server *http.Server) error {
	w := d.opts.Web
	addrs := []string{l.Addr().String()}
	flags := &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &w.SystemdSocket, WebConfigFile: &w.ConfigFile}
	fl := &frontListener{Listener: l, install: func() { server.Handler = d.front(server.Handler) }}
	return web.Serve(fl, server, flags, slog.New(webConfigLog{d.logger.Handler()}))
}

// frontListener installs the front when its server first accepts: in
// the server's own goroutine, after exporter-toolkit set the handler
// and before any connection is served.
type frontListener struct {
	net.Listener
	once    sync.Once
	install func()
}

func (l *frontListener) Accept() (net.Conn, error) {
	l.once.Do(l.install)
	return l.Listener.Accept()
}
