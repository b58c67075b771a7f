package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/common/config"

	"github.com/ioprobe/ioprobe/internal/runapi"
	"github.com/ioprobe/ioprobe/internal/safefile"
	"github.com/ioprobe/ioprobe/internal/version"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Bounds of what the fleet reads and waits for: a host, or whatever
// answers in its place, cannot make the fleet wait for ever or read
// without end.
const (
	// requestTimeout bounds any one request, from its send to the end
	// of its answer, whatever the caller's context allows: the longest
	// is a DELETE, which the daemon answers once the run has stopped
	// (within 30 s). The controller gives most requests far less.
	requestTimeout = time.Minute
	// maxSmallAnswer bounds an answer without a result: the clock, a
	// run's id, a dry run's specs.
	maxSmallAnswer = 1 << 20
	// maxResultBase and maxResultPerSecond bound an answer that may hold
	// a result (a run's state): its histograms and summaries (tens of
	// KiB, a few MiB with many lines and devices), and its interval log,
	// under 200 bytes per snapshot, at most 20 snapshots a second.
	maxResultBase      = 16 << 20
	maxResultPerSecond = 4 << 10
)

// answerLimitKey keys the bound of a state answer in a request's
// context (the controller knows the run's planned length).
type answerLimitKey struct{}

// withResultLimit bounds the answers of ctx's requests for a run of
// planned length.
func withResultLimit(ctx context.Context, planned time.Duration) context.Context {
	return context.WithValue(ctx, answerLimitKey{}, int64(maxResultBase)+int64(planned.Seconds()+1)*maxResultPerSecond)
}

// budgetKey keys the time a request was given, for the error that says
// it ran out (the deadline alone says how much is left, not how much
// there was).
type budgetKey struct{}

// within bounds ctx's requests by d.
func within(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithValue(ctx, budgetKey{}, d), d)
}

func resultLimit(ctx context.Context) int64 {
	if n, ok := ctx.Value(answerLimitKey{}).(int64); ok {
		return n
	}
	return maxResultBase
}

// RunRequest is the body of POST /api/v1/runs, as the daemon reads it.
type RunRequest = runapi.RunRequest

// RunState is a run as the daemon answers GET /api/v1/runs/ID.
type RunState = runapi.Run

// APIError is an answer with an error status.
type APIError struct {
	Status int
	Msg    string
}

func (e *APIError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("%s (HTTP %d)", e.Msg, e.Status)
}

// RedirectError is an answer that sends the fleet elsewhere: never
// followed, since the credentials and the run would go to a host not in
// --hosts.
type RedirectError struct {
	Status   int
	Location string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("answered HTTP %d, a redirect to %q: refused (the fleet follows no redirect: its credentials and the run would go to a host not in --hosts)", e.Status, e.Location)
}

// AnswerError is an answer that is not what an ioprobe daemon sends: too
// large, not JSON, or saying something impossible.
type AnswerError struct {
	Request string // "GET /api/v1/runs/ID"
	Msg     string
}

func (e *AnswerError) Error() string {
	return e.Request + ": not the answer of an ioprobe daemon: " + e.Msg
}

// IsStatus says whether err is an answer with HTTP status code.
func IsStatus(err error, code int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == code
}

// Client talks to one daemon.
type Client struct {
	Address string // as the user named it
	base    string // scheme://host:port
	http    *http.Client
}

// NewHTTPClient builds the HTTP client of every host from a
// prometheus/common HTTPClientConfig file (tls_config, basic_auth with
// password_file, …); "" is plain HTTP without credentials. It never
// follows a redirect. It says whether the file asks for TLS.
func NewHTTPClient(file string) (*http.Client, bool, error) {
	cfg := &config.HTTPClientConfig{}
	if file != "" {
		// prometheus/common reads the file and the files it names whole:
		// each is checked to be a bounded regular file first.
		if _, err := safefile.WebConfig.Read(file); err != nil {
			return nil, false, fmt.Errorf("--client-config: %w", err)
		}
		var err error
		cfg, _, err = config.LoadHTTPConfigFile(file)
		if err != nil {
			return nil, false, fmt.Errorf("--client-config %s: %v", file, err)
		}
		t, b := cfg.TLSConfig, cfg.BasicAuth
		named := []string{t.CAFile, t.CertFile, t.KeyFile, cfg.BearerTokenFile}
		if b != nil {
			named = append(named, b.PasswordFile)
		}
		for _, f := range named {
			if f == "" {
				continue
			}
			if _, err := safefile.WebConfig.Read(f); err != nil {
				return nil, false, fmt.Errorf("--client-config %s: %w", file, err)
			}
		}
	}
	// Whatever the file says (prometheus/common follows redirects by
	// default): a redirect is an error naming the host and where it
	// pointed (do).
	cfg.FollowRedirects = false
	c, err := config.NewClientFromConfig(*cfg, "ioprobe-fleet", config.WithUserAgent("ioprobe-fleet/"+version.Version))
	if err != nil {
		return nil, false, fmt.Errorf("--client-config %s: %v", file, err)
	}
	t := cfg.TLSConfig
	tls := t.CAFile != "" || t.CA != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" || t.InsecureSkipVerify
	return c, tls, nil
}

// NewClient is the client of the daemon at address: https when address
// says so or tls is set, else http.
func NewClient(address string, hc *http.Client, tls bool) *Client {
	base := address
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		if tls {
			base = "https://" + base
		} else {
			base = "http://" + base
		}
	}
	return &Client{Address: address, base: base, http: hc}
}

