#!/usr/bin/env bash
# Builds Prometheus 3's server and promtool from the Go module proxy into
# .tools/prometheus3 (git-ignored), the newest Prometheus the monitoring
# tests run against (test/helpers_prometheus_test.go); Debian's 2.42 in /usr/bin
# stays the older target. Then promtool of Prometheus 3.5, the long-term
# support release, into .tools/prometheus-lts, from the wrapper module in
# scripts/promtool-lts (Prometheus' go.mod has a replace directive, which
# `go install module@version` refuses): the shipped configs and rules are
# checked with it too. Each is skipped when that release is already there.
#
# While they build, .tools/prometheus3.building and
# .tools/prometheus-lts.building hold the pid of the process building
# each (both written at the start): a test that needs one waits for it
# (make test starts this script in the background at once, so that it
# overlaps the package installs, the lint and the tests that do not need
# it, and starts the tests that need it once --built says Prometheus 3 is
# there). The binaries of each appear together, when they are built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The one place the Prometheus 3 release is pinned.
PROMETHEUS3_VERSION=v0.316.0 # module version of Prometheus 3.16.0
# The LTS release is pinned by its wrapper module's require line.
lts_mod=$root/scripts/promtool-lts
PROMETHEUS_LTS_VERSION=$(sed -n 's|^require github.com/prometheus/prometheus \(v[^ ]*\).*|\1|p' "$lts_mod/go.mod")
# Module v0.MMM.P is Prometheus M.MM.P (v0.305.0: 3.5.0).
lts_release() {
	local m=${PROMETHEUS_LTS_VERSION#v0.}
	echo "$((${m%%.*} / 100)).$((10#${m%%.*} % 100)).${m#*.}"
}
tools=$root/.tools
dir=$tools/prometheus3
lts=$tools/prometheus-lts
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

have3() {
	[ "$(cat "$dir/VERSION" 2>/dev/null)" = "$PROMETHEUS3_VERSION" ] &&
		[ -x "$dir/prometheus" ] && [ -x "$dir/promtool" ]
}
havelts() {
	[ "$(cat "$lts/VERSION" 2>/dev/null)" = "$PROMETHEUS_LTS_VERSION" ] && [ -x "$lts/promtool" ]
}
# --built: only say (exit status) whether Prometheus 3 of the pinned
# release is built; make test starts its Prometheus tests when it is.
case ${1:-} in
"") ;;
--built)
	have3
	exit
	;;
*)
	echo "prometheus3: unknown argument $1" >&2
	exit 2
	;;
esac
if have3 && havelts; then
	echo "prometheus3: Prometheus 3 ($PROMETHEUS3_VERSION) is in $dir, promtool $(lts_release) in $lts"
	exit 0
fi
if ! command -v "$go" >/dev/null 2>&1; then
	echo "prometheus3: no go to build Prometheus 3: its tests will skip" >&2
	exit 0
fi
mkdir -p "$tools"
busy3=$tools/prometheus3.building
busylts=$tools/prometheus-lts.building
new3=$tools/prometheus3.new
newlts=$tools/prometheus-lts.new
trap 'rm -rf "$busy3" "$busylts" "$new3" "$newlts"' EXIT
# Both files at once, this script's pid in each: whoever looks finds the
# build it waits for under way. The Prometheus 3 build's own pid replaces
# it in a moment, so that its tests need not wait for the LTS promtool.
have3 || echo $$ >"$busy3"
havelts || echo $$ >"$busylts"

# remove_all_sd: no cloud service discoveries (the tests use static
# targets). -N -l: no optimisation or inlining, which cuts the compile by
# about a third on 2 cores (214 s instead of 297 s); these binaries only
# serve the tests. -s -w: no symbol tables, a faster link.
build3() {
	rm -rf "$new3"
	mkdir -p "$new3"
	echo "prometheus3: building prometheus and promtool $PROMETHEUS3_VERSION into $dir (minutes, then cached)"
	if GOBIN=$new3 GOFLAGS=-buildvcs=false CGO_ENABLED=0 "$go" install -tags remove_all_sd \
		-gcflags='all=-N -l' -ldflags='-s -w' \
		"github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS3_VERSION" \
		"github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS3_VERSION"; then
		echo "$PROMETHEUS3_VERSION" >"$new3/VERSION"
		rm -rf "$dir"
		mv "$new3" "$dir"
		echo "prometheus3: built into $dir"
	else
		echo "prometheus3: building Prometheus 3 failed: its tests will skip" >&2
	fi
	rm -f "$busy3"
}

# promtool alone (the tests run no 3.5 server), from the wrapper module:
# the same flags, and the release's version stamped in as Prometheus'
# own build does.
buildlts() {
	local release
	release=$(lts_release)
	rm -rf "$newlts"
	mkdir -p "$newlts"
	echo "prometheus3: building promtool $release ($PROMETHEUS_LTS_VERSION, scripts/promtool-lts) into $lts"
	if (cd "$lts_mod" && GOFLAGS='-buildvcs=false -mod=readonly' CGO_ENABLED=0 "$go" build -tags remove_all_sd \
		-gcflags='all=-N -l' -ldflags="-s -w -X github.com/prometheus/common/version.Version=$release" \
		-o "$newlts/promtool" github.com/prometheus/prometheus/cmd/promtool); then
		echo "$PROMETHEUS_LTS_VERSION" >"$newlts/VERSION"
		rm -rf "$lts"
		mv "$newlts" "$lts"
		echo "prometheus3: built promtool $release into $lts"
	else
		echo "prometheus3: building promtool $release failed: its checks will skip" >&2
	fi
	rm -f "$busylts"
}

# One after the other: the tests that run Prometheus 3 need it first, and
# two builds at once on 2 cores would only delay it.
if ! have3; then
	build3 &
	echo $! >"$busy3"
	wait $! || true
fi
havelts || buildlts
