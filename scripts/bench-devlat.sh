#!/usr/bin/env bash
# The cost of the device-latency BPF programs (internal/devlat): CPU per
# I/O of ioprobe runs with and without them (--device-latency), at QD 1
# and QD 32, in interleaved rounds, as medians of the per-round ratios;
# then what each program costs per call in the kernel (bpftool prog show's
# run_time_ns / run_cnt with kernel.bpf_stats_enabled=1, set back after).
#
# The target is a loop device over a file in /dev/shm (buffered, so the
# I/O is CPU-bound and the programs' share shows). Needs root and bpftool.
# Takes the quiet lock for the whole measurement; says the load.
#   ROUNDS=5 DURATION=5s scripts/bench-devlat.sh
set -euo pipefail
GO=${GO:-go}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5s}
root=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench-devlat: needs root" >&2; exit 2; }
command -v bpftool >/dev/null || { echo "bench-devlat: needs bpftool (apt-get install bpftool)" >&2; exit 2; }
work=$(mktemp -d /tmp/bench-devlat.XXXXXX)
bin=$work/ioprobe
(cd "$root" && CGO_ENABLED=0 $GO build -o "$bin" ./cmd/ioprobe)
backing=$(mktemp /dev/shm/bench-devlat.XXXXXX)
truncate -s 512M "$backing"
dev=$(losetup -f --show "$backing")
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	sysctl -qw kernel.bpf_stats_enabled="$stats_before" || true
	losetup -d "$dev" || true
	rm -f "$backing"
	rm -rf "$work"
}
trap cleanup EXIT
py=/usr/bin/python3

measure() { # qd mode -> "process_cpu_per_io host_cpu_per_io iops"
	"$bin" run --target "$dev" --qd "$1" --duration "$DURATION" --ramp 1s --engine uring \
		--device-latency="$2" --output json | $py -c '
import json, sys
r = json.load(sys.stdin); s = r["summary"]; c = s["cpu"]
d = s.get("device", {})
assert ("latency" in d) == (sys.argv[1] == "true"), d.get("latency_unavailable")
print(c["process_cpu_seconds_per_io"], c["host_cpu_seconds_per_io"], s["iops"])' "$2"
}

run() {
	echo "load before: $(uptime)"
	echo "round qd mode process_cpu_us_per_io host_cpu_us_per_io iops" > "$work/rows"
	for r in $(seq "$ROUNDS"); do
		for qd in 1 32; do
			# Alternate which goes first, so that drift does not favour one.
			modes="false true"; [ $((r % 2)) = 0 ] && modes="true false"
			for m in $modes; do
				echo "$r $qd $m $(measure "$qd" "$m")" >> "$work/rows"
			done
		done
	done
	echo "load after: $(uptime)"
	$py - "$work/rows" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
by = {}
for r, qd, m, p, h, iops in rows:
    by.setdefault((qd, r), {})[m] = (float(p), float(h), float(iops))
print("| QD | process CPU/I/O off | on | on/off (median) | host CPU/I/O off | on | on/off (median) | IOPS off | on |")
print("|---|---|---|---|---|---|---|---|---|")
for qd in ("1", "32"):
    rs = [v for (q, _), v in by.items() if q == qd and len(v) == 2]
    med = lambda f: statistics.median(f(v) for v in rs)
    print("| %s | %.2f µs | %.2f µs | %.3f | %.2f µs | %.2f µs | %.3f | %.0f | %.0f |" % (qd,
        med(lambda v: v["false"][0]) * 1e6, med(lambda v: v["true"][0]) * 1e6, med(lambda v: v["true"][0] / v["false"][0]),
        med(lambda v: v["false"][1]) * 1e6, med(lambda v: v["true"][1]) * 1e6, med(lambda v: v["true"][1] / v["false"][1]),
        med(lambda v: v["false"][2]), med(lambda v: v["true"][2])))
PY

	# The programs' own cost, per call, from the kernel's BPF statistics.
	sysctl -qw kernel.bpf_stats_enabled=1
	"$bin" run --target "$dev" --qd 32 --duration 6s --ramp 0s --engine uring --output json > "$work/stats.json" &
	pid=$!
	sleep 2
	bpftool -j prog show > "$work/a.json"
	sleep 3
	bpftool -j prog show > "$work/b.json"
	wait $pid
	sysctl -qw kernel.bpf_stats_enabled="$stats_before"
	$py - "$work/a.json" "$work/b.json" "$work/stats.json" <<'PY'
import json, sys
a = {p["id"]: p for p in json.load(open(sys.argv[1]))}
b = {p["id"]: p for p in json.load(open(sys.argv[2]))}
print("| program | calls in 3 s | ns per call |")
print("|---|---|---|")
total = 0.0
for i, p in sorted(b.items()):
    if not p.get("name", "").startswith("rq_") or i not in a:
        continue
    n = p.get("run_cnt", 0) - a[i].get("run_cnt", 0)
    t = p.get("run_time_ns", 0) - a[i].get("run_time_ns", 0)
    if n:
        total += t / n if p["name"] != "rq_merge" and p["name"] != "rq_requeue" else 0
        print("| %s | %d | %.0f |" % (p["name"], n, t / n))
print("per request (insert + issue + complete, when all three fire): %.0f ns" % total)
PY
}

flock /tmp/ioprobe-quiet.lock bash -c "$(declare -f measure run); bin=$bin dev=$dev work=$work py=$py ROUNDS=$ROUNDS DURATION=$DURATION stats_before=$stats_before run"
