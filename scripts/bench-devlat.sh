#!/usr/bin/env bash
# The cost of the device-latency BPF programs (internal/devlat), two ways:
#
#  1. CPU per I/O of ioprobe runs with and without them (--device-latency
#     true/false): QD 32, 4 KiB random reads, io_uring, 10 s runs, in
#     interleaved rounds (the order turns every round), as medians of the
#     per-round ratios on/off; process CPU (ioprobe's threads) and host CPU
#     (every CPU's busy time: the loop device's kernel workers complete the
#     requests, and the completion program runs there, outside ioprobe).
#  2. The programs' own time in the kernel per request: bpftool prog
#     show's run_time_ns and run_cnt (kernel.bpf_stats_enabled=1, set back
#     after) of the run's programs over 3 s of a QD 32 run, all programs
#     together divided by the requests completed; and what they cost a
#     request of a device they do not watch (another run's, as the
#     exporter's devices: see every request of the host); and, for
#     reference, what two empty programs cost there (scripts/bpffloor).
#
# With BASE=<rev> the same for that revision's binary, built from git,
# interleaved with this tree's in the same rounds: before and after in
# one run.
#
# The device is a loop device with direct I/O over a file in /dev/shm,
# filled with random data: a blk-mq device that takes non-blocking I/O,
# so io_uring submits inline as on a real disk (zram refuses it and hands
# every I/O to io_uring's kernel workers). Needs root and bpftool
# (scripts/test-deps.sh --bench). Takes the quiet lock for the whole
# measurement and prints the load before and after.
#   BASE=main ROUNDS=5 DURATION=10s scripts/bench-devlat.sh
set -euo pipefail
GO=${GO:-go}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10s}
QD=${QD:-32}
SIZE_MIB=${SIZE_MIB:-1024}
root=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench-devlat: needs root" >&2; exit 2; }
command -v bpftool >/dev/null || { echo "bench-devlat: needs bpftool (scripts/test-deps.sh --bench)" >&2; exit 2; }
work=$(mktemp -d /tmp/bench-devlat.XXXXXX)
backing=$(mktemp /dev/shm/bench-devlat.XXXXXX)
backing2=$(mktemp /dev/shm/bench-devlat.XXXXXX)
dev=
dev2=
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	sysctl -qw kernel.bpf_stats_enabled="$stats_before" || true
	[ -z "$dev" ] || losetup -d "$dev" || true
	[ -z "$dev2" ] || losetup -d "$dev2" || true
	rm -f "$backing" "$backing2"
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && CGO_ENABLED=0 $GO build -o "$work/after" ./cmd/ioprobe && CGO_ENABLED=0 $GO build -o "$work/bpffloor" ./scripts/bpffloor)
cands="after"
if [ -n "${BASE:-}" ]; then
	mkdir "$work/base-src"
	(cd "$root" && git archive "$BASE") | tar -x -C "$work/base-src"
	(cd "$work/base-src" && CGO_ENABLED=0 $GO build -o "$work/before" ./cmd/ioprobe)
	cands="before after"
fi
head -c $((SIZE_MIB << 20)) /dev/urandom > "$backing"
dev=$(losetup -f --show --direct-io=on "$backing")
truncate -s 64M "$backing2"
dev2=$(losetup -f --show --direct-io=on "$backing2")
name=$(basename "$dev")
[ "$(cat /sys/block/"$name"/loop/dio)" = 1 ] || { echo "bench-devlat: $dev did not take direct I/O" >&2; exit 1; }
py=/usr/bin/python3

measure() { # binary device-latency -> "process_cpu_per_io host_cpu_per_io iops"
	"$work/$1" run --target "$dev" --qd "$QD" --bs 4k --read-pct 100 --random-pct 100 --duration "$DURATION" --ramp 1s \
		--engine uring --device-latency="$2" --output json | $py -c '
import json, sys
r = json.load(sys.stdin); s = r["summary"]; c = s["cpu"]
d = s.get("device", {})
assert ("latency" in d) == (sys.argv[1] == "true"), d.get("latency_unavailable")
print(c["process_cpu_seconds_per_io"], c["host_cpu_seconds_per_io"], s["iops"])' "$2"
}

# qd32 binary device-latency seconds: a QD 32 run of the bench (no
# ramp-up), in the background only: it becomes the run (exec), so that $!
# is the run's pid.
qd32() {
	exec "$work/$1" run --target "$dev" --qd "$QD" --bs 4k --read-pct 100 --random-pct 100 --duration "$3" --ramp 0s \
		--engine uring --device-latency="$2" --output json > /dev/null
}

