#!/usr/bin/env bash
# ioprobe and fio side by side, interleaved, on the same device and region,
# and ioprobe held to its references: fio's t/io_uring (Jens Axboe's
# peak-IOPS tool, built here from Debian's fio source) at QD 32, a bare C
# pread loop and a bare Go one (scripts/bareloop) at QD 1, and ioprobe's
# own device-latency programs off against on.
#
#   make bench-fio                    # or: scripts/bench-fio.sh
#   ROUNDS=7 DURATION=10 scripts/bench-fio.sh
#   WORKLOADS="1-randread-4k-qd1 2-randread-4k-qd32" scripts/bench-fio.sh
#   BASE=2a67e9f scripts/bench-fio.sh            # and that revision's ioprobe: before/after
#
# The device is a loop device with direct I/O over a file in /dev/shm
# (SIZE_MIB, default 2048), filled with random data, detached and removed
# at exit on every path: a blk-mq device that takes non-blocking I/O and
# costs no disk time, so what differs between two tools is their own CPU.
# Not zram: zram is bio-based and refuses non-blocking I/O, so io_uring
# (and libaio) hand every one of its I/Os to kernel worker threads, and the
# figures would be those workers' (docs/performance.md). t/io_uring reads
# the whole device. Every round runs every candidate of a workload once,
# in reverse order on even rounds. Each run is measured from outside by
# scripts/benchfio: wait4 rusage of the whole process tree, /proc/stat
# deltas for the host, the device's completed I/Os, and the steady state
# (the process tree's CPU and the device's I/Os from 2 s after the start
# to 1 s before the end: each tool's set-up left out). With BASE (a git
# revision), every ioprobe candidate runs a second time as NAME-base with
# ioprobe built from that revision, in the same rounds, and the report
# holds each to its base too. The report (Markdown) is printed and kept
# with the raw output under out/bench-fio/.
#
# It holds /tmp/ioprobe-quiet.lock for its whole run (the shared machine's
# lock for quiet measurements), and prints uptime before and after. Needs
# root (loop device, O_DIRECT on it, the device-latency programs), fio, gcc
# and make; scripts/test-deps.sh --bench installs them and fio's source. It
# writes only to its own loop device, never to anything else.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
FIO=${FIO:-$(command -v fio || true)}
FIO_SRC_DIR=${FIO_SRC_DIR:-$PWD/.tools/fio-src}

