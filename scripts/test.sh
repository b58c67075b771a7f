#!/usr/bin/env bash
# make test: what CI runs on a clean clone. It installs what the tests
# need (scripts/test-deps.sh), lints, and runs every test (every fuzz
# target's seeds and saved failures among them) and the concurrent
# packages under the race detector. Exploring with the fuzzer is
# `make fuzz`, not part of this (docs/reliability.md).
#
# On 2 cores from a cold cache most of this is compiling: Prometheus 3
# (about 400 CPU-seconds; 180 measured with -N -l), promtool 3.5 LTS
# (about 200 more: its dependencies' versions are not 3.16's, so little is
# shared), the race-instrumented build and the packages,
# while the tests themselves mostly wait on I/O and on the processes they
# start. So it runs in overlapping parts:
#   - Prometheus 3, then promtool of 3.5 LTS, build in the background
#     from the start, beside the package installs, the lint and the tests;
#   - the tests run without those that need the Prometheus builds (named
#     TestPrometheus…, test/helpers_prometheus_test.go): they run apart,
#     from the moment Prometheus 3 is built, beside the rest (the LTS
#     promtool's test waits for its build there), so that neither waits
#     for the other;
#   - the lint (vet, staticcheck) and then the race detector run in the
#     background beside the tests, at a lower priority than they have.
# Every log is printed, and the last lines say what failed.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
export GO
mkdir -p .tools
logs=.tools/logs
rm -rf "$logs"
mkdir -p "$logs"
t0=$SECONDS
began=$(date +%s)
# mark prints a phase's start with the time since make test began.
mark() { printf '=== [%02d:%02d] %s\n' $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60)) "$*"; }
# cputime prints the CPU time that the calling shell's finished children
# have used (bash's times: its second line), so that each part's log and
# the end of make test say what the work cost beside how long it took: on
# 2 cores, make test cannot end sooner than its CPU time over 2.
# (times itself, not in a $(…) subshell, which has no children of its own.)
cputime() {
	local f u s
	f=$(mktemp)
	times >"$f"
	{
		read -r _
		read -r u s
	} <"$f"
	rm -f "$f"
	echo "cpu: $1: user $u, system $s"
}
export -f cputime

# Background jobs run in their own process groups (setsid), stopped with
# their children if make test ends early.
bg=()
stop_bg() {
	local pid
	for pid in "${bg[@]}"; do
		kill -- "-$pid" 2>/dev/null || true
	done
}
trap stop_bg EXIT

mark "Prometheus 3 build starts in the background ($logs/prometheus3.log)"
# It is what a cold make test waits for longest (the Prometheus tests run
# after it): as root it runs at a higher priority than the tests.
up=()
[ "$(id -u)" -ne 0 ] || up=(nice -n -5)
setsid "${up[@]}" bash -c './scripts/prometheus3.sh; echo "prometheus3: done after $SECONDS s"; cputime "the Prometheus builds"' >"$logs/prometheus3.log" 2>&1 &
prom=$!
bg+=("$prom")

mark "test-deps"
./scripts/test-deps.sh --without-prometheus3 --without-staticcheck
# As root with apt-get, test-deps.sh has installed everything the tests
# need, or failed and ended make test: from here a test that finds a
# dependency missing (a failed npm ci, a Prometheus 3 build that failed in
# the background, no loop devices) fails instead of skipping
# (internal/testdeps). Anywhere else such tests skip, as run by hand.
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
	export IOPROBE_TEST_DEPS_INSTALLED=1
else
	mark "not root with apt-get: tests whose dependencies are missing skip (CI fails them)"
fi
mark "tests (without TestPrometheus…); beside them test/upstream, the lint, then the race detector ($logs/checks.log)"

