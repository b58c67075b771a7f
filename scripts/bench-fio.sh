#!/usr/bin/env bash
# ioprobe and fio side by side, interleaved, on the same device and region,
# and ioprobe held to two references: fio's t/io_uring (Jens Axboe's
# peak-IOPS tool, built here from Debian's fio source) at QD 32, and a bare
# C pread loop (scripts/bareloop) at QD 1.
#
#   make bench-fio                    # or: scripts/bench-fio.sh
#   ROUNDS=7 DURATION=10 scripts/bench-fio.sh
#   WORKLOADS="1-randread-4k-qd1 2-randread-4k-qd32" scripts/bench-fio.sh
#   BENCH_DEVICE=loop scripts/bench-fio.sh      # a loop device even if zram0 exists
#   BASE=2a67e9f scripts/bench-fio.sh            # and that revision's ioprobe: before/after
#
# The device is /dev/zram0 (a RAM disk: the figures are the tools' CPU, not
# a disk's), given a 2 GiB size if it has none (and reset to none at exit),
# else a loop device over a file in /tmp, detached at exit. The region is
# filled with random data first: by default the whole device, since
# t/io_uring reads the whole of it (with SIZE_MIB smaller than the device,
# t/io_uring is left out). Every round runs every candidate of a workload
# once, in reverse order on even rounds. Each run is measured from outside
# by scripts/benchfio (wait4 rusage of the whole process tree, /proc/stat
# deltas for the host, the device's completed I/Os). With BASE (a git
# revision), every ioprobe candidate runs a second time as NAME-base with
# ioprobe built from that revision, in the same rounds, and the report
# holds each to its base too. The report (Markdown) is printed and kept
# with the raw output under out/bench-fio/.
#
# It holds /tmp/ioprobe-quiet.lock for its whole run (the shared machine's
# lock for zram0 and quiet measurements), and prints uptime before and
# after. Needs root (zram/loop set-up, O_DIRECT on the device), fio, gcc and
# make; scripts/test-deps.sh --bench installs them and fio's source. It
# writes only to /dev/zram0 or its own loop device, never to anything else.
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

# The shared machine's lock for zram0 and for measurements meant to be quiet.
if [ -z "${IOPROBE_QUIET_LOCKED:-}" ]; then
	exec 9>/tmp/ioprobe-quiet.lock
	echo "bench-fio: waiting for /tmp/ioprobe-quiet.lock" >&2
	flock 9
	export IOPROBE_QUIET_LOCKED=1
fi

loopdev="" backing="" zram_sized=""
cleanup() {
	if [ -n "$loopdev" ]; then losetup -d "$loopdev" || echo "bench-fio: could not detach $loopdev" >&2; fi
	if [ -n "$backing" ]; then rm -f "$backing"; fi
	# Leave zram0 as it was found: without a size.
	# (Busy for a moment after the last run: its kernel workers exit.)
	if [ -n "$zram_sized" ]; then
		for _ in $(seq 20); do echo 1 2>/dev/null >/sys/block/zram0/reset && zram_sized="" && break; sleep 0.5; done
		[ -z "$zram_sized" ] || echo "bench-fio: could not reset /dev/zram0 (echo 1 > /sys/block/zram0/reset)" >&2
	fi
}
trap cleanup EXIT

if [ -b /dev/zram0 ] && [ "${BENCH_DEVICE:-}" != loop ]; then
	DEV=/dev/zram0
	if [ "$(cat /sys/block/zram0/disksize)" = 0 ]; then
		echo 2G > /sys/block/zram0/disksize
		zram_sized=1
	fi
	DEV_MIB=$(( $(cat /sys/block/zram0/disksize) / 1048576 ))
	SIZE_MIB=${SIZE_MIB:-$DEV_MIB}
	[ "$DEV_MIB" -ge "$SIZE_MIB" ] || die "/dev/zram0 holds $DEV_MIB MiB, less than SIZE_MIB=$SIZE_MIB"
else
	SIZE_MIB=${SIZE_MIB:-1024}
	DEV_MIB=$SIZE_MIB
	backing=$(mktemp /tmp/bench-fio.XXXXXX)
	truncate -s "${SIZE_MIB}M" "$backing"
	loopdev=$(losetup -f --show --direct-io=on "$backing")
	DEV=$loopdev
fi
# The only devices this script may write to.
case "$DEV" in
/dev/zram0 | /dev/loop*) ;;
*) die "refusing to write to $DEV" ;;
esac
if grep -q "^$DEV " /proc/mounts; then die "$DEV is mounted"; fi