die() { echo "bench-fio: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (device set-up and O_DIRECT on a block device)"
[ "$ROUNDS" -ge 3 ] || die "ROUNDS must be at least 3 (5 or more for the figures the issue asks for)"
if [ -z "$FIO" ] || ! command -v gcc >/dev/null || ! command -v make >/dev/null || [ ! -f "$FIO_SRC_DIR/t/io_uring.c" ]; then
	FIO_SRC_DIR=$FIO_SRC_DIR ./scripts/test-deps.sh --bench
	FIO=${FIO:-$(command -v fio || true)}
fi
[ -n "$FIO" ] || die "fio is not installed (scripts/test-deps.sh --bench)"

# The shared machine's lock for measurements meant to be quiet.
if [ -z "${IOPROBE_QUIET_LOCKED:-}" ]; then
	exec 9>/tmp/ioprobe-quiet.lock
	echo "bench-fio: waiting for /tmp/ioprobe-quiet.lock" >&2
	flock 9
	export IOPROBE_QUIET_LOCKED=1
fi

loopdev="" backing="" basesrc=""
cleanup() {
	if [ -n "$loopdev" ]; then losetup -d "$loopdev" || echo "bench-fio: could not detach $loopdev" >&2; fi
	if [ -n "$backing" ]; then rm -f "$backing"; fi
	if [ -n "$basesrc" ]; then rm -rf "$basesrc"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SIZE_MIB=${SIZE_MIB:-2048}
backing=$(mktemp /dev/shm/bench-fio.XXXXXX)
truncate -s "${SIZE_MIB}M" "$backing"
loopdev=$(losetup -f --show --direct-io=on "$backing")
DEV=$loopdev
# The only device this script may write to.
case "$DEV" in
/dev/loop*) ;;
*) die "losetup gave $DEV, not a loop device" ;;
esac
# Direct I/O to the backing file, or the figures are the page cache's.
[ "$(cat "/sys/block/${DEV#/dev/}/loop/dio" 2>/dev/null)" = 1 ] ||
	die "$DEV took no direct I/O over $backing (a kernel before 6.6 has no O_DIRECT on tmpfs)"

echo "bench-fio: building ioprobe, the measuring helper, the bare loop and t/io_uring" >&2
CGO_ENABLED=0 "$GO" build -o bin/ioprobe ./cmd/ioprobe
if [ -n "${BASE:-}" ]; then
	basesrc=$(mktemp -d /tmp/bench-fio-base.XXXXXX)
	git archive "$BASE" | tar -x -C "$basesrc"
	(cd "$basesrc" && CGO_ENABLED=0 "$GO" build -o "$OLDPWD/bin/ioprobe-base" ./cmd/ioprobe)
	rm -rf "$basesrc"
	basesrc=""
fi
CGO_ENABLED=0 "$GO" build -o bin/benchfio ./scripts/benchfio
gcc -O2 -Wall -o bin/bareloop scripts/bareloop/bareloop.c
CGO_ENABLED=0 "$GO" build -o bin/barego ./scripts/barego
TIOURING=$FIO_SRC_DIR/t/io_uring
if [ ! -x "$TIOURING" ] || [ "$TIOURING" -ot "$FIO_SRC_DIR/t/io_uring.c" ]; then
	(cd "$FIO_SRC_DIR" && { [ -f config-host.mak ] || ./configure >/dev/null; } && make -s t/io_uring >/dev/null) ||
		die "could not build t/io_uring in $FIO_SRC_DIR"
fi

OUT=out/bench-fio/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
echo "bench-fio: filling $SIZE_MIB MiB of $DEV with random data" >&2
dd if=/dev/urandom of="$DEV" bs=1M count="$SIZE_MIB" oflag=direct status=none

SIZE=$((SIZE_MIB * 1048576))
[ "$DURATION" -ge 5 ] || die "DURATION must be at least 5 (s): the steady state is measured from 2 s after the start to 1 s before the end"
WINDOW=2:$((DURATION - 3))
load_before=$(uptime)
IOPROBE=(bin/ioprobe run --target "$DEV" --size "${SIZE_MIB}MiB" --duration "${DURATION}s" --ramp 0s --output json)
FIOBASE=("$FIO" --filename="$DEV" --direct=1 --size="$SIZE" --time_based --runtime="$DURATION"
	--group_reporting --lat_percentiles=1 --output-format=json)

# candidates WORKLOAD: one line per candidate, "NAME ARGS...".
candidates() {
	local rr="--bs 4k --read-pct 100 --random-pct 100"
	local rw="--bs 4k --read-pct 0 --random-pct 100 --allow-destructive"
	local sr="--bs 64k --read-pct 100 --random-pct 0"
	local slice=$((SIZE / 16))
	case $1 in
	1-randread-4k-qd1)
		# -nodevlat: without the device-latency programs, whose issue
		# program runs in the submitting thread: the share of the
		# difference to the bare loops that is theirs.
		echo "ioprobe-sync $rr --qd 1 --engine sync"
		echo "ioprobe-sync-nodevlat $rr --qd 1 --engine sync --device-latency=false"
		echo "fio-psync --name=rr --rw=randread --bs=4k --ioengine=psync --iodepth=1"
		echo "bare-loop -b 4096 -s $SIZE -t $DURATION $DEV"
		echo "barego-loop -b 4096 -s $SIZE -t $DURATION $DEV"
		;;
	2-randread-4k-qd32)
		# ioprobe-uring: the default as root (adaptive submission, the
		# device-latency programs on); -nodevlat the same without the
		# programs; -fio1 fio's submission (--batch-submit 1: one I/O
		# per call, the default before the adaptive rule); -batch32
		# t/io_uring's -s32 -c32 (the whole queue per call, waiting for
		# all of it).
		echo "ioprobe-uring $rr --qd 32 --engine uring --device-latency=true"
		echo "ioprobe-uring-nodevlat $rr --qd 32 --engine uring --device-latency=false"
		echo "ioprobe-uring-fio1 $rr --qd 32 --engine uring --device-latency=true --batch-submit 1"
		echo "ioprobe-uring-batch32 $rr --qd 32 --engine uring --device-latency=true --batch-submit 32 --batch-complete 32 --batch-complete-max 32"
		echo "ioprobe-sync $rr --qd 32 --engine sync"
		echo "fio-io_uring --name=rr --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --fixedbufs --registerfiles"
		echo "fio-libaio --name=rr --rw=randread --bs=4k --ioengine=libaio --iodepth=32"
		echo "fio-psync32jobs --name=rr --rw=randread --bs=4k --ioengine=psync --iodepth=1 --numjobs=32"
		# t/io_uring reads the whole device.
		echo "tiouring-t1 -d32 -s32 -c32 -b4096 -p0 -B1 -F1 -n1 -t1 -r$DURATION $DEV"
		;;
	3-seqread-64k-qd16)
		echo "ioprobe-sync $sr --qd 16 --engine sync"
		echo "fio-io_uring --name=sr --rw=read --bs=64k --ioengine=io_uring --iodepth=16 --fixedbufs --registerfiles"
		echo "ioprobe-uring $sr --qd 16 --engine uring"
		echo "fio-libaio --name=sr --rw=read --bs=64k --ioengine=libaio --iodepth=16"
		echo "fio-psync16jobs --name=sr --rw=read --bs=64k --ioengine=psync --iodepth=1 --numjobs=16 --size=$slice --offset_increment=$slice"
		;;
	4-randwrite-4k-qd16)
		echo "ioprobe-sync $rw --qd 16 --engine sync"
		echo "fio-io_uring --name=rw --rw=randwrite --bs=4k --ioengine=io_uring --iodepth=16 --fixedbufs --registerfiles"
		echo "ioprobe-uring $rw --qd 16 --engine uring"
		echo "fio-libaio --name=rw --rw=randwrite --bs=4k --ioengine=libaio --iodepth=16"
		echo "fio-psync16jobs --name=rw --rw=randwrite --bs=4k --ioengine=psync --iodepth=1 --numjobs=16"
		;;
	esac
}