# The tests that need the Prometheus builds, from the moment Prometheus 3
# is built (or its build has ended in failure: then they fail, or skip
# when run by hand). The wait polls: the build is one background process
# whose end, or its binaries' arrival, is all there is to see.
#
# The five run side by side (-parallel 5: the default is GOMAXPROCS, 2
# here): each waits on its daemons' schedules and 1 s scrapes, with
# servers and ports of its own (besideOtherPrometheusTests).
#
# The timeouts only stop a run that hangs: a green run ends long before.
# At load 28 on 2 cores the ./test package took 20 minutes, and the LTS
# promtool, which TestPrometheusRules waits for (30 minutes at most), was
# still building 20 minutes after Prometheus 3.
prom_tests='^TestPrometheus'
setsid bash -c 'until ./scripts/prometheus3.sh --built || ! kill -0 '"$prom"' 2>/dev/null; do sleep 2; done
echo "Prometheus tests: start $(($(date +%s) - $2)) s into make test"
rc=0
"$GO" test -count=1 -timeout 45m -parallel 5 -run "$1" ./test/ || rc=$?
echo "Prometheus tests: done $(($(date +%s) - $2)) s into make test"
cputime "the Prometheus tests"
exit $rc' prometheus-tests "$prom_tests" "$began" >"$logs/prometheus-tests.log" 2>&1 &
promtests=$!
bg+=("$promtests")
mark "TestPrometheus… start in the background once Prometheus 3 is built ($logs/prometheus-tests.log)"

# test/upstream is a module of its own (the Kubernetes and Prometheus
# Operator types, Prometheus' PromQL parser: about 100 CPU-seconds to
# compile cold), so that ioprobe's dependencies stay as they are; it runs
# here, at low priority beside the tests, which mostly wait.
setsid nice -n 10 bash -c 'rc=0
(cd test/upstream && "$GO" test -count=1 -timeout 10m ./...) || rc=1
echo "test/upstream: done after $SECONDS s"
./scripts/test-deps.sh --staticcheck-only && make --no-print-directory lint || rc=1
echo "lint: done after $SECONDS s"
make --no-print-directory race || rc=1
echo "race: done after $SECONDS s"
cputime "test/upstream, the lint and the race detector"
exit $rc' >"$logs/checks.log" 2>&1 &
checks=$!
bg+=("$checks")

# -parallel 4: the tests that wait and measure nothing run beside each
# other (t.Parallel, after the sequential ones: ./test's besideOthers and
# the differential blkid cases, which mostly wait on mkfs, wipefs and
# blkid); the default, GOMAXPROCS, is 2 here. Only ./test has such tests.
# (Running ./test's waiting tests in a go test of their own, beside its
# sequential ones, was tried: at load 36 the sequential ones took longer
# than the whole package alone, and the Prometheus tests timed out.)
#
# ./test/ first: go test runs packages in the order they are named, at
# most GOMAXPROCS (-p) at once, and ./test, the end-to-end package, takes
# longest while it mostly waits. Named in its place among ./... it started
# 4-5 minutes in, once the packages before it had run; first, the others
# run beside its tests (go test prints each package's result in the
# order named: ./test's first, when it ends). Its write runs then look at
# processes with busy io_urings (the uring engine's tests): the holders
# look reads a busy ring's fdinfo again for up to a second
# (internal/target).
test_rc=0
(
	rc=0
	"$GO" test -count=1 -timeout 40m -parallel 4 -skip "$prom_tests" ./test/ ./... 2>&1 || rc=$?
	cputime "the tests"
	exit $rc
) | tee "$logs/test.log" || test_rc=$?

mark "tests done"
checks_rc=0
wait "$checks" || checks_rc=$?
mark "test/upstream, the lint and the race detector (ran beside the tests)"
cat "$logs/checks.log"
prom_rc=0
wait "$promtests" || prom_rc=$?
mark "the Prometheus tests (ran once Prometheus 3 was built)"
cat "$logs/prometheus-tests.log"
wait "$prom" || true
bg=()
if [ -x .tools/prometheus3/prometheus ]; then
	tail -2 "$logs/prometheus3.log"
else
	mark "Prometheus 3 was not built: its tests failed (skipped without IOPROBE_TEST_DEPS_INSTALLED)"
	tail -20 "$logs/prometheus3.log"
fi

cputime "make test in all, on $(nproc) CPUs, in $((SECONDS - t0)) s"

echo
failed=$(grep -hE '^(--- FAIL|FAIL|panic:|gofmt would change|.*\.go:[0-9]+:[0-9]+: )' "$logs/test.log" "$logs/checks.log" "$logs/prometheus-tests.log" || true)
if [ "$test_rc" -ne 0 ] || [ "$checks_rc" -ne 0 ] || [ "$prom_rc" -ne 0 ]; then
	mark "make test: FAILED (tests: exit $test_rc; Prometheus tests: exit $prom_rc; test/upstream, lint and race detector: exit $checks_rc)"
	[ -z "$failed" ] || echo "$failed"
	exit 1
fi
mark "make test: ok (tests, Prometheus tests, test/upstream, lint, race detector; logs in $logs)"
