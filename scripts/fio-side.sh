#!/usr/bin/env bash
# fio and ioprobe side by side on the same job files (issues 16, 22 and 33): for each
# job in scripts/fioside/*.fio, both tools run it on one loop device and the
# script compares, from each tool's own JSON and from the kernel's
# /sys/block/loopN/stat, the read share and the mean transfer size, and from
# the offsets of a short strace'd run (the job with ioengine=psync, so that
# every I/O is a pread64/pwrite64) the per-size counts and the random share
# (I/Os whose offset is not the previous I/O's end).
#
#   make fio-side            # or: scripts/fio-side.sh
#   DURATION=5 scripts/fio-side.sh
#   JOBS='scripts/fioside/[k-o]*.fio' scripts/fio-side.sh   # some of the jobs
#
# Needs root (the loop device), fio, strace and python3 (and zstd for the
# buffer contents' job). It writes only to its own loop device over a file
# in /tmp, detached and removed at exit; a job with ioscheduler= switches
# that device's scheduler, which the script puts back after each tool.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-5}
TRACE=${TRACE:-5}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
die() { echo "fio-side: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (a loop device)"
for t in fio strace python3 zstd; do command -v $t >/dev/null || die "$t is not installed (scripts/test-deps.sh)"; done

work=$(mktemp -d /tmp/fio-side.XXXXXX)
loopdev=""
cleanup() {
	if [ -n "$loopdev" ]; then losetup -d "$loopdev" || echo "fio-side: could not detach $loopdev" >&2; fi
	rm -rf "$work"
}
trap cleanup EXIT
$GO build -o "$work/ioprobe" ./cmd/ioprobe
truncate -s 64M "$work/backing"
loopdev=$(losetup -f --show --direct-io=on "$work/backing")
case "$loopdev" in /dev/loop*) ;; *) die "not a loop device: $loopdev" ;; esac
dev=${loopdev#/dev/}
# The kernel's counters of our device: on (another run may have switched
# a loop device's off before it was detached; the setting outlives it).
echo 1 > "/sys/block/$dev/queue/iostats"
stat() { cat "/sys/block/$dev/stat"; }
sched() { sed 's/.*\[\(.*\)\].*/\1/' "/sys/block/$dev/queue/scheduler"; }
# A job with ioscheduler= (issue 33 item 7) starts each tool on "none" and
# records what the device has after it: fio leaves its switch in place,
# ioprobe must put "none" back itself. The device's own scheduler is put
# back after the job.
orig=$(sched)
unsched() { echo "$1" > "/sys/block/$dev/queue/scheduler"; }

# shellcheck disable=SC2086 # JOBS is a glob
for job in ${JOBS:-scripts/fioside/*.fio}; do
	name=$(basename "$job" .fio)
	# A job with directory=${DIR} runs on files of its own in $work
	# (issue 33: several files per job, fio's names): the tools share them
	# (fio lays them out first), and ioprobe runs the job's files, not
	# --target.
	dir="$work/$name.files"
	mkdir -p "$dir"
	target=(--target "$loopdev")
	if grep -q '\${DIR}' "$job"; then target=(); fi
	sed "s|\${RUNTIME}|$DURATION|; s|\${DEV}|$loopdev|; s|\${DIR}|$dir|" "$job" > "$work/$name.fio"
	sed "s|\${RUNTIME}|$TRACE|; s|\${DEV}|$loopdev|; s|\${DIR}|$dir|; s|^ioengine=.*|ioengine=psync|; s|^numjobs=.*|numjobs=1|" "$job" > "$work/$name.trace.fio"
	# A job with fio's buffer options (issue 33 item 6): what each tool
	# wrote is measured right after it (scripts/fioside/written.py).
	written=""
	if grep -qE '^(buffer_|dedupe_|zero_buffers|scramble_buffers|refill_buffers)' "$job"; then
		written=$(sed -n 's/^size=\([0-9]*\)m$/\1/p' "$job")
	fi
	switched=""
	if grep -q '^ioscheduler=' "$job"; then switched=none; unsched none; fi
	stat > "$work/$name.fio.stat0"
	fio --output-format=json --output="$work/$name.fio.json" "$work/$name.fio" >/dev/null
	stat > "$work/$name.fio.stat1"
	sched > "$work/$name.fio.sched"
	if [ -n "$switched" ]; then unsched none; fi
	if [ -n "$written" ]; then
		python3 scripts/fioside/written.py "$loopdev" $((written << 20)) > "$work/$name.fio.written"
		dd if=/dev/urandom of="$loopdev" bs=1M count="$written" oflag=direct status=none
	fi
	"$work/ioprobe" run --fio-job "$work/$name.fio" "${target[@]}" --allow-destructive -o json > "$work/$name.ioprobe.json" 2>"$work/$name.ioprobe.err"
	sched > "$work/$name.ioprobe.sched"
	if [ -n "$written" ]; then
		python3 scripts/fioside/written.py "$loopdev" $((written << 20)) > "$work/$name.ioprobe.written"
	fi
	# The same result as fio's JSON (its jobs one by one) and as CSV (a
	# point's total row).
	"$work/ioprobe" report "$work/$name.ioprobe.json" --output fio-json > "$work/$name.ioprobe.fio.json"
	"$work/ioprobe" report "$work/$name.ioprobe.json" --output csv > "$work/$name.ioprobe.csv"
	strace -ff -qq --seccomp-bpf -ttt -e trace=openat,close,pread64,pwrite64 -o "$work/$name.fio.strace" fio "$work/$name.trace.fio" >/dev/null
	strace -ff -qq --seccomp-bpf -ttt -e trace=openat,close,pread64,pwrite64 -o "$work/$name.ioprobe.strace" \
		"$work/ioprobe" run --fio-job "$work/$name.trace.fio" "${target[@]}" --allow-destructive -o json >"$work/$name.trace.json" 2>"$work/$name.trace.err"
	unsched "$orig"
done
python3 scripts/fioside/compare.py "$work" "$loopdev" || status=$?
if [ -n "${KEEP:-}" ]; then cp -r "$work" "$KEEP"; fi
exit "${status:-0}"