# Reads come first, on the random fill; the write workload runs last.
# WORKLOADS="1-randread-4k-qd1" picks some.
read -r -a WORKLOADS <<<"${WORKLOADS:-1-randread-4k-qd1 2-randread-4k-qd32 3-seqread-64k-qd16 4-randwrite-4k-qd16}"
for w in "${WORKLOADS[@]}"; do
	mapfile -t cands < <(candidates "$w")
	if [ -n "${BASE:-}" ]; then
		# ioprobe-X ARGS -> ioprobe-X-base ARGS, run with bin/ioprobe-base.
		mapfile -t -O "${#cands[@]}" cands < <(printf '%s\n' "${cands[@]}" | sed -n 's/^\(ioprobe-[^ ]*\) /\1-base /p')
	fi
	[ ${#cands[@]} -gt 0 ] || die "unknown workload $w"
	for round in $(seq 1 "$ROUNDS"); do
		order=("${cands[@]}")
		if [ $((round % 2)) -eq 0 ]; then
			mapfile -t order < <(printf '%s\n' "${cands[@]}" | tac)
		fi
		for c in "${order[@]}"; do
			read -r name args <<<"$c"
			# shellcheck disable=SC2206 # the candidate's arguments split on spaces
			extra=($args)
			case $name in
			ioprobe-*-base) cmd=(bin/ioprobe-base "${IOPROBE[@]:1}" "${extra[@]}") ;;
			ioprobe-*) cmd=("${IOPROBE[@]}" "${extra[@]}") ;;
			bare-*) cmd=(bin/bareloop "${extra[@]}") ;;
			barego-*) cmd=(bin/barego "${extra[@]}") ;;
			tiouring-*) cmd=("$TIOURING" "${extra[@]}") ;;
			*) cmd=("${FIOBASE[@]}" "${extra[@]}") ;;
			esac
			echo "bench-fio: $w round $round: $name" >&2
			echo "$w $round $name: ${cmd[*]}" >>"$OUT/commands.txt"
			bin/benchfio measure --dev "$DEV" --window "$WINDOW" "$OUT/$w.$round.$name.rec.json" "$OUT/$w.$round.$name.json" -- "${cmd[@]}"
		done
	done
