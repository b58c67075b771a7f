package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFleetScalingChartOverHosts: a fleet suite at two worker counts
// (--cycle workers=1,2, as the scaling suite cycles them) with --cycle
// hosts=1,2 on two daemons draws, per pattern, hosts along the x-axis and
// a line per worker count; no chart draws a line over "Workers · Hosts".
// The common start 2 s ahead: at load 28 a host prepared its 4 MiB target
// in 1.18 s, and a host not ready at the start rightly measures nothing.
func TestFleetScalingChartOverHosts(t *testing.T) {
	besideOthers(t)
	hosts := startLocalFleet(t, 2)
	dir := t.TempDir()
	out := filepath.Join(dir, "scaling.json")
	o := ioprobe(t, dir, "fleet", "suite", "custom", "--read-pct", "100", "--random-pct", "100", "--hosts", localFleetAddrs(hosts), "--target", "data", "--size", "4MiB",
		"--cycle", "workers=1,2", "--cycle", "hosts=1,2", "--ramp", "0s", "--duration", "300ms", "--start-delay", "2s", "--engine", "sync",
		"--output", "json", "--out", out)
	require.Equal(t, 0, o.code, o.stderr)
	html := ioprobe(t, dir, "report", out, "--output", "html")
	require.Equal(t, 0, html.code, html.stderr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scaling.html"), []byte(html.stdout), 0o644))

	svgs := regexp.MustCompile(`(?s)<svg class="chart".*?</svg>`).FindAllString(html.stdout, -1)
	require.NotEmpty(t, svgs)
	title := regexp.MustCompile(`<text class="title"[^>]*>([^<]*)</text>`)
	tick := regexp.MustCompile(`(?s)<text class="tick x"[^>]*>(.*?)</text>`)
	legend := regexp.MustCompile(`(?s)<text class="legend-item"[^>]*>(.*?)</text>`)
	tags := regexp.MustCompile(`<[^>]*>`)
	texts := func(re *regexp.Regexp, s string) []string {
		var out []string
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			out = append(out, tags.ReplaceAllString(m[1], ""))
		}
		return out
	}
	var patterns []string
	for _, svg := range svgs {
		ti := title.FindStringSubmatch(svg)[1]
		if strings.Contains(svg, `class="line"`) {
			for _, x := range texts(tick, svg) {
				require.NotContains(t, x, " · ", "%s: a line over two dimensions", ti)
			}
		}
		if !strings.Contains(ti, "Aggregate throughput: ") || !strings.Contains(ti, "All hosts") {
			continue
		}
		patterns = append(patterns, ti)
		require.Contains(t, svg, ">Hosts at once<", ti)
		require.Equal(t, []string{"1", "2"}, texts(tick, svg), ti)
		require.Equal(t, []string{"1 worker", "2 workers"}, texts(legend, svg), ti)
	}
	require.Len(t, patterns, 1, "a chart per pattern: %v", patterns)
}
