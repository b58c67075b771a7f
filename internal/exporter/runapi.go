package exporter

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/runapi"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/internal/strictjson"
	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// The run API proper: a client (ioprobe fleet) posts a workload for a
// configured target, the daemon prepares the target at once and starts
// the ramp-up at the instant asked for, and the client collects the
// result by id. README.md ("Run API") documents it.
//
//	GET    /api/v1/clock      the daemon's wall clock, for the client's skew check
//	POST   /api/v1/runs       (admin API) accept a run: 202 {id, state, url}
//	GET    /api/v1/runs/ID    its state, and its result once it has one
//	DELETE /api/v1/runs/ID    (admin API) stop it

// Bounds of the run API that the config does not set.
const (
	maxRunBody = 64 << 10 // bytes of a POST /api/v1/runs body
	// maxUnfinishedAPIRuns bounds runs accepted and not finished (one per
	// device holds them far below it on real machines).
	maxUnfinishedAPIRuns = 64
	maxRunSpecs          = 16
	maxLabelLen          = 128
	// maxNameLen bounds a pattern's and a spec's name (Iometer's and
	// fio's job names may be long).
	maxNameLen = 256
	// bodyReadTimeout bounds the reading of a body: the server has no
	// read timeout (a /probe may take minutes).
	bodyReadTimeout = 10 * time.Second
	// stopWait bounds how long DELETE waits for the run to end (a run
	// stops at its next snapshot tick or chunk of preparation).
	stopWait = 30 * time.Second
)

// apiJob is the ioprobe_job label of every API run's series: a fixed value,
// so that the labels clients choose never multiply series (the label is
// in the run's state and in the history). The config reserves the name.
const apiJob = config.APIJobName

// runRequest is the body of POST /api/v1/runs.
type runRequest = runapi.RunRequest

// apiSpec is an access specification as ioprobe.result/v1's "workload"
// carries it: what a spec may hold (anything else is an unknown field).
// read_pct and random_pct are required (unless lines are given): a
// missing read_pct read as 0 would be a write workload nobody asked for.
type apiSpec struct {
	result.Workload
	ReadPct   *int `json:"read_pct"`
	RandomPct *int `json:"random_pct"`
}

// badRequest is a refusal of the request as given (400, or the code set).
type badRequest struct {
	code int
	msg  string
}

func (e *badRequest) Error() string { return e.msg }