done

# The pairs the performance issues ask for (benchfio report: "Held to the
# references"), with their goals: A ÷ B in I/Os per process CPU-second.
# ioprobe-uring-nodevlat ÷ ioprobe-uring is the CPU per I/O with the
# device-latency programs on ÷ off.
cat >"$OUT/pairs.txt" <<'PAIRS'
2-randread-4k-qd32 ioprobe-uring tiouring-t1 >=1.0
2-randread-4k-qd32 ioprobe-uring-nodevlat ioprobe-uring <=1.05
2-randread-4k-qd32 ioprobe-uring-nodevlat tiouring-t1
2-randread-4k-qd32 ioprobe-uring-fio1 tiouring-t1
2-randread-4k-qd32 ioprobe-uring-batch32 tiouring-t1
2-randread-4k-qd32 ioprobe-uring ioprobe-uring-fio1
2-randread-4k-qd32 ioprobe-uring fio-io_uring
1-randread-4k-qd1 ioprobe-sync barego-loop >=0.99
1-randread-4k-qd1 ioprobe-sync bare-loop >=0.97
1-randread-4k-qd1 ioprobe-sync-nodevlat barego-loop
1-randread-4k-qd1 ioprobe-sync ioprobe-sync-nodevlat
1-randread-4k-qd1 barego-loop bare-loop
1-randread-4k-qd1 ioprobe-sync fio-psync
PAIRS
if [ -n "${BASE:-}" ]; then
	# The same pairs for the base, and each ioprobe candidate held to it.
	sed -e 's/ \(ioprobe-[^ ]*\) / \1-base /g' -e 's/ [<>]=[0-9.]*$//' "$OUT/pairs.txt" >"$OUT/pairs.base"
	awk '$3 ~ /^ioprobe-.*-base:$/ { n = substr($3, 1, length($3) - 6); print $1, n, n "-base" }' "$OUT/commands.txt" | sort -u >>"$OUT/pairs.base"
	cat "$OUT/pairs.base" >>"$OUT/pairs.txt"
	rm "$OUT/pairs.base"
fi
load_after=$(uptime)
{
	echo "Device: $DEV, a loop device with direct I/O over ${SIZE_MIB} MiB of random data in /dev/shm; $ROUNDS rounds of ${DURATION}s runs, steady state from ${WINDOW%%:*} s for ${WINDOW#*:} s; ioprobe $(git describe --always --dirty 2>/dev/null || echo '?'), $("$FIO" --version)."
	echo
	echo "ioprobe-uring is the default as root: adaptive submission (docs/engines.md), the device-latency programs on."
	echo "-nodevlat: --device-latency=false; -fio1: fio's submission (--batch-submit 1, one I/O per call);"
	echo "-batch32: t/io_uring's -s32 -c32 (--batch-submit 32 --batch-complete 32 --batch-complete-max 32)."
	echo
	echo "Load before: $load_before"
	echo "Load after: $load_after"
	echo
	bin/benchfio report "$OUT"
} | tee "$OUT/report.md"
echo "bench-fio: raw results and report in $OUT" >&2
