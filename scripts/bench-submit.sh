#!/usr/bin/env bash
# What submitting each I/O on its own costs: the uring engine's 4 KiB
# random reads at QD 32 (internal/engine/uring's BenchmarkRandRead4kQD32,
# one op = one I/O, cpu-ns/op = process CPU per I/O), three ways,
# interleaved round by round:
#
#   base     the engine at BASE (default: the commit before the change)
#   default  this tree: one I/O per io_uring_enter, one slot refilled per
#            completion (fio's iodepth_batch_submit=1,
#            iodepth_batch_complete_min=max=1)
#   batched  this tree with the whole queue submitted and refilled at once
#            (BenchmarkRandRead4kQD32Batched)
#   fio      fio's io_uring engine (fixedbufs, registerfiles) on the same
#            device for 3 s: (usr_cpu + sys_cpu) x job_runtime / I/Os, when
#            fio is installed
#
#   scripts/bench-submit.sh                 # ROUNDS=7 N=300000
#   BASE=main ROUNDS=9 scripts/bench-submit.sh
#
# The device is a loop device (direct I/O) over a 1 GiB file in /dev/shm,
# filled with random data and detached at exit: a RAM-backed block device
# that takes non-blocking I/O, so the figures are the engine's CPU, not a
# disk's. Needs root. Prints each run's cpu-ns/op and the medians, and the
# median of the per-round ratios to base.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-7}
N=${N:-300000}
BASE=${BASE:-227ce66} # the engine before per-I/O submission
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
die() { echo "bench-submit: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (a loop device)"

work=$(mktemp -d /tmp/bench-submit.XXXXXX)
backing="" loopdev=""
cleanup() {
	if [ -n "$loopdev" ]; then losetup -d "$loopdev" || echo "bench-submit: could not detach $loopdev" >&2; fi
	if [ -n "$backing" ]; then rm -f "$backing"; fi
	rm -rf "$work"
}
trap cleanup EXIT

git archive "$BASE" | tar -x -C "$work" --one-top-level=base
(cd "$work/base" && "$GO" test -c -o "$work/base.test" ./internal/engine/uring/)
"$GO" test -c -o "$work/new.test" ./internal/engine/uring/
backing=$(mktemp /dev/shm/bench-submit.XXXXXX)
truncate -s 1G "$backing"
loopdev=$(losetup -f --show --direct-io=on "$backing")
case "$loopdev" in /dev/loop*) ;; *) die "not a loop device: $loopdev" ;; esac
dd if=/dev/urandom of="$loopdev" bs=1M count=1024 oflag=direct status=none

bench() { # binary benchmark -> cpu-ns/op
	IOPROBE_BENCH_DEV=$loopdev "$1" -test.run '^$' -test.bench "^$2\$/dev\$" -test.benchtime "${N}x" -test.benchmem |
		awk '/cpu-ns\/op/ { for (i = 1; i < NF; i++) if ($(i+1) == "cpu-ns/op") print $i }'
}
fiocpu() { # -> cpu-ns per I/O of fio's QD 32 random reads, or 0
	command -v fio >/dev/null || { echo 0; return; }
	fio --name=rr --filename="$loopdev" --rw=randread --bs=4k --iodepth=32 --ioengine=io_uring --fixedbufs --registerfiles \
		--direct=1 --time_based --runtime=3 --output-format=json |
		python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(round((j["usr_cpu"]+j["sys_cpu"])/100*j["job_runtime"]*1e6/j["read"]["total_ios"]))'
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$work/runs"
for r in $(seq 1 "$ROUNDS"); do
	b=$(bench "$work/base.test" BenchmarkRandRead4kQD32)
	d=$(bench "$work/new.test" BenchmarkRandRead4kQD32)
	x=$(bench "$work/new.test" BenchmarkRandRead4kQD32Batched)
	f=$(fiocpu)
	echo "round $r: base $b  default $d  batched $x  fio $f  (cpu-ns per I/O)"
	echo "$b $d $x $f" >>"$work/runs"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/runs" <<'EOF'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
med = lambda v: statistics.median(v)
b, d, x, f = (med([r[i] for r in rows]) for i in range(4))
print(f"median cpu-ns per I/O: base {b:.0f}, default {d:.0f}, batched {x:.0f}, fio {f:.0f}")
print(f"median of ratios to base: default {med([r[1]/r[0] for r in rows]):.3f}, batched {med([r[2]/r[0] for r in rows]):.3f}, fio {med([r[3]/r[0] for r in rows]):.3f}")
EOF