echo "bench-fio: building ioprobe, the measuring helper, the bare loop and t/io_uring" >&2
CGO_ENABLED=0 "$GO" build -o bin/ioprobe ./cmd/ioprobe
if [ -n "${BASE:-}" ]; then
	basesrc=$(mktemp -d /tmp/bench-fio-base.XXXXXX)
	git archive "$BASE" | tar -x -C "$basesrc"
	(cd "$basesrc" && CGO_ENABLED=0 "$GO" build -o "$OLDPWD/bin/ioprobe-base" ./cmd/ioprobe)
	rm -rf "$basesrc"
fi
CGO_ENABLED=0 "$GO" build -o bin/benchfio ./scripts/benchfio
gcc -O2 -Wall -o bin/bareloop scripts/bareloop/bareloop.c
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
		echo "ioprobe-sync $rr --qd 1 --engine sync"
		echo "fio-psync --name=rr --rw=randread --bs=4k --ioengine=psync --iodepth=1"
		echo "bare-loop -b 4096 -s $SIZE -t $DURATION $DEV"
		;;
	2-randread-4k-qd32)
		echo "ioprobe-sync $rr --qd 32 --engine sync"
		echo "fio-io_uring --name=rr --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --fixedbufs --registerfiles"
		echo "ioprobe-uring $rr --qd 32 --engine uring"
		echo "fio-libaio --name=rr --rw=randread --bs=4k --ioengine=libaio --iodepth=32"
		echo "fio-psync32jobs --name=rr --rw=randread --bs=4k --ioengine=psync --iodepth=1 --numjobs=32"
		# t/io_uring's -s32 -c32 in fio's terms: the whole queue per call.
		# ioprobe's default submission is fio's (one I/O per call), so a
		# fair comparison with t/io_uring needs the batch flags.
		echo "ioprobe-uring-batch32 $rr --qd 32 --engine uring --batch-submit 32 --batch-complete 32 --batch-complete-max 32"
		# t/io_uring reads the whole device: only when the region is it.
		if [ "$SIZE_MIB" -eq "$DEV_MIB" ]; then
			echo "tiouring-t1 -d32 -s32 -c32 -b4096 -p0 -B1 -F1 -n1 -t1 -r$DURATION $DEV"
		fi
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
			tiouring-*) cmd=("$TIOURING" "${extra[@]}") ;;
			*) cmd=("${FIOBASE[@]}" "${extra[@]}") ;;
			esac
			echo "bench-fio: $w round $round: $name" >&2
			echo "$w $round $name: ${cmd[*]}" >>"$OUT/commands.txt"
			bin/benchfio measure --dev "$DEV" "$OUT/$w.$round.$name.rec.json" "$OUT/$w.$round.$name.json" -- "${cmd[@]}"
		done
	done
done

# The pairs the issue asks for (benchfio report: "Held to the references").
# ioprobe-uring submits as fio does by default (one I/O per call, as
# fio-io_uring); ioprobe-uring-batch32 as t/io_uring -s32 -c32 does.
printf '%s\n' "2-randread-4k-qd32 ioprobe-uring-batch32 tiouring-t1" "2-randread-4k-qd32 ioprobe-uring tiouring-t1" \
	"2-randread-4k-qd32 ioprobe-uring fio-io_uring" \
	"1-randread-4k-qd1 ioprobe-sync bare-loop" "1-randread-4k-qd1 ioprobe-sync fio-psync" >"$OUT/pairs.txt"
if [ -n "${BASE:-}" ]; then
	# The same pairs for the base, and each ioprobe candidate held to it.
	sed 's/ \(ioprobe-[^ ]*\) / \1-base /' "$OUT/pairs.txt" >"$OUT/pairs.base"
	awk '$3 ~ /^ioprobe-.*-base:$/ { n = substr($3, 1, length($3) - 6); print $1, n, n "-base" }' "$OUT/commands.txt" | sort -u >>"$OUT/pairs.base"
	cat "$OUT/pairs.base" >>"$OUT/pairs.txt"
	rm "$OUT/pairs.base"
fi
load_after=$(uptime)
{
	echo "Device: $DEV, region $SIZE_MIB MiB filled with random data; $ROUNDS rounds of ${DURATION}s runs; ioprobe $(git describe --always --dirty 2>/dev/null || echo '?'), $("$FIO" --version)."
	echo
	echo "Submission: ioprobe's default is fio's (one io_uring_enter per I/O: ioprobe-uring, held to fio-io_uring)."
	echo "Against t/io_uring -s32 -c32, ioprobe-uring-batch32 submits and reaps the whole queue per call as it does:"
	echo "--batch-submit 32 --batch-complete 32 --batch-complete-max 32 (ioprobe run --help)."
	echo
	echo "Load before: $load_before"
	echo "Load after: $load_after"
	echo
	bin/benchfio report "$OUT"
} | tee "$OUT/report.md"
echo "bench-fio: raw results and report in $OUT" >&2
