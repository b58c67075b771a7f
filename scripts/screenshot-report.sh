#!/usr/bin/env bash
# Renders ioprobe's HTML report in headless Chromium and saves PNGs, so a
# person can look at every chart without a browser at hand.
#
#   scripts/screenshot-report.sh [FILE.json ...]
#
# With JSON files (from 'ioprobe suite --output json' or 'ioprobe run
# --output json'), each is rendered as it is. Without, it first runs short
# suites on scratch files so every kind of figure has real data:
# characterize, protocols, peak-iops on two targets, business with
# --repeat 2, and scaling (about a minute and a half on two cores).
#
# Output goes to $OUT (default ./out/screenshots): NAME.json, NAME.html,
# the full-page NAME.png and NAME-1.png, NAME-2.png, … cut 1300 pixels
# high, which an image viewer shows whole. Needs go and chromium
# ($CHROMIUM, default chromium). Scratch targets are created in $OUT, which
# must not be on tmpfs (ioprobe refuses it: O_DIRECT is not honoured there).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out/screenshots}
chromium=${CHROMIUM:-chromium}
duration=${DURATION:-500ms}
ramp=${RAMP:-100ms}
mkdir -p "$out"
out=$(cd "$out" && pwd)

command -v "$chromium" >/dev/null || { echo "screenshot-report: $chromium not found (set CHROMIUM)" >&2; exit 1; }
cd "$root"
go build -o "$out/.ioprobe" ./cmd/ioprobe
ioprobe=$out/.ioprobe

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
	scratch=$(mktemp -d "$out/scratch.XXXXXX")
	trap 'rm -rf "$scratch"' EXIT
	run() { # name, then suite arguments
		local name=$1
		shift
		echo "screenshot-report: ioprobe suite $*" >&2
		"$ioprobe" suite "$@" --duration "$duration" --ramp "$ramp" --output json --out "$out/$name.json"
		files+=("$out/$name.json")
	}
	run characterize characterize --target "$scratch/a.dat" --size 64MiB
	run protocols protocols --target "$scratch/a.dat" --size 32MiB
	run peak-iops peak-iops --target "$scratch/a.dat" --target "$scratch/b.dat" --size 64MiB
	run business business --target "$scratch/a.dat" --size 64MiB --repeat 2
	run scaling scaling --target "$scratch/a.dat" --size 64MiB
fi

shots=()
for f in "${files[@]}"; do
	name=$(basename "${f%.json}")
	html=$out/$name.html
	"$ioprobe" report "$f" --output html --out "$html"
	# A window tall enough for the whole page: two 340-pixel charts a row,
	# table rows, section headings; Chromium caps a screenshot at 16384.
	svgs=$(grep -o '<svg class="chart"' "$html" | wc -l)
	rows=$(grep -o '<tr>' "$html" | wc -l)
	parts=$(grep -o 'class="part' "$html" | wc -l)
	height=$((600 + (svgs + 1) / 2 * 400 + rows * 34 + parts * 80))
	height=$((height > 16000 ? 16000 : height))
	png=$out/$name.png
	"$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--hide-scrollbars --screenshot="$png" --window-size=1600,"$height" "file://$html" >/dev/null 2>&1
	[ -s "$png" ] || { echo "screenshot-report: chromium wrote no $png" >&2; exit 1; }
	rm -f "$out/$name"-[0-9]*.png
	mapfile -t pages < <(go run ./scripts/pngsplit "$png" 1300)
	shots+=("${pages[@]}")
done
printf '%s\n' "${shots[@]}"
