package test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// screenshotsEnv names a directory where TestHTMLPagesFitTheScreen keeps
// its screenshots, for a person to look at; by default they go with the
// test's temporary directory.
const screenshotsEnv = "IOPROBE_SCREENSHOTS"

// TestHTMLPagesFitTheScreen renders the report of one run and of a suite
// in headless Chromium, on a 1366-pixel laptop screen and a 420-pixel
// phone: the page never scrolls sideways (a wide table scrolls in its own
// box), nothing goes to the console as an error, nothing is fetched from
// elsewhere. A single run's page draws what a single run has — its
// latency distribution and its intervals over time — and no chart of one
// bar.
func TestHTMLPagesFitTheScreen(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	shots := os.Getenv(screenshotsEnv)
	if shots == "" {
		shots = dir
	}
	run := ioprobe(t, dir, "run", "--target", "probe.dat", "--size", "32MiB", "--bs", "4k:70,64k:30", "--read-pct", "70",
		"--duration", "3s", "--ramp", "0s", "--interval", "250ms", "--output", "json", "--out", "run.json")
	require.Equal(t, 0, run.code, run.stderr)
	suite := ioprobe(t, dir, "suite", "characterize", "--target", "probe.dat", "--size", "32MiB", "--cycle", "bs=4k,64k",
		"--duration", "300ms", "--ramp", "0s", "--output", "json", "--out", "suite.json")
	require.Equal(t, 0, suite.code, suite.stderr)
	for _, name := range []string{"run", "suite"} {
		o := ioprobe(t, dir, "report", name+".json", "--output", "html", "--out", name+".html")
		require.Equal(t, 0, o.code, o.stderr)
	}

	b := startBrowser(t)
	for _, name := range []string{"run", "suite"} {
		for _, width := range []int{1366, 420} {
			t.Run(fmt.Sprintf("%s at %d px", name, width), func(t *testing.T) {
				p := b.open("file://"+filepath.Join(dir, name+".html"), width, 900)
				var got struct {
					ScrollWidth, InnerWidth int
					Wider                   []string
				}
				// What sticks out, by tag, class and width, for the
				// failure's message.
				p.eval(`(() => {
					const w = window.innerWidth, out = [];
					for (const e of document.querySelectorAll('body *')) {
						const r = e.getBoundingClientRect();
						if (r.right > w + 0.5 && getComputedStyle(e).position !== 'fixed' && !e.closest('.scroll')) {
							out.push(e.tagName.toLowerCase() + '.' + (e.getAttribute('class') || '') + ' ' + Math.round(r.right));
						}
					}
					return {ScrollWidth: document.documentElement.scrollWidth, InnerWidth: w, Wider: out.slice(0, 10)};
				})()`, &got)
				p.screenshot(filepath.Join(shots, fmt.Sprintf("%s-%d.png", name, width)))
				require.Equal(t, width, got.InnerWidth, "the viewport (scroll width %d: %q)", got.ScrollWidth, got.Wider)
				require.LessOrEqual(t, got.ScrollWidth, got.InnerWidth, "the page scrolls sideways: %q", got.Wider)
				require.Empty(t, p.errors, "console errors")
				require.Empty(t, p.requests, "requests for anything but the page")
			})
		}
	}

	// What a single run's page draws.
	p := b.open("file://"+filepath.Join(dir, "run.html"), 1366, 900)
	var charts []struct {
		Title string
		Bars  int
		Lines int
	}
	p.eval(`[...document.querySelectorAll('svg.chart')].map(s => ({Title: s.querySelector('title').textContent,
		Bars: s.querySelectorAll('rect.bar').length, Lines: s.querySelectorAll('path.line').length}))`, &charts)
	require.NotEmpty(t, charts)
	var titles []string
	for _, c := range charts {
		titles = append(titles, c.Title)
		require.NotEqual(t, 1, c.Bars, "%q is a chart of one bar", c.Title)
	}
	require.Contains(t, fmt.Sprint(titles), "Latency distribution")
	require.Contains(t, fmt.Sprint(titles), "I/O rate over time")
	require.Contains(t, fmt.Sprint(titles), "Response time over time")
}