// do sends a request and decodes a 2xx answer of at most limit bytes
// into out. It ends by requestTimeout at the latest, and a redirect is
// an error.
func (c *Client) do(ctx context.Context, method, path string, body, out any, limit int64) error {
	what := method + " " + path
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	budget, ok := ctx.Value(budgetKey{}).(time.Duration)
	if dl, has := ctx.Deadline(); !ok || !has || time.Until(dl) > requestTimeout {
		budget = requestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return noAnswer(ctx, what, budget, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 3 {
		return &RedirectError{Status: resp.StatusCode, Location: resp.Header.Get("Location")}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("reading the answer to %s: %w", what, noAnswer(ctx, what, budget, err))
	}
	if int64(len(data)) > limit {
		return &AnswerError{Request: what, Msg: fmt.Sprintf("the answer is larger than %d bytes", limit)}
	}
	if resp.StatusCode/100 != 2 {
		var e runapi.Error
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(firstLine(string(data)))
		}
		return &APIError{Status: resp.StatusCode, Msg: e.Error}
	}
	if out == nil {
		return nil
	}
	// A host's answer is untrusted: a key in another case, or given
	// twice, would be taken silently.
	if err := result.CheckKeys(data, out); err != nil {
		return &AnswerError{Request: what, Msg: err.Error()}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &AnswerError{Request: what, Msg: err.Error()}
	}
	return nil
}

// noAnswer says that a request ran out of time, when it did.
func noAnswer(ctx context.Context, what string, budget time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %s", what, budget)
	}
	return err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// Skew is one reading of a daemon's clock against this one's.
type Skew struct {
	// Offset is the daemon's clock minus ours.
	Offset time.Duration
	// Uncertainty is half the round trip: the offset is exact within it.
	Uncertainty time.Duration
}

// String is the offset, signed, and its uncertainty: "+1.2ms (±150µs)".
func (s Skew) String() string {
	sign := ""
	if s.Offset >= 0 {
		sign = "+"
	}
	return fmt.Sprintf("%s%s (±%s)", sign, s.Offset, s.Uncertainty)
}

// Clock reads the daemon's clock NTP-style: t0 before the request, the
// daemon's time, t1 after the answer; offset = server − (t0+t1)/2. Of
// samples readings it keeps the one with the shortest round trip.
func (c *Client) Clock(ctx context.Context, samples int) (Skew, error) {
	best := Skew{Uncertainty: -1}
	for range max(samples, 1) {
		var ans runapi.Clock
		t0 := time.Now()
		if err := c.do(ctx, http.MethodGet, "/api/v1/clock", nil, &ans, maxSmallAnswer); err != nil {
			return Skew{}, err
		}
		t1 := time.Now()
		if ans.UnixNano == 0 {
			return Skew{}, &AnswerError{Request: "GET /api/v1/clock", Msg: "no unix_nano in it"}
		}
		// Wall clock, not monotonic: the daemon's is a wall clock too.
		mid := t0.UnixNano() + (t1.UnixNano()-t0.UnixNano())/2
		s := Skew{Offset: time.Duration(ans.UnixNano - mid), Uncertainty: t1.Sub(t0) / 2}
		if best.Uncertainty < 0 || s.Uncertainty < best.Uncertainty {
			best = s
		}
	}
	return best, nil
}

// Post asks for a run (or with DryRun, checks it) and returns its id.
func (c *Client) Post(ctx context.Context, req RunRequest) (string, error) {
	if req.DryRun {
		var ans runapi.Checked
		if err := c.do(ctx, http.MethodPost, "/api/v1/runs", req, &ans, maxSmallAnswer); err != nil {
			return "", err
		}
		if !ans.OK {
			return "", &AnswerError{Request: "POST /api/v1/runs", Msg: "the dry run's answer is not ok"}
		}
		return "", nil
	}
	var ans runapi.Accepted
	if err := c.do(ctx, http.MethodPost, "/api/v1/runs", req, &ans, maxSmallAnswer); err != nil {
		return "", err
	}
	if !validRunID(ans.ID) {
		return "", &AnswerError{Request: "POST /api/v1/runs", Msg: fmt.Sprintf("run id %q: want 1 to %d letters, digits, '-' or '_' (a daemon's is r-<16 hex digits>)", ans.ID[:min(len(ans.ID), 80)], maxRunID)}
	}
	return ans.ID, nil
}

// maxRunID bounds a run id from a host's answer.
const maxRunID = 64

// validRunID: an id the controller may put in a URL path and a document
// as it is (a host that answered "../../-/reload" had the controller's
// polls and its stop go to another endpoint).
func validRunID(id string) bool {
	return id != "" && len(id) <= maxRunID && strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) < 0
}

// checkState refuses a state no daemon answers: the controller would
// poll a run in it until its planned end and a minute, and write it
// into the document as the host's state.
func checkState(what string, st *RunState, err error) (*RunState, error) {
	if err == nil && !st.State.Answered() {
		return nil, &AnswerError{Request: what, Msg: fmt.Sprintf("unknown run state %q", st.State[:min(len(st.State), 80)])}
	}
	return st, err
}

// Get returns a run's state (its answer bounded for the run's planned
// length when the controller asks).
func (c *Client) Get(ctx context.Context, id string) (*RunState, error) {
	var st RunState
	return checkState("GET /api/v1/runs/"+id, &st, c.do(ctx, http.MethodGet, "/api/v1/runs/"+id, nil, &st, resultLimit(ctx)))
}

// Delete stops a run and returns its state.
func (c *Client) Delete(ctx context.Context, id string) (*RunState, error) {
	var st RunState
	return checkState("DELETE /api/v1/runs/"+id, &st, c.do(ctx, http.MethodDelete, "/api/v1/runs/"+id, nil, &st, resultLimit(ctx)))
}
