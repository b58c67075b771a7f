#!/usr/bin/env bash
# ioprobe and fio side by side, interleaved, on the same device and region.
#
#   make bench-fio                    # or: scripts/bench-fio.sh
#   ROUNDS=5 DURATION=10 scripts/bench-fio.sh
#   WORKLOADS=1-randread-4k-qd1 scripts/bench-fio.sh
#   BENCH_DEVICE=loop scripts/bench-fio.sh      # a loop device even if zram0 exists
#
# The device is /dev/zram0 (a RAM disk: the figures are the tools' CPU, not
# a disk's), given a 2 GiB size if it has none, else a loop device over a
# file in /tmp, detached at exit. The region is filled with random data
# first. Every round runs every candidate of a workload once, alternating
# ioprobe and fio, in reverse order on even rounds. Each run is measured
# from outside by scripts/benchfio (wait4 rusage of the whole process tree,
# /proc/stat deltas for the host). The report (Markdown) is printed and
# kept with the raw JSON under out/bench-fio/.
#
# Needs root (zram/loop set-up, O_DIRECT on the device) and fio. It writes
# only to /dev/zram0 or its own loop device, never to anything else.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
SIZE_MIB=${SIZE_MIB:-1024}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
FIO=${FIO:-$(command -v fio || true)}

die() { echo "bench-fio: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (device set-up and O_DIRECT on a block device)"
[ -n "$FIO" ] || die "fio is not installed (apt-get install fio)"
[ "$ROUNDS" -ge 3 ] || die "ROUNDS must be at least 3"

loopdev="" backing=""
cleanup() {
	if [ -n "$loopdev" ]; then losetup -d "$loopdev" || echo "bench-fio: could not detach $loopdev" >&2; fi
	if [ -n "$backing" ]; then rm -f "$backing"; fi
}
trap cleanup EXIT

if [ -b /dev/zram0 ] && [ "${BENCH_DEVICE:-}" != loop ]; then
	DEV=/dev/zram0
	if [ "$(cat /sys/block/zram0/disksize)" = 0 ]; then
		echo 2G > /sys/block/zram0/disksize
	fi
	size=$(( $(cat /sys/block/zram0/disksize) / 1048576 ))
	[ "$size" -ge "$SIZE_MIB" ] || die "/dev/zram0 holds $size MiB, less than SIZE_MIB=$SIZE_MIB"
else
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

echo "bench-fio: building ioprobe and the measuring helper" >&2
CGO_ENABLED=0 "$GO" build -o bin/ioprobe ./cmd/ioprobe
CGO_ENABLED=0 "$GO" build -o bin/benchfio ./scripts/benchfio

OUT=out/bench-fio/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
echo "bench-fio: filling $SIZE_MIB MiB of $DEV with random data" >&2
dd if=/dev/urandom of="$DEV" bs=1M count="$SIZE_MIB" oflag=direct status=none

SIZE=$((SIZE_MIB * 1048576))
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
		;;
	2-randread-4k-qd32)
		echo "ioprobe-sync $rr --qd 32 --engine sync"
		echo "fio-io_uring --name=rr --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --fixedbufs --registerfiles"
		echo "ioprobe-uring $rr --qd 32 --engine uring"
		echo "fio-libaio --name=rr --rw=randread --bs=4k --ioengine=libaio --iodepth=32"
		echo "fio-psync32jobs --name=rr --rw=randread --bs=4k --ioengine=psync --iodepth=1 --numjobs=32"
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
			if [[ $name == ioprobe-* ]]; then
				cmd=("${IOPROBE[@]}" "${extra[@]}")
			else
				cmd=("${FIOBASE[@]}" "${extra[@]}")
			fi
			echo "bench-fio: $w round $round: $name" >&2
			echo "$w $round $name: ${cmd[*]}" >>"$OUT/commands.txt"
			bin/benchfio measure "$OUT/$w.$round.$name.rec.json" "$OUT/$w.$round.$name.json" -- "${cmd[@]}"
		done
	done
done

{
	echo "Device: $DEV, region $SIZE_MIB MiB filled with random data; $ROUNDS rounds of ${DURATION}s runs."
	echo
	bin/benchfio report "$OUT"
} | tee "$OUT/report.md"
echo "bench-fio: raw results and report in $OUT" >&2
