#!/usr/bin/env bash
# make test: what CI runs on a clean clone. It installs what the tests
# need (scripts/test-deps.sh), lints, and runs every test, the concurrent
# packages under the race detector and a short fuzz of every fuzz target.
#
# On 2 cores from a cold cache most of this is compiling: Prometheus 3
# (about 400 CPU-seconds), the race-instrumented and the fuzz-instrumented
# builds, and the packages. The tests themselves mostly wait on I/O and
# on the processes they start. So it runs in two overlapping parts:
#   - Prometheus 3 builds in the background from the start, beside the
#     package installs and the lint; a test that needs it waits for it
#     (test/prometheus_test.go);
#   - the race detector and the fuzzing run in the background beside the
#     tests, on the core the tests leave idle.
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
# mark prints a phase's start with the time since make test began.
mark() { printf '=== [%02d:%02d] %s\n' $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60)) "$*"; }

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
setsid bash -c './scripts/prometheus3.sh; echo "prometheus3: done after $SECONDS s"' >"$logs/prometheus3.log" 2>&1 &
prom=$!
bg+=("$prom")

mark "test-deps"
./scripts/test-deps.sh --without-prometheus3
mark "lint"
make --no-print-directory lint
mark "tests; the race detector, then the fuzzing, beside them ($logs/race-fuzz.log)"

setsid bash -c 'rc=0; make --no-print-directory race || rc=1; echo "race: done after $SECONDS s"; make --no-print-directory fuzz || rc=1; echo "fuzz: done after $SECONDS s"; exit $rc' >"$logs/race-fuzz.log" 2>&1 &
racefuzz=$!
bg+=("$racefuzz")

test_rc=0
"$GO" test -count=1 -timeout 20m ./... 2>&1 | tee "$logs/test.log" || test_rc=$?

mark "tests done"
rf_rc=0
wait "$racefuzz" || rf_rc=$?
mark "the race detector and the fuzzing (ran beside the tests)"
cat "$logs/race-fuzz.log"
wait "$prom" || true
bg=()
if [ -x .tools/prometheus3/prometheus ]; then
	tail -1 "$logs/prometheus3.log"
else
	mark "Prometheus 3 was not built: its tests skipped"
	tail -20 "$logs/prometheus3.log"
fi

echo
failed=$(grep -hE '^(--- FAIL|FAIL|panic:)' "$logs/test.log" "$logs/race-fuzz.log" || true)
if [ "$test_rc" -ne 0 ] || [ "$rf_rc" -ne 0 ]; then
	mark "make test: FAILED (tests: exit $test_rc; race detector and fuzzing: exit $rf_rc)"
	[ -z "$failed" ] || echo "$failed"
	exit 1
fi
mark "make test: ok (tests, race detector, fuzzing; logs in $logs)"
