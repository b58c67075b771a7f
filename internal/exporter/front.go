package exporter

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"sync"
	"time"
)

// The front of the HTTP server: what every request meets before
// exporter-toolkit's basic auth decides whether it is authorised.
//
// exporter-toolkit answers a request it does not authorise (401, or 429
// from its rate_limit) without reading the body the request announced;
// net/http then reads up to 256 KiB of that body before it sends the
// answer, and the server has no read timeout (a probe may rightly take
// minutes): a client that announced a body and sent nothing held its
// connection for as long as it liked, over TLS too. And exporter-toolkit
// compares passwords with bcrypt (tens of milliseconds each) one at a
// time under one lock, with a cache of 100 answers that a flood of
// wrong passwords evicts, so an authorised scrape queued behind the
// flood's checks (29.6 s in issue 21).
//
// So the front, around exporter-toolkit's handler:
//   - gives every request's answer a write deadline, lifted once the
//     request is authorised (an answer to a non-reading client of an
//     unauthorised one ends there);
//   - does not wait for the body of a request that was not authorised:
//     the read deadline is now, the answer goes out and the connection
//     is closed;
//   - lets credentials that passed before (a keyed digest, never the
//     password) straight through, and lets authSlots requests with other
//     credentials into the password check at once: the rest wait at
//     most authWait, then get 503. A flood of wrong passwords thus
//     costs one core at most and never stands between an authorised
//     client and its answer. The check itself stays exporter-toolkit's:
//     the set of credentials that passed decides the order, never
//     access (a changed password is checked as before).

const (
	// answerTimeout bounds the writing of an answer given before the
	// request is authorised.
	answerTimeout = 10 * time.Second
	// authSlots is how many requests with credentials not seen to pass
	// are let into the password check at once. exporter-toolkit checks
	// one at a time anyway; one waits for the lock at most.
	authSlots = 1
	// authWait is how long such a request waits for a slot.
	authWait = 2 * time.Second
	// knownCredentials bounds the credentials remembered as passed.
	knownCredentials = 64
)

// passKey keys a request's *passage in its context.
type passKey struct{}

// passage is one request's way through the front.
type passage struct {
	gate    *authGate
	digest  [sha256.Size]byte
	creds   bool
	passed  bool
	release func() // frees the request's check slot, if it holds one
}

// pass is called by the handlers inside, which exporter-toolkit calls
// only for an authorised request.
func (p *passage) pass() {
	p.passed = true
	if p.creds && p.gate != nil {
		p.gate.remember(p.digest)
	}
	p.done()
}

func (p *passage) done() {
	if p.release != nil {
		p.release()
		p.release = nil
	}
}

// passed marks r as authorised and reports whether it went through the
// front (a handler served directly, as tests do, did not).
func passed(r *http.Request) {
	if p, ok := r.Context().Value(passKey{}).(*passage); ok {
		p.pass()
	}
}

// front wraps h, the server's handler as exporter-toolkit set it.
func (d *Daemon) front(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Now().Add(d.answerTimeout))
		if d.misdirected(w, r) { // hosts.go: before any password is checked
			return
		}
		p := &passage{gate: d.auth}
		defer p.done()
		if d.auth != nil {
			if user, pass, ok := r.BasicAuth(); ok {
				p.digest, p.creds = d.auth.digestOf(user, pass), true
				if !d.auth.known(p.digest) {
					if p.release = d.auth.acquire(r.Context(), d.authWait); p.release == nil {
						cut(w, r)
						busy(w, "1", "the password check is taken (%d at once)", authSlots)
						return
					}
				}
			}
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), passKey{}, p)))
		if !p.passed {
			cut(w, r)
		}
	})
}

// cut stops waiting for the body of a request answered without reading
// it: a body not yet read fails at once, and net/http closes the
// connection after the answer instead of reading what is left.
func cut(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 { // -1: chunked, of unknown length
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
}

// authGate orders the password checks: credentials that passed before
// go straight to the check (which exporter-toolkit's cache answers at
// once, or bcrypt behind at most authSlots others); the others take a
// slot.
type authGate struct {
	key   [32]byte // per process: digests mean nothing elsewhere
	slots chan struct{}

	mu    sync.Mutex
	seen  map[[sha256.Size]byte]uint64 // digest → when it last passed
	clock uint64
}

func newAuthGate() *authGate {
	g := &authGate{slots: make(chan struct{}, authSlots), seen: map[[sha256.Size]byte]uint64{}}
	_, _ = rand.Read(g.key[:])
	return g
}

// digestOf is an HMAC of the user and the password under the process's
// key: the password itself is never kept.
func (g *authGate) digestOf(user, pass string) [sha256.Size]byte {
	m := hmac.New(sha256.New, g.key[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(user)))
	m.Write(n[:])
	m.Write([]byte(user))
	m.Write([]byte(pass))
	var out [sha256.Size]byte
	m.Sum(out[:0])
	return out
}

func (g *authGate) known(d [sha256.Size]byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.seen[d]
	return ok
}

// remember adds credentials that passed, forgetting the least recently
// passed beyond knownCredentials. Only authorised requests add: a flood
// of wrong passwords cannot push anyone out.
func (g *authGate) remember(d [sha256.Size]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clock++
	g.seen[d] = g.clock
	if len(g.seen) <= knownCredentials {
		return
	}
	var oldest [sha256.Size]byte
	least := g.clock
	for k, t := range g.seen {
		if t < least {
			oldest, least = k, t
		}
	}
	delete(g.seen, oldest)
}

// acquire waits at most wait (or until ctx ends) for a check slot and
// returns its release, or nil.
func (g *authGate) acquire(ctx context.Context, wait time.Duration) func() {
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}