# sample IDS LABEL WHAT ROWS: the programs IDS (a file of program ids)
# over 3 s, by bpftool's statistics: their time per request completed
# (the calls of the program on block_rq_complete), as a row labelled
# LABEL, WHAT; with ROWS=rows each program's time per call before it.
# The 3 s are read in six windows of 0.5 s too, and the quietest window's
# figure is printed beside: on a loaded machine preemption inside a
# program inflates run_time_ns, less in some windows than in others.
sample() {
	for i in 0 1 2 3 4 5 6; do
		bpftool -j prog show > "$work/s$i.json"
		[ "$i" = 6 ] || sleep 0.5
	done
	$py - "$@" "$work"/s?.json <<'PY'
import json, sys
ids_file, label, what, rows = sys.argv[1:5]
ids = {int(l) for l in open(ids_file).read().split()}
def of(path):
    return {p["id"]: p for p in json.load(open(path)) if p["id"] in ids}
snaps = [of(f) for f in sys.argv[5:]]
a, b = snaps[0], snaps[-1]
assert b and set(b) <= set(a), "the programs %s are not all in bpftool's list" % sorted(ids)
def per_request(a, b):
    total, completions = 0, 0
    for i, p in b.items():
        total += p.get("run_time_ns", 0) - a[i].get("run_time_ns", 0)
        if p.get("name", "").endswith("complete"):
            completions = p.get("run_cnt", 0) - a[i].get("run_cnt", 0)
    return completions, (total / completions if completions else 0)
if rows == "rows":
    for i, p in sorted(b.items(), key=lambda kv: kv[1].get("name", "")):
        n = p.get("run_cnt", 0) - a[i].get("run_cnt", 0)
        t = p.get("run_time_ns", 0) - a[i].get("run_time_ns", 0)
        print("| %s | %s | %d | %.0f |" % (label, p.get("name", "?"), n, t / n if n else 0))
n, whole = per_request(a, b)
windows = [per_request(x, y)[1] for x, y in zip(snaps, snaps[1:]) if per_request(x, y)[0] > 0]
print("| %s | %s | %d | %.0f (quietest 0.5 s: %.0f) |" % (label, what, n, whole, min(windows) if windows else 0))
PY
}

# prog_ids PID: the BPF programs a process holds, by its descriptors
# (other ioprobe runs on the machine load programs of the same names).
prog_ids() {
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u
}

# prog_cost binary: the run's programs' time per request.
prog_cost() {
	qd32 "$1" true 7s &
	local pid=$!
	sleep 2
	prog_ids $pid > "$work/ids"
	sample "$work/ids" "$1" "all, per request completed" rows
	wait $pid
}

# unwatched_cost binary: what the programs cost every other request on
# the host (the exporter's devices: a tax on other people's I/O): a slow
# run on a second loop device loads them, the QD 32 run on the first goes
# without its own, and its requests pass the slow run's programs unwatched.
unwatched_cost() {
	"$work/$1" run --target "$dev2" --qd 1 --rate-iops 10 --duration 9s --ramp 0s --output json > /dev/null &
	local slow=$!
	sleep 2
	qd32 "$1" false 6s &
	local fast=$!
	sleep 1
	prog_ids $slow > "$work/ids"
	sample "$work/ids" "$1" "all, per request of a device not watched" no
	wait $fast
	wait $slow
}

# floor_cost: two empty programs on the same tracepoints (scripts/bpffloor)
# under the same QD 32 run: what any program costs there before it does
# anything, with the statistics' own clock reads.
floor_cost() {
	sleep 9 | "$work/bpffloor" > "$work/fids" &
	local floor=$!
	sleep 1
	qd32 after false 6s &
	local fast=$!
	sleep 1
	sample "$work/fids" "empty programs (the floor)" "both, per request" no
	wait $fast
	wait $floor
}

run() {
	echo "load before: $(uptime)"
	echo "$dev: loop, direct I/O over $SIZE_MIB MiB of random data in /dev/shm; QD $QD, 4 KiB random reads, io_uring, $DURATION runs, $ROUNDS rounds"
	: > "$work/rows"
	for r in $(seq "$ROUNDS"); do
		runs=""
		for c in $cands; do for m in false true; do runs="$runs $c:$m"; done; done
		# Turn the order every round, so that drift favours no one.
		[ $((r % 2)) = 0 ] && runs=$(echo $runs | tr ' ' '\n' | tac | tr '\n' ' ')
		for x in $runs; do
			echo "$r ${x%%:*} ${x#*:} $(measure "${x%%:*}" "${x#*:}")" >> "$work/rows"
		done
	done
	echo "load after the rounds: $(uptime)"
	$py - "$work/rows" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()]
by = {}
for r, c, m, p, h, iops in rows:
    by.setdefault((c, r), {})[m] = (float(p), float(h), float(iops))
print("| binary | process CPU/I/O off | on | on/off (median of rounds) | host CPU/I/O off | on | on/off | IOPS off | on |")
print("|---|---|---|---|---|---|---|---|---|")
for c in ("before", "after"):
    rs = [v for (b, _), v in by.items() if b == c and len(v) == 2]
    if not rs:
        continue
    med = lambda f: statistics.median(f(v) for v in rs)
    print("| %s | %.3f µs | %.3f µs | %.3f | %.3f µs | %.3f µs | %.3f | %.0f | %.0f |" % (c,
        med(lambda v: v["false"][0]) * 1e6, med(lambda v: v["true"][0]) * 1e6, med(lambda v: v["true"][0] / v["false"][0]),
        med(lambda v: v["false"][1]) * 1e6, med(lambda v: v["true"][1]) * 1e6, med(lambda v: v["true"][1] / v["false"][1]),
        med(lambda v: v["false"][2]), med(lambda v: v["true"][2])))
    print("|   per round on/off (process) | " + " ".join("%.3f" % (v["true"][0] / v["false"][0]) for v in rs) + " | | | | | | | |")
PY
	sysctl -qw kernel.bpf_stats_enabled=1
	echo "| binary | program | calls in 3 s | ns per call |"
	echo "|---|---|---|---|"
	for c in $cands; do prog_cost "$c"; done
	for c in $cands; do unwatched_cost "$c"; done
	floor_cost
	sysctl -qw kernel.bpf_stats_enabled="$stats_before"
	echo "load after: $(uptime)"
}

flock /tmp/ioprobe-quiet.lock bash -c "$(declare -f measure qd32 sample prog_ids prog_cost unwatched_cost floor_cost run); work=$work dev=$dev dev2=$dev2 py=$py cands='$cands' ROUNDS=$ROUNDS DURATION=$DURATION QD=$QD SIZE_MIB=$SIZE_MIB stats_before=$stats_before run"
