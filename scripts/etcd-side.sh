#!/usr/bin/env bash
# etcd-side.sh DIR: etcd itself, the community fio recipe and `ioprobe
# check etcd` on one directory, one after another, each with its figures
# from its own source:
#   - fio --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300:
#     the 99th percentile of its fdatasyncs;
#   - ioprobe check etcd (the default: WAL and backend) and its verdict;
#   - a real etcd (Debian's etcd-server; apt-get install etcd-server
#     etcd-client) with its data dir in DIR, loaded by `etcdctl check perf
#     --load=s` (60 s); the 99th percentile of its
#     etcd_disk_wal_fsync_duration_seconds and of
#     etcd_disk_backend_commit_duration_seconds over the load, from its
#     /metrics (buckets read as Prometheus's histogram_quantile reads them).
# The etcd it starts listens on 127.0.0.1 only, is stopped by its pid and
# its data dir removed. Set IOPROBE (default bin/ioprobe), DURATION (the
# check's, default its own).
set -euo pipefail
dir=${1:?usage: etcd-side.sh DIR}
[ -d "$dir" ] || { echo "etcd-side: $dir is not a directory" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
ioprobe=${IOPROBE:-$root/bin/ioprobe}
for tool in fio etcd etcdctl curl python3; do
	command -v "$tool" >/dev/null || { echo "etcd-side: $tool is not installed" >&2; exit 2; }
done
work=$(mktemp -d)
etcd_pid=
cleanup() {
	if [ -n "$etcd_pid" ]; then kill "$etcd_pid" 2>/dev/null || true; wait "$etcd_pid" 2>/dev/null || true; fi
	rm -rf "$dir/etcd-side.etcd" "$dir/etcd.0.0" "$work"
}
trap cleanup EXIT

echo "load: $(uptime)"
fio --name=etcd --rw=write --ioengine=sync --fdatasync=1 --directory="$dir" --size=22m --bs=2300 \
	--output-format=json >"$work/fio.json"
rm -f "$dir/etcd.0.0"
python3 - "$work/fio.json" <<'EOF'
import json, sys
l = json.load(open(sys.argv[1]))["jobs"][0]["sync"]["lat_ns"]
p = l["percentile"]
print("fio recipe  fdatasync  n=%d  p50 %.3f ms  p99 %.3f ms  -> %s" % (
    l["N"], p["50.000000"] / 1e6, p["99.000000"] / 1e6, "PASS" if p["99.000000"] < 10e6 else "FAIL"))
EOF

"$ioprobe" check etcd --target "$dir" ${DURATION:+--duration "$DURATION"} --output json >"$work/check.json" || true
python3 - "$work/check.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["streams"]:
    print("ioprobe     %-8s   n=%d  p50 %.3f ms  p99 %.3f ms  -> %s" % (
        s["name"], s["samples"], s["latency"]["percentiles"]["50"] * 1e3,
        s["latency"]["percentiles"]["99"] * 1e3, s["verdict"]["reason"]))
print("ioprobe     verdict: " + r["verdict"]["reason"])
EOF

port=$((23000 + RANDOM % 1000))
url=http://127.0.0.1:$port
etcd --name side --data-dir "$dir/etcd-side.etcd" \
	--listen-client-urls "$url" --advertise-client-urls "$url" \
	--listen-peer-urls "http://127.0.0.1:$((port + 1000))" \
	--initial-advertise-peer-urls "http://127.0.0.1:$((port + 1000))" \
	--initial-cluster "side=http://127.0.0.1:$((port + 1000))" >"$work/etcd.log" 2>&1 &
etcd_pid=$!
for _ in $(seq 100); do
	etcdctl --endpoints "$url" endpoint health >/dev/null 2>&1 && break
	sleep 0.2
done
curl -s "$url/metrics" >"$work/m0"
etcdctl --endpoints "$url" check perf --load=s >"$work/perf.txt" 2>&1 || true
curl -s "$url/metrics" >"$work/m1"
kill "$etcd_pid"; wait "$etcd_pid" 2>/dev/null || true; etcd_pid=
python3 - "$work/m0" "$work/m1" <<'EOF'
import re, sys
def buckets(path, name):
    b = {}
    for line in open(path):
        m = re.match(r'%s_bucket\{le="([^"]+)"\} (\S+)' % name, line)
        if m:
            b[float(m.group(1))] = float(m.group(2))
    return b
def quantile(q, b):  # Prometheus's histogram_quantile over cumulative buckets
    les = sorted(b)
    total = b[les[-1]]
    if total == 0:
        return float("nan")
    rank, prev_le, prev_c = q * total, 0.0, 0.0
    for le in les:
        if b[le] >= rank:
            if le == float("inf"):
                return prev_le
            return prev_le + (le - prev_le) * (rank - prev_c) / (b[le] - prev_c)
        prev_le, prev_c = le, b[le]
for name, label in (("etcd_disk_wal_fsync_duration_seconds", "WAL fsync"),
                    ("etcd_disk_backend_commit_duration_seconds", "commit")):
    a, z = buckets(sys.argv[1], name), buckets(sys.argv[2], name)
    d = {le: z[le] - a.get(le, 0) for le in z}
    n = d[float("inf")]
    print("etcd        %-9s  n=%d  p50 %.3f ms  p99 %.3f ms (histogram_quantile over its buckets)" % (
        label, n, quantile(0.5, d) * 1e3, quantile(0.99, d) * 1e3))
EOF
sed -n '$p' "$work/perf.txt" | sed 's/^/etcdctl     check perf: /'