func refuse(format string, args ...any) *badRequest {
	return &badRequest{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// specError names a spec's bad field by its JSON key.
func specError(i int, err error) *badRequest {
	var fe *workload.FieldError
	if errors.As(err, &fe) {
		key := fe.Spec.APIKey()
		if fe.Line > 0 {
			key = fmt.Sprintf("lines[%d]", fe.Line-1)
		}
		if key == "" {
			key = strings.TrimPrefix(fe.Field, "--")
		}
		return refuse("specs[%d].%s %s: %s", i, key, fe.Value, fe.Reason)
	}
	return refuse("specs[%d]: %v", i, err)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// decodeSpec reads spec i: strictly as a result's workload entry (an
// unknown field is an error), then as workload.Spec's own JSON, so that
// every field the two share reaches the run as `ioprobe run` would set
// it, including fields added to both later. What only the result has:
// the times, and engine_requested (what was asked; engine is what ran).
func decodeSpec(i int, raw json.RawMessage) (workload.Spec, sentTimes, *badRequest) {
	// encoding/json matches keys case-insensitively: "Lines" would be
	// decoded as lines while the checks below read keys["lines"].
	if err := strictjson.Check(raw, &apiSpec{}, fmt.Sprintf("specs[%d]", i)); err != nil {
		return workload.Spec{}, sentTimes{}, refuse("%v", err)
	}
	var a apiSpec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return workload.Spec{}, sentTimes{}, refuse("specs[%d]: %s", i, strings.TrimPrefix(err.Error(), "json: "))
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys) // decoded above: an object
	if rawLines, ok := keys["lines"]; ok {
		if bad := checkLines(i, rawLines); bad != nil {
			return workload.Spec{}, sentTimes{}, bad
		}
	} else if a.ReadPct == nil || a.RandomPct == nil {
		// A multi-line spec (lines) says them line by line.
		return workload.Spec{}, sentTimes{}, refuse("specs[%d]: read_pct and random_pct are required", i)
	}
	var s workload.Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return workload.Spec{}, sentTimes{}, refuse("specs[%d]: %s", i, strings.TrimPrefix(err.Error(), "json: "))
	}
	s.Ramp, s.Duration = seconds(a.RampSeconds), seconds(a.DurationSeconds)
	if a.EngineRequested != "" {
		s.Engine = a.EngineRequested
	}
	var sent sentTimes
	for _, t := range []struct {
		f   workload.SpecField
		dst *sentAs
	}{{workload.FieldRamp, &sent.ramp}, {workload.FieldDuration, &sent.duration}} {
		key := t.f.APIKey()
		if v, ok := keys[key]; ok {
			*t.dst = sentAs{key: fmt.Sprintf("specs[%d].%s", i, key), value: string(v)}
		}
	}
	return s, sent, nil
}

// sentAs is how a client sent a spec's ramp or duration, so that a
// refusal names the key it used: the request's "duration": "10m" or a
// spec's "duration_seconds": 600 (key "" when it sent neither).
type sentAs struct{ key, value string }

// sentTimes is how a spec's ramp and duration were sent.
type sentTimes struct{ ramp, duration sentAs }

// name is the key and value as sent, or the default the spec took.
func (s sentAs) name(f workload.SpecField, v time.Duration) string {
	if s.key == "" {
		return fmt.Sprintf("%s (not given: the default, %s)", f.ConfigKey(), v)
	}
	return s.key + " " + s.value
}

// apiLine is what a line of a spec must say: a missing share, read_pct
// or random_pct would read as 0, and a line of reads whose read_pct was
// forgotten would write.
type apiLine struct {
	Share     *int `json:"share"`
	ReadPct   *int `json:"read_pct"`
	RandomPct *int `json:"random_pct"`
}

// checkLines refuses the lines of spec i that would not run as written:
// none (an empty or null lines, which would leave the spec's own
// read_pct unset, 0: writes), a line without its share, read_pct or
// random_pct, and a line of share 0, which never runs. Validate checks
// the rest (sizes, ranges, the shares' sum) as for --line.
func checkLines(i int, raw json.RawMessage) *badRequest {
	var lines []apiLine
	if err := json.Unmarshal(raw, &lines); err != nil {
		return refuse("specs[%d].lines: %s", i, strings.TrimPrefix(err.Error(), "json: "))
	}
	if len(lines) == 0 {
		return refuse("specs[%d].lines: empty: give at least one line, or no lines and the spec's read_pct and random_pct", i)
	}
	for j, l := range lines {
		switch {
		case l.Share == nil || l.ReadPct == nil || l.RandomPct == nil:
			return refuse("specs[%d].lines[%d]: share, read_pct and random_pct are required", i, j)
		case *l.Share < 1:
			return refuse("specs[%d].lines[%d].share %d: must be at least 1 (%% of the specification; leave out a line that never runs)", i, j, *l.Share)
		}
	}
	return nil
}

// jsonBody refuses a body that does not say it is JSON (415). A web
// page can make a browser send a form (text/plain, form-urlencoded,
// multipart) or a fetch of a typeless blob to any address without asking
// the daemon first; JSON it cannot send without the daemon's CORS
// consent, which the daemon never gives.
func jsonBody(r *http.Request) *badRequest {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return nil
	}
	return &badRequest{code: http.StatusUnsupportedMediaType, msg: fmt.Sprintf("Content-Type %q: the body must be application/json", ct)}
}

