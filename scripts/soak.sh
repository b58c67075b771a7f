#!/usr/bin/env bash
# Soak test of `ioprobe serve` (a script, not a test: it runs for half an
# hour by default). It starts the real daemon on loopback with a canary,
# scheduled jobs with short periods and an on-demand job, then for the
# whole time calls /probe, /metrics and the run API (good and bad
# requests, API triggers, a SIGHUP reload now and then), and every
# SAMPLE seconds records what a leak would show:
#
#   rss_kib      VmRSS of the process (/proc/PID/status)
#   fds          entries of /proc/PID/fd
#   goroutines   go_goroutines from /metrics
#   heap_bytes   go_memstats_heap_inuse_bytes from /metrics
#   open_fds     process_open_fds from /metrics (the daemon's own count)
#
# into a CSV, then stops the daemon with SIGTERM (it must exit 0) and
# prints start, end and max of each column and its slope per hour, over
# the whole run and over its second half (after the warm-up).
#
#   scripts/soak.sh [DURATION]        DURATION: 30m (default), 90s, 2h, or seconds
#
# Environment: OUT (default ./out/soak) for the CSV, the config and the
# daemon's log; SAMPLE (default 10) seconds between samples; PORT (default:
# a free one on 127.0.0.1). Target files go in a scratch directory under
# $OUT, which must be on a disk (not tmpfs). Needs go, curl, awk.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dur=${1:-30m}
case $dur in
*h) secs=$((${dur%h} * 3600)) ;;
*m) secs=$((${dur%m} * 60)) ;;
*s) secs=${dur%s} ;;
*) secs=$dur ;;
esac
sample=${SAMPLE:-10}
out=${OUT:-$root/out/soak}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
csv=$out/soak-$stamp.csv
log=$out/soak-$stamp.log
scratch=$(mktemp -d "$out/scratch.XXXXXX")
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$scratch"
}
trap cleanup EXIT

cd "$root"
rev=$(git describe --always --dirty 2>/dev/null || echo '?')
go build -o "$scratch/ioprobe" ./cmd/ioprobe
port=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 19816)}
base=http://127.0.0.1:$port

cat >"$scratch/ioprobe.yaml" <<EOF
global:
  snapshot_interval: 1s
  run_history: 20
  max_concurrent_probes: 2
targets:
  data: {path: $scratch/data.dat, size: 64MiB}
  other: {path: $scratch/other.dat, size: 32MiB}
jobs:
  canary:            # all the time; a new run every 20 s fills the history ring
    target: data
    profile: canary
    continuous: true
    duration: 20s
  oltp:              # reads and writes every 30 s, pausing the canary
    target: data
    profile: oltp
    queue_depth: 4
    duration: 3s
    ramp: 1s
    every: 30s
  seq:
    target: other
    profile: sequential-read
    duration: 2s
    ramp: 0s
    every: 20s
    jitter: 5s
  adhoc:             # on demand, through the API
    target: other
    profile: random-read
    queue_depth: 2
    duration: 1s
    ramp: 0s
modules:
  quick: {profile: random-read, queue_depth: 2, max_duration: 1s}
EOF
cp "$scratch/ioprobe.yaml" "$out/soak-$stamp.yaml"

"$scratch/ioprobe" serve --config "$scratch/ioprobe.yaml" --web.listen-address "127.0.0.1:$port" \
	--web.enable-admin-api --web.enable-lifecycle 2>"$log" &
pid=$!
for _ in $(seq 100); do
	curl -fsS -o /dev/null "$base/-/ready" 2>/dev/null && break
	sleep 0.1
done
curl -fsS -o /dev/null "$base/-/ready" || { echo "soak: the daemon did not come up; see $log" >&2; exit 1; }
echo "soak: pid $pid on $base for ${secs}s, sampling every ${sample}s into $csv" >&2

