#!/usr/bin/env bash
# Builds Prometheus 3's server and promtool from the Go module proxy into
# .tools/prometheus3 (git-ignored), the newest Prometheus the monitoring
# tests run against (test/prometheus_test.go); Debian's 2.42 in /usr/bin
# stays the older target. Skipped when that release is already there.
#
# While it builds, .tools/prometheus3.building holds its pid: a test that
# needs Prometheus 3 waits for it (make test starts this build in the
# background at once, so that it overlaps the package installs, the lint
# and the tests that do not need it). The binaries appear together, when
# both are built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The one place the Prometheus 3 release is pinned.
PROMETHEUS3_VERSION=v0.316.0 # module version of Prometheus 3.16.0
dir=$root/.tools/prometheus3
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

if [ "$(cat "$dir/VERSION" 2>/dev/null)" = "$PROMETHEUS3_VERSION" ] &&
	[ -x "$dir/prometheus" ] && [ -x "$dir/promtool" ]; then
	echo "prometheus3: Prometheus 3 ($PROMETHEUS3_VERSION) is in $dir"
	exit 0
fi
if ! command -v "$go" >/dev/null 2>&1; then
	echo "prometheus3: no go to build Prometheus 3: its tests will skip" >&2
	exit 0
fi
mkdir -p "$root/.tools"
busy=$root/.tools/prometheus3.building
new=$root/.tools/prometheus3.new
echo $$ >"$busy"
trap 'rm -rf "$busy" "$new"' EXIT
rm -rf "$new"
mkdir -p "$new"
echo "prometheus3: building prometheus and promtool $PROMETHEUS3_VERSION into $dir (minutes, then cached)"
# remove_all_sd: no cloud service discoveries (the tests use static
# targets). -N -l: no optimisation or inlining, which cuts the compile by
# about a third on 2 cores (214 s instead of 297 s); these binaries only
# serve the tests. -s -w: no symbol tables, a faster link.
if GOBIN=$new GOFLAGS=-buildvcs=false CGO_ENABLED=0 "$go" install -tags remove_all_sd \
	-gcflags='all=-N -l' -ldflags='-s -w' \
	"github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS3_VERSION" \
	"github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS3_VERSION"; then
	echo "$PROMETHEUS3_VERSION" >"$new/VERSION"
	rm -rf "$dir"
	mv "$new" "$dir"
	echo "prometheus3: built into $dir"
else
	echo "prometheus3: building Prometheus 3 failed: its tests will skip" >&2
fi