// decodeRunRequest reads a bounded body strictly: unknown fields and
// trailing data are errors, a body over maxRunBody is 413.
func decodeRunRequest(w http.ResponseWriter, r *http.Request) (*runRequest, *badRequest) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRunBody))
	var req runRequest
	if err == nil {
		// Keys as written, each once: encoding/json would take "Target"
		// for target, and the last of two.
		if kerr := strictjson.Check(body, &req, ""); kerr != nil {
			return nil, refuse("bad request body: %v", kerr)
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		err = dec.Decode(&req)
		if err == nil && dec.Decode(&struct{}{}) != io.EOF {
			err = errors.New("trailing data after the JSON object")
		}
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, &badRequest{code: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("the request body is larger than %d bytes", maxRunBody)}
	case errors.Is(err, io.EOF):
		return nil, refuse("the request body is empty: want a JSON object")
	case err != nil:
		return nil, refuse("bad request body: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return &req, nil
}

// printableName: at most limit bytes, every character printable (no
// control character, bidi override or stray byte).
func printableName(s string, limit int) bool {
	return len(s) <= limit && utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

// plannedRun is a request that passed every check.
type plannedRun struct {
	target  *config.Target
	unit    suiterun.Unit
	startAt time.Time
	label   string
}

// planRun checks a request as `ioprobe run` checks its flags, plus the
// config's api.runs limits, and the target's safety rules without
// touching it.
func (d *Daemon) planRun(cfg *config.Config, req *runRequest, now time.Time) (*plannedRun, *badRequest) {
	lim := cfg.API.Runs
	if req.Target == "" {
		return nil, refuse("target: required (the name of a target in the daemon's config)")
	}
	t := cfg.Targets[req.Target]
	if t == nil {
		return nil, &badRequest{code: http.StatusNotFound, msg: fmt.Sprintf("target %q is not configured on this daemon", req.Target)}
	}
	if len(req.Specs) == 0 || len(req.Specs) > maxRunSpecs {
		return nil, refuse("specs: want 1 to %d access specifications (got %d)", maxRunSpecs, len(req.Specs))
	}
	label := req.Label
	if label == "" {
		label = "api"
	}
	// Names end up in results, reports and logs: printable, bounded.
	for _, f := range []struct {
		key, v string
		limit  int
	}{{"label", label, maxLabelLen}, {"pattern", req.Pattern, maxNameLen}} {
		if !printableName(f.v, f.limit) {
			return nil, refuse("%s: at most %d printable characters", f.key, f.limit)
		}
	}
	if req.Size < 0 {
		return nil, refuse("size %d: must not be negative", req.Size)
	}
	var ramp, dur *time.Duration
	for _, f := range []struct {
		key string
		v   string
		dst **time.Duration
	}{{"ramp", req.Ramp, &ramp}, {"duration", req.Duration, &dur}} {
		if f.v == "" {
			continue
		}
		v, err := time.ParseDuration(f.v)
		if err != nil {
			return nil, refuse("%s %q: want a duration like 10s or 1m", f.key, f.v)
		}
		*f.dst = &v
	}
	// The request's own ramp and duration, when given, are what every
	// spec runs with: a refusal names them as sent.
	var topRamp, topDur sentAs
	if ramp != nil {
		topRamp = sentAs{key: "ramp", value: strconv.Quote(req.Ramp)}
	}
	if dur != nil {
		topDur = sentAs{key: "duration", value: strconv.Quote(req.Duration)}
	}
	var startAt time.Time
	if req.StartAt != "" {
		var err error
		if startAt, err = time.Parse(time.RFC3339Nano, req.StartAt); err != nil {
			return nil, refuse("start_at %q: want an RFC 3339 time like 2026-12-01T10:00:00Z", req.StartAt)
		}
		if !startAt.After(now) {
			return nil, refuse("start_at %s: is in the past (the daemon's clock reads %s)", req.StartAt, now.UTC().Format(time.RFC3339Nano))
		}
		if ahead := startAt.Sub(now); ahead > lim.MaxStartDelay {
			return nil, refuse("start_at %s: is %s ahead, more than %s allows (%s)", req.StartAt, ahead.Round(time.Second), config.APIKey("max_start_delay"), lim.MaxStartDelay)
		}
	}
	u := suiterun.Unit{Point: workload.SuitePoint{Name: label, Pattern: req.Pattern, Size: req.Size}, Targets: []string{t.Path}}
	for i, raw := range req.Specs {
		s, sent, bad := decodeSpec(i, raw)
		if bad != nil {
			return nil, bad
		}
		if !printableName(s.Name, maxNameLen) {
			return nil, refuse("specs[%d].name: at most %d printable characters", i, maxNameLen)
		}
		if ramp != nil {
			s.Ramp, sent.ramp = *ramp, topRamp
		} else if s.Ramp == 0 && s.Duration == 0 {
			s.Ramp = workload.DefaultRamp
		}
		if dur != nil {
			s.Duration, sent.duration = *dur, topDur
		} else if s.Duration == 0 {
			s.Duration = workload.DefaultDuration
		}
		s = s.WithDefaults()
		if err := d.checkRegion(t, &s); err != nil {
			return nil, refuse("specs[%d].region_bytes %s: %v", i, workload.FormatSize(s.RegionBytes), err)
		}
		if err := s.Validate(); err != nil { // the region too: the target's when the spec has none
			return nil, specError(i, err)
		}
		if err := checkLimits(lim, s); err != nil {
			return nil, limitRefusal(i, err, s, sent)
		}
		if i > 0 && (s.Ramp != u.Point.Specs[0].Ramp || s.Duration != u.Point.Specs[0].Duration) {
			return nil, refuse("specs[%d]: its ramp and duration differ from specs[0]'s: specs run at once (give ramp and duration once, at the top)", i)
		}
		u.Point.Specs = append(u.Point.Specs, s)
	}
	if _, err := d.settings(t, 0).Check([]suiterun.Unit{u}); err != nil {
		return nil, refuse("target %q: %v", t.Name, err)
	}
	return &plannedRun{target: t, unit: u, startAt: startAt, label: label}, nil
}

// limitError is a spec over an api.runs limit: its field, its value
// there, and why.
type limitError struct {
	field  workload.SpecField
	value  string
	reason string
}

func (e *limitError) Error() string { return e.field.APIKey() + " " + e.value + ": " + e.reason }

// limitRefusal names the field over a limit as the client sent it: the
// request's "duration" or "ramp" (which every spec takes), else spec i's
// key, or the default the spec took when nothing was sent.
func limitRefusal(i int, err error, s workload.Spec, sent sentTimes) *badRequest {
	var le *limitError
	if !errors.As(err, &le) {
		return refuse("specs[%d]: %v", i, err)
	}
	switch le.field {
	case workload.FieldRamp:
		return refuse("%s: %s", sent.ramp.name(le.field, s.Ramp), le.reason)
	case workload.FieldDuration:
		return refuse("%s: %s", sent.duration.name(le.field, s.Duration), le.reason)
	}
	return refuse("specs[%d].%s %s: %s", i, le.field.APIKey(), le.value, le.reason)
}

// checkLimits checks a spec against api.runs: a *limitError.
func checkLimits(lim config.APIRuns, s workload.Spec) error {
	over := func(f workload.SpecField, v any, format string, args ...any) error {
		return &limitError{field: f, value: fmt.Sprint(v), reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case s.Ramp > lim.MaxRamp:
		return over(workload.FieldRamp, s.Ramp, "more than %s allows (%s)", config.APIKey("max_ramp"), lim.MaxRamp)
	case s.Ramp+s.Duration > lim.MaxDuration:
		return over(workload.FieldDuration, s.Duration, "ramp + duration %s is more than %s allows (%s)", s.Ramp+s.Duration, config.APIKey("max_duration"), lim.MaxDuration)
	case s.QueueDepth > lim.MaxQueueDepth:
		return over(workload.FieldQueueDepth, s.QueueDepth, "more than %s allows (%d)", config.APIKey("max_queue_depth"), lim.MaxQueueDepth)
	case s.Workers > lim.MaxWorkers:
		return over(workload.FieldWorkers, s.Workers, "more than %s allows (%d)", config.APIKey("max_workers"), lim.MaxWorkers)
	case s.WritesData() && !lim.AllowWrites:
		_, readPct, _ := s.Mix() // a multi-line spec's reads are in its lines
		return over(workload.FieldReadPct, readPct, "writes are refused (%s: false)", config.APIKey("allow_writes"))
	}
	return nil
}

// checkRegion gives a spec without a region the target's, and refuses a
// region larger than the target's: the configured size, else the size of
// an existing file (a new one is created at the default region).
func (d *Daemon) checkRegion(t *config.Target, s *workload.Spec) error {
	if s.RegionBytes == 0 {
		s.RegionBytes = t.Size
		return nil
	}
	limit, what := t.Size, "the target's configured size"
	if limit == 0 {
		limit, what = workload.DefaultRegion, "the size of a target file ioprobe creates"
		if st, err := os.Stat(t.Path); err == nil && st.Mode().IsRegular() {
			limit, what = st.Size(), "the target file's size"
		}
	}
	if limit > 0 && s.RegionBytes > limit {
		return fmt.Errorf("larger than %s (%s)", what, workload.FormatSize(limit))
	}
	return nil
}

func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "r-" + hex.EncodeToString(b[:])
}

// adminRefused answers 403 when the admin API is off.
func (d *Daemon) adminRefused(w http.ResponseWriter) bool {
	if d.opts.Web.EnableAdminAPI {
		return false
	}
	w.Header().Set("Connection", "close") // a body, if any, is not read
	writeJSON(w, http.StatusForbidden, apiError{"the admin API is disabled: start ioprobe serve with --web.enable-admin-api"})
	return true
}

func (d *Daemon) handlePostRun(w http.ResponseWriter, r *http.Request) {
	if d.adminRefused(w) {
		return
	}
	if bad := jsonBody(r); bad != nil {
		w.Header().Set("Connection", "close") // the body is not read
		writeJSON(w, bad.code, apiError{bad.msg})
		return
	}
	req, bad := decodeRunRequest(w, r)
	if bad != nil {
		w.Header().Set("Connection", "close") // what is left of the body is not read
		writeJSON(w, bad.code, apiError{bad.msg})
		return
	}
	p, bad := d.planRun(d.cfg.Load(), req, time.Now())
	if bad != nil {
		writeJSON(w, bad.code, apiError{bad.msg})
		return
	}
	if req.DryRun {
		writeJSON(w, http.StatusOK, checkedRun(p))
		return
	}
	run, bad := d.apiRuns.start(d, p)
	if bad != nil {
		writeJSON(w, bad.code, apiError{bad.msg})
		return
	}
	writeJSON(w, http.StatusAccepted, runapi.Accepted{ID: run.id, State: result.RunAccepted, URL: "/api/v1/runs/" + run.id})
}

// checkedRun is a dry run's answer: the specs as the run would run them.
func checkedRun(p *plannedRun) runapi.Checked {
	specs := make([]runapi.SpecOut, len(p.unit.Point.Specs))
	for i, s := range p.unit.Point.Specs {
		specs[i] = runapi.SpecOut{Spec: s, RampSeconds: s.Ramp.Seconds(), DurationSeconds: s.Duration.Seconds()}
	}
	return runapi.Checked{OK: true, Specs: specs}
}

func (d *Daemon) handleGetRun(w http.ResponseWriter, r *http.Request) {
	run := d.apiRuns.get(r.PathValue("id"))
	if run == nil {
		writeJSON(w, http.StatusNotFound, apiError{fmt.Sprintf("no run %q (finished runs are kept while fewer than api.runs.keep are newer)", r.PathValue("id"))})
		return
	}
	writeJSON(w, http.StatusOK, run.state(d.host))
}

func (d *Daemon) handleDeleteRun(w http.ResponseWriter, r *http.Request) {
	if d.adminRefused(w) {
		return
	}
	run := d.apiRuns.get(r.PathValue("id"))
	if run == nil {
		writeJSON(w, http.StatusNotFound, apiError{fmt.Sprintf("no run %q", r.PathValue("id"))})
		return
	}
	run.stop("stopped through the API (DELETE)")
	ctx, cancel := context.WithTimeout(r.Context(), stopWait)
	defer cancel()
	select {
	case <-run.done:
	case <-ctx.Done():
	}
	writeJSON(w, http.StatusOK, run.state(d.host))
}

// handleClock answers the daemon's wall clock, read as late as possible
// before the answer is written. It takes no lock and waits for nothing.
func (d *Daemon) handleClock(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	now := time.Now()
	b, _ := json.Marshal(runapi.Clock{UnixNano: now.UnixNano(), Time: now.UTC().Format(time.RFC3339Nano)})
	_, _ = w.Write(append(b, '\n'))
}

// runAPI runs an accepted run to its end, holding its device (release)
// throughout.
func (d *Daemon) runAPI(ctx context.Context, run *apiRun, p *plannedRun, release func()) {
	defer d.apiRuns.finished(run)
	defer release()
	t := p.target
	plan := d.settings(t, 0).Plan(p.unit)
	plan.StartAt = p.startAt
	plan.Prepared = run.prepared
	plan.Observers = []runner.Observer{d.live.observerFor(apiJob, map[string]string{t.Path: t.Name}, p.unit.Point.Specs)}
	run.setState(result.RunPreparing)
	d.m.runActive.WithLabelValues(t.Name, apiJob).Set(1)
	res, err := runner.Run(ctx, plan)
	d.m.runActive.WithLabelValues(t.Name, apiJob).Set(0)

	f := finished{res: res, err: err, cut: ctx.Err() != nil}
	rec := &Run{Job: apiJob, Target: t.Name, Point: p.label, Trigger: "api", Label: p.label, RunID: run.id, FinishedAt: time.Now().UTC()}
	state := result.RunDone
	switch {
	case res == nil && f.cut:
		state, rec.Error = result.RunStopped, run.stopReason()+": nothing was measured"
	case res == nil:
		state = result.RunFailed
		var fe *workload.FieldError
		if errors.As(err, &fe) && fe.Field == "--start-at" {
			rec.Error = "start_at " + fe.Value + ": " + fe.Reason // the request's name for it
		}
	case res.Status == result.StatusInterrupted:
		state, rec.Error = result.RunStopped, run.stopReason()+": the result is partial"
	}
	if res != nil && (p.unit.Point.Pattern != "" || p.unit.Point.Size != 0) {
		res.Point = &result.Point{Name: p.label, Pattern: p.unit.Point.Pattern, SizeBytes: p.unit.Point.Size}
	}
	d.recordRun(f, rec, d.cfg.Load().API.Runs.Keep, nil)
	// The device is free before the run says it ended: a client that
	// sees the end and posts the next run on the target is not refused
	// as busy (release is safe to call twice).
	release()
	run.end(state, rec.Error, res)
	d.logger.Info("API run ended", "run", run.id, "label", p.label, "target", t.Name, "state", state, "err", rec.Error)
}