metric() { # name: its value in the scrape in $scrape
	awk -v n="$1" '$1 == n { printf "%.0f\n", $2; exit }' <<<"$scrape"
}
# HTTP status counts of the load: ok (2xx), busy (503), bad (400/404/405/409), other.
declare -A codes=()
call() { # method url [header]
	local c
	if [ $# -gt 2 ]; then
		c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X "$1" -H "$3" "$2" || true)
	else
		c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X "$1" "$2" || true)
	fi
	codes[$c]=$((${codes[$c]:-0} + 1))
}

echo "t_seconds,rss_kib,fds,goroutines,heap_bytes,open_fds,requests" >"$csv"
start=$(date +%s)
next_sample=$start
tick=0
requests=0
while :; do
	now=$(date +%s)
	[ $((now - start)) -ge "$secs" ] && break
	kill -0 "$pid" 2>/dev/null || { echo "soak: the daemon died; see $log" >&2; exit 1; }
	if [ "$now" -ge "$next_sample" ]; then
		scrape=$(curl -fsS --max-time 10 "$base/metrics" || true)
		rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
		fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
		echo "$((now - start)),$rss,$fds,$(metric go_goroutines),$(metric go_memstats_heap_inuse_bytes),$(metric process_open_fds),$requests" >>"$csv"
		next_sample=$((next_sample + sample))
	fi
	tick=$((tick + 1))
	call GET "$base/probe?target=data&module=quick" "X-Prometheus-Scrape-Timeout-Seconds: 3"
	call GET "$base/metrics"
	call GET "$base/api/v1/runs"
	call GET "$base/api/v1/jobs"
	call GET "$base/probe?target=data&module=nope"                                  # 400
	call GET "$base/probe?target=/etc/passwd&module=quick"                          # 400
	call GET "$base/probe?target=other&module=quick" "X-Prometheus-Scrape-Timeout-Seconds: NaN" # 400
	requests=$((requests + 7))
	if [ $((tick % 5)) -eq 0 ]; then
		call POST "$base/api/v1/jobs/adhoc/run" # 202, or 409 while it runs
		call GET "$base/api/v1/runs?job=canary&limit=3"
		requests=$((requests + 2))
	fi
	if [ $((tick % 150)) -eq 0 ]; then
		kill -HUP "$pid" # reload: unchanged jobs go on undisturbed
	fi
	sleep 1
done

kill -TERM "$pid"
t0=$(date +%s%N)
set +e
wait "$pid"
rc=$?
set -e
pid=
stop_ms=$((($(date +%s%N) - t0) / 1000000))

echo
echo "ioprobe serve soak of $rev: ${secs}s, $(($(wc -l <"$csv") - 1)) samples, $requests requests; $(uptime | sed 's/.*load average/load average/')"
printf 'HTTP status counts:'
for c in $(printf '%s\n' "${!codes[@]}" | sort); do printf ' %s=%s' "$c" "${codes[$c]}"; done
echo
echo "SIGTERM: exit status $rc after ${stop_ms} ms; $(grep -c 'level=ERROR' "$log" || true) error lines in the log"
awk -F, '
NR == 1 { for (i = 2; i <= NF - 1; i++) name[i] = $i; cols = NF - 1; next }
{
	n++; t[n] = $1
	for (i = 2; i <= cols; i++) { v[n, i] = $i; if (n == 1 || $i > mx[i]) mx[i] = $i }
}
function slope(i, from,   k, sx, sy, sxx, sxy, m) {
	m = 0; sx = sy = sxx = sxy = 0
	for (k = from; k <= n; k++) { m++; sx += t[k]; sy += v[k, i]; sxx += t[k] * t[k]; sxy += t[k] * v[k, i] }
	if (m < 2 || m * sxx == sx * sx) return 0
	return (m * sxy - sx * sy) / (m * sxx - sx * sx) * 3600
}
END {
	printf "%-12s %14s %14s %14s %16s %16s\n", "series", "start", "end", "max", "slope/h (all)", "slope/h (2nd half)"
	for (i = 2; i <= cols; i++)
		printf "%-12s %14s %14s %14s %16.1f %16.1f\n", name[i], v[1, i], v[n, i], mx[i], slope(i, 1), slope(i, int(n / 2) + 1)
}' "$csv"
echo "CSV: $csv  log: $log"
[ "$rc" -eq 0 ]
