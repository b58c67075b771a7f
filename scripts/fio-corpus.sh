#!/usr/bin/env bash
# Which fio job files ioprobe runs with fio's meaning, and why it refuses
# the others (issue 22): every *.fio under the given directories (fio's
# examples/ and t/jobs/ from its source, real-world job files) is checked
# with `ioprobe run --fio-job FILE --target T --allow-destructive --dry-run`,
# T a sparse 8 TiB file (so that no size is too large and every job file
# shares one target), which reads the job file and checks everything a run
# would, touching nothing. It prints a Markdown table (file, runs or the
# option refused and why) and the counts, by the option each refusal names.
#
#   scripts/fio-corpus.sh /path/to/fio/examples /path/to/fio/t/jobs my-jobs/
#
# fio's source for the Debian suite here: add a deb-src line and
# `apt-get source fio`, or clone github.com/axboe/fio at its fio-3.33 tag.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[ $# -gt 0 ] || { echo "usage: $0 DIR..." >&2; exit 2; }
work=$(mktemp -d /tmp/fio-corpus.XXXXXX)
trap 'rm -rf "$work"' EXIT
$GO build -o "$work/ioprobe" ./cmd/ioprobe
truncate -s 8T "$work/target"
runs=0 refused=0
: > "$work/reasons"
echo "| file | ioprobe |"
echo "| --- | --- |"
for dir in "$@"; do
	while IFS= read -r f; do
		rel=${f#"$dir"/}
		if out=$(cd "$(dirname "$f")" && "$work/ioprobe" run --fio-job "$f" --target "$work/target" --allow-destructive --dry-run 2>&1 >/dev/null); then
			runs=$((runs + 1))
			echo "| $(basename "$dir")/$rel | runs |"
		else
			refused=$((refused + 1))
			line=$(printf '%s\n' "$out" | grep -m1 '^ioprobe: ' | sed 's/^ioprobe: //')
			# The option a refusal names: "FILE:LINE: [SECTION] OPTION: why".
			opt=$(printf '%s\n' "$line" | sed -n 's/^[^[]*\[[^]]*\] \([A-Za-z0-9_]*\): .*/\1/p')
			echo "${opt:-(file)}" >> "$work/reasons"
			why=${line#*"] "}
			echo "| $(basename "$dir")/$rel | refused: ${why//|/\\|} |"
		fi
	done < <(find "$dir" -name '*.fio' -type f | sort)
done
echo
echo "$runs run, $refused refused. Refusals by the option they name:"
sort "$work/reasons" | uniq -c | sort -rn | awk '{printf "%s %d", (NR>1?",":""), $1; $1=""; printf "%s", $0} END {print ""}'
