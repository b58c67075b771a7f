package test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// browser is a headless Chromium driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: commands on its fd 3, answers and
// events on its fd 4, each a JSON message ended by a NUL byte): the real
// browser, with no WebSocket client and no npm package between.
type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      *os.File // our end of its fd 3
	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpMessage
	events  chan cdpMessage
	done    chan struct{}
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// cdpWait bounds every answer the browser owes: it is a liveness guard,
// not a speed test.
const cdpWait = time.Minute

// startBrowser starts headless Chromium with a profile of its own; it is
// stopped, by its pid, when the test ends.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	testdeps.Need(t, testdeps.Tool("chromium"))
	toBrowser, ourIn, err := os.Pipe()
	require.NoError(t, err)
	ourOut, fromBrowser, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-default-apps",
		"--disable-sync", "--hide-scrollbars", "--mute-audio", "--user-data-dir="+t.TempDir(),
		"--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser} // its fds 3 and 4
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	toBrowser.Close()
	fromBrowser.Close()
	b := &browser{t: t, cmd: cmd, in: ourIn, waiting: map[int]chan cdpMessage{}, events: make(chan cdpMessage, 4096), done: make(chan struct{})}
	go b.read(ourOut)
	t.Cleanup(func() {
		ourIn.Close()
		// Chromium's helpers are its process group's: stop them with it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		ourOut.Close()
	})
	return b
}

func (b *browser) read(f *os.File) {
	defer close(b.done)
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.waiting[m.ID]
			delete(b.waiting, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case b.events <- m:
		default: // nobody reads that many events: drop the rest
		}
	}
}

// call sends a command (to a page's session, or the browser's when
// session is "") and returns its result.
func (b *browser) call(session, method string, params any) json.RawMessage {
	b.t.Helper()
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpMessage, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	p, err := json.Marshal(params)
	require.NoError(b.t, err)
	msg, err := json.Marshal(cdpMessage{ID: id, Method: method, SessionID: session, Params: p})
	require.NoError(b.t, err)
	_, err = b.in.Write(append(msg, 0))
	require.NoError(b.t, err, "chromium stopped listening")
	select {
	case m := <-ch:
		require.Nil(b.t, m.Error, "%s: %+v", method, m.Error)
		return m.Result
	case <-b.done:
		b.t.Fatalf("chromium ended before answering %s", method)
	case <-time.After(cdpWait):
		b.t.Fatalf("chromium did not answer %s", method)
	}
	return nil
}

// tab is one page, and what it saw: console errors, uncaught
// exceptions, and requests for anything but the page itself.
type tab struct {
	b        *browser
	session  string
	errors   []string
	requests []string
}

// open makes a new tab of width × height CSS pixels (a phone's viewport
// when narrow) and loads url in it, waiting for its load event.
func (b *browser) open(url string, width, height int) *tab {
	b.t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	require.NoError(b.t, json.Unmarshal(b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}), &target))
	var att struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(b.t, json.Unmarshal(b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}), &att))
	p := &tab{b: b, session: att.SessionID}
	for _, domain := range []string{"Page", "Runtime", "Log", "Network"} {
		b.call(p.session, domain+".enable", map[string]any{})
	}
	b.call(p.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height,
		"deviceScaleFactor": 1, "mobile": width < 600})
	b.call(p.session, "Page.navigate", map[string]any{"url": url})
	deadline := time.After(cdpWait)
	for loaded := false; !loaded; {
		select {
		case m := <-b.events:
			loaded = p.note(m)
		case <-deadline:
			b.t.Fatalf("%s did not load", url)
		}
	}
	// Events that came with the load, without waiting for more.
	for drained := false; !drained; {
		select {
		case m := <-b.events:
			p.note(m)
		default:
			drained = true
		}
	}
	return p
}

// note records what an event says about the page; true at its load.
func (p *tab) note(m cdpMessage) bool {
	if m.SessionID != p.session {
		return false
	}
	switch m.Method {
	case "Page.loadEventFired":
		return true
	case "Runtime.consoleAPICalled":
		var e struct {
			Type string `json:"type"`
			Args []struct {
				Value any `json:"value"`
			} `json:"args"`
		}
		if json.Unmarshal(m.Params, &e) == nil && (e.Type == "error" || e.Type == "assert") {
			p.errors = append(p.errors, fmt.Sprintf("console.%s %v", e.Type, e.Args))
		}
	case "Runtime.exceptionThrown":
		p.errors = append(p.errors, "exception: "+string(m.Params))
	case "Log.entryAdded":
		var e struct {
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
		}
		if json.Unmarshal(m.Params, &e) == nil && e.Entry.Level == "error" {
			p.errors = append(p.errors, e.Entry.Text+" "+e.Entry.URL)
		}
	case "Network.requestWillBeSent":
		var e struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		if json.Unmarshal(m.Params, &e) == nil && !strings.HasPrefix(e.Request.URL, "file:") && !strings.HasPrefix(e.Request.URL, "data:") {
			p.requests = append(p.requests, e.Request.URL)
		}
	}
	return false
}

// eval evaluates a JavaScript expression in the page and decodes its
// value into v.
func (p *tab) eval(expr string, v any) {
	p.b.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	require.NoError(p.b.t, json.Unmarshal(p.b.call(p.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}), &r))
	require.Nil(p.b.t, r.ExceptionDetails, expr)
	require.NoError(p.b.t, json.Unmarshal(r.Result.Value, v), expr)
}

// screenshot saves the whole page (beyond the viewport) as a PNG.
func (p *tab) screenshot(path string) {
	p.b.t.Helper()
	var size struct {
		W, H float64
	}
	p.eval(`({W: document.documentElement.scrollWidth, H: document.documentElement.scrollHeight})`, &size)
	var shot struct {
		Data string `json:"data"`
	}
	require.NoError(p.b.t, json.Unmarshal(p.b.call(p.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": size.W, "height": min(size.H, 16000), "scale": 1}}), &shot))
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	require.NoError(p.b.t, err)
	require.NoError(p.b.t, os.WriteFile(path, png, 0o644))
}
