#!/usr/bin/env bash
# ioprobe and fio side by side: 4 KiB sequential writes, an fdatasync after
# each (etcd's WAL pattern, fio's --fdatasync=1), interleaved rounds on one
# file, comparing the 99th-percentile fdatasync latency.
#
#   make bench-fsync                       # or: scripts/bench-fsync.sh
#   ROUNDS=7 DURATION=20s DIR=/var/tmp scripts/bench-fsync.sh
#   ENGINE=uring scripts/bench-fsync.sh    # ioprobe's io_uring fsync against fio's io_uring
#   ENGINE=uring FIO_ENGINE=psync scripts/bench-fsync.sh   # ... against fio's pwrite + fdatasync
#
# The file (SIZE, default 64MiB) is created in a new directory under DIR
# (default /tmp: the storage measured is the filesystem under DIR) and
# removed at the end. Needs fio; no root. It writes nothing else. The
# report (Markdown) is printed and kept under out/bench-fsync/.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10s}
DIR=${DIR:-/tmp}
SIZE=${SIZE:-64MiB}
ENGINE=${ENGINE:-sync}
FIO_ENGINE=${FIO_ENGINE:-}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
FIO=${FIO:-$(command -v fio || true)}
[ -n "$FIO" ] || { echo "bench-fsync: fio is not installed (apt-get install fio)" >&2; exit 1; }

CGO_ENABLED=0 "$GO" build -o bin/ioprobe ./cmd/ioprobe
CGO_ENABLED=0 "$GO" build -o bin/benchfsync ./scripts/benchfsync
OUT=out/bench-fsync
mkdir -p "$OUT"
report="$OUT/$(date -u +%Y%m%dT%H%M%SZ).md"
bin/benchfsync -ioprobe bin/ioprobe -fio "$FIO" -dir "$DIR" -size "$SIZE" -engine "$ENGINE" -fio-engine "$FIO_ENGINE" \
	-rounds "$ROUNDS" -duration "$DURATION" | tee "$report"
echo "bench-fsync: report in $report" >&2
