#!/usr/bin/env bash
# Installs what the test suite needs, from Debian's packages, when it is
# missing. Without root or apt-get it says what is missing and carries on:
# the tests that need it skip with a message.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have losetup   || need+=(util-linux)
have flock     || need+=(util-linux)
have mount     || need+=(mount)
have umount    || need+=(mount)
have mkfs.ext4 || need+=(e2fsprogs)
have mke2fs    || need+=(e2fsprogs)
have mkfs.ext2 || need+=(e2fsprogs)
have mkfs.ext3 || need+=(e2fsprogs)
have sfdisk    || need+=(fdisk)
# The device tests' partitions, swap and copies (internal/target, test/).
have addpart   || need+=(util-linux)
have partx     || need+=(util-linux)
have lsblk     || need+=(util-linux)  # the storage stack's referee
have mkswap    || need+=(util-linux)
have swapon    || need+=(mount)
have swapoff   || need+=(mount)
have cp        || need+=(coreutils)
have setpriv   || need+=(util-linux)
# The shipped unit and its drop-in, checked offline (test/deploy_test.go).
have systemd-analyze || need+=(systemd)
have strace    || need+=(strace)
# fio's buffer contents side by side (test/fiobuffers_test.go): what a
# compressing device would make of the written bytes.
have zstd      || need+=(zstd)
have dd        || need+=(coreutils)
have prometheus || need+=(prometheus)
have promtool  || need+=(prometheus)
have fio       || need+=(fio)   # fio-json's reference and fio_jsonplus_clat2csv
have fio_jsonplus_clat2csv || need+=(fio)
# Device latency (internal/devlat): clang 14 rebuilds the committed BPF
# objects to check them; bpftrace is the second referee of their times.
have clang-14  || need+=(clang-14)
have llvm-strip-14 || need+=(llvm-14)
have bpftrace  || need+=(bpftrace)
# The docs' examples as written (test/readme_test.go): curl | grep, ssh's
# and scp's stand-ins are bash scripts.
have curl     || need+=(curl)
have bash     || need+=(bash)
# The fleet's end-to-end tests (test/helpers_netns_test.go): network namespaces,
# veth pairs and a bridge, a UTS namespace per daemon.
have ip       || need+=(iproute2)
have unshare  || need+=(util-linux)
have nsenter  || need+=(util-linux)
python3 -c 'import six' 2>/dev/null || need+=(python3-six)   # fio_jsonplus_clat2csv imports it
# Debian's own python3 (a pyenv shim on PATH may be another): the device
# tests hold devices with its fcntl (testdeps.DebianPython).
[ -x /usr/bin/python3 ] || need+=(python3)
# fio-plot's charts of ioprobe's fio-json (test/fioplot_test.go, with a
# fio-plot source tree in $IOPROBE_FIO_PLOT): Debian's matplotlib.
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
/usr/bin/python3 -c 'import numpy' 2>/dev/null || need+=(python3-numpy)
/usr/bin/python3 -c 'import PIL' 2>/dev/null || need+=(python3-pil)
# The etcd check's slow-flush device (test/check_slowflush_test.go): a FUSE
# passthrough in Debian's Python (it mounts as root by mount(2) through
# libfuse2, which python3-fusepy brings; no fusermount needed).
/usr/bin/python3 -c 'import fusepy' 2>/dev/null || need+=(python3-fusepy)
have chromium  || need+=(chromium) # the HTML report's layout test (test/htmlpage_test.go) and scripts/screenshot-report.sh
have node      || need+=(nodejs)
# A real browser for the DNS-rebinding test (test/rebinding_test.go): a page
# whose name points at the daemon must not start a run.
have chromium  || need+=(chromium)
# A terminal for a run (script gives it one): its progress line must not
# pass a job name's escape sequences through (test/hostile_text_test.go).
have script    || need+=(bsdutils)
have npm       || need+=(npm)
# The differential test against libblkid (test/blkid_other_test.go): the
# tools that make RAID, volume-manager, crypto, swap and partition labels.
have wipefs       || need+=(util-linux)
have blkid        || need+=(util-linux)
have mdadm        || need+=(mdadm)
have pvcreate     || need+=(lvm2)
have cryptsetup   || need+=(cryptsetup-bin)
have veritysetup  || need+=(cryptsetup-bin)
have integritysetup || need+=(cryptsetup-bin)
have make-bcache  || need+=(bcache-tools)
have drbdmeta     || need+=(drbd-utils)
have sgdisk       || need+=(gdisk)
have parted       || need+=(parted)
# The filesystem cases of the same test (test/blkid_fs_test.go).
have blockdev     || need+=(util-linux)
have mkfs.minix   || need+=(util-linux)
have mkfs.bfs     || need+=(util-linux)
have mkfs.cramfs  || need+=(util-linux)
have mkfs.xfs     || need+=(xfsprogs)
have mkfs.btrfs   || need+=(btrfs-progs)
have mkfs.vfat    || need+=(dosfstools)
have mkfs.exfat   || need+=(exfatprogs)
have mkfs.ntfs    || need+=(ntfs-3g)
have mkfs.f2fs    || need+=(f2fs-tools)
have mkfs.jfs     || need+=(jfsutils)
have mkfs.reiserfs || need+=(reiserfsprogs)
have mkfs.reiser4 || need+=(reiser4progs)
have mkfs.nilfs2  || need+=(nilfs-tools)
have mkfs.gfs2    || need+=(gfs2-utils)
have mkfs.ocfs2   || need+=(ocfs2-tools)
have mkudffs      || need+=(udftools)
have mkfs.erofs   || need+=(erofs-utils)
have mksquashfs   || need+=(squashfs-tools)
have genromfs     || need+=(genromfs)
have genisoimage  || need+=(genisoimage)
have mkapfs       || need+=(apfsprogs)
have mkfs.ubifs   || need+=(mtd-utils)
have ubinize      || need+=(mtd-utils)
# Backup metadata, filesystems at a partition's start, disk images
# (test/safety_backups_test.go, internal/blkid): each format's own
# recovery tool is the referee, and qemu-img names the images.
have xfs_repair   || need+=(xfsprogs)
have ntfsfix      || need+=(ntfs-3g)
have fsck.vfat    || need+=(dosfstools)
have fsck.exfat   || need+=(exfatprogs)
have fsck.jfs     || need+=(jfsutils)
have fsck.ocfs2   || need+=(ocfs2-tools)
have e2fsck       || need+=(e2fsprogs)
have dumpe2fs     || need+=(e2fsprogs)
have pvck         || need+=(lvm2)
have vgcreate     || need+=(lvm2)
have apfsck       || need+=(apfsprogs)
have qemu-img     || need+=(qemu-utils)

# --- Monitoring: Prometheus 3 and Grafana's published types ------------
# After the Debian packages (they bring go's neighbours node and npm), as a
# function so every exit path runs it. Both go into project-local,
# git-ignored directories and are skipped when already there. Prometheus 3
# and promtool of 3.5 LTS are built by scripts/prometheus3.sh (the releases
# pinned there and in scripts/promtool-lts/go.mod);
# --without-prometheus3 leaves it out, for make test, which runs that
# build beside everything else.
root=$(cd "$(dirname "$0")/.." && pwd)
prometheus3=yes staticcheck=yes only_staticcheck=no bench=no
for arg in "$@"; do
	case $arg in
	--without-prometheus3) prometheus3=no ;;
	# make test installs staticcheck in the job that lints, beside the tests.
	--without-staticcheck) staticcheck=no ;;
	--staticcheck-only) only_staticcheck=yes ;;
	# What the benchmark scripts need and make test does not (see
	# bench_deps below); scripts/bench-fio.sh runs it.
	--bench) bench=yes ;;
	*) echo "test-deps: unknown argument $arg" >&2; exit 2 ;;
	esac
done

# --- Benchmarks only (--bench): never part of make test -----------------
# scripts/bench-fio.sh compares ioprobe with fio's t/io_uring (Jens Axboe's
# peak-IOPS tool, in fio's source, not in Debian's fio package) and with a
# bare C pread loop, scripts/bench-idle.sh profiles the idle daemon and
# scripts/bench-devlat.sh the device-latency programs (bpftool's run
# times): they need fio, a C compiler and make, strace, perf, bpftool, and fio's source as
# Debian ships it (apt-get source, the same version as the installed fio),
# unpacked in $FIO_SRC_DIR (default .tools/fio-src, git-ignored). A
# deb-src entry for the suites already configured is added when apt has
# none.
FIO_SRC_DIR=${FIO_SRC_DIR:-$root/.tools/fio-src}
bench_deps() {
	local pkgs=() p
	for p in fio:fio gcc:gcc make:make strace:strace perf:linux-perf dpkg-source:dpkg-dev bpftool:bpftool; do
		command -v "${p%%:*}" >/dev/null 2>&1 || pkgs+=("${p#*:}")
	done
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		[ ${#pkgs[@]} -eq 0 ] || echo "test-deps: --bench: missing ${pkgs[*]} (not root or no apt-get)" >&2
		[ -f "$FIO_SRC_DIR/t/io_uring.c" ] || echo "test-deps: --bench: no fio source in $FIO_SRC_DIR (not root or no apt-get)" >&2
		return 0
	fi
	export DEBIAN_FRONTEND=noninteractive
	if [ ${#pkgs[@]} -gt 0 ]; then
		echo "test-deps: --bench: installing ${pkgs[*]}"
		apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
		apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
	fi
	local version
	version=$(dpkg-query -W -f='${Version}' fio)
	if [ -f "$FIO_SRC_DIR/t/io_uring.c" ] && [ "$(cat "$FIO_SRC_DIR/.debian-version" 2>/dev/null)" = "$version" ]; then
		echo "test-deps: --bench: fio $version source is in $FIO_SRC_DIR"
		return 0
	fi
	if ! apt-get source --print-uris fio >/dev/null 2>&1; then
		add_deb_src
		apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
	fi
	local tmp
	tmp=$(mktemp -d /tmp/fio-src.XXXXXX)
	echo "test-deps: --bench: apt-get source fio=$version into $FIO_SRC_DIR"
	(cd "$tmp" && apt-get source -qq "fio=$version" >/dev/null 2>&1) || {
		rm -rf "$tmp"
		echo "test-deps: --bench: apt-get source fio=$version failed" >&2
		return 1
	}
	local src
	src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'fio-*' | head -1)
	[ -n "$src" ] && [ -f "$src/t/io_uring.c" ] || { rm -rf "$tmp"; echo "test-deps: --bench: no t/io_uring.c in fio's source" >&2; return 1; }
	rm -rf "$FIO_SRC_DIR"
	mkdir -p "$(dirname "$FIO_SRC_DIR")"
	mv "$src" "$FIO_SRC_DIR"
	echo "$version" >"$FIO_SRC_DIR/.debian-version"
	rm -rf "$tmp"
}

# add_deb_src adds deb-src for the Debian suites apt already fetches
# binaries from: deb822 stanzas (*.sources) copied with Types: deb-src, and
# one-line entries (sources.list, *.list) with deb-src for deb. APT_DIR is
# for the test of this function only.
add_deb_src() {
	local d=${APT_DIR:-/etc/apt} f
	echo "test-deps: --bench: adding deb-src entries ($d/sources.list.d/ioprobe-deb-src.*)"
	for f in "$d"/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		case $f in */ioprobe-deb-src.sources) continue ;; esac
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
			/(^|\n)Types:([^\n]*[ \t])?deb([ \t]|\n|$)/ && /(^|\n)URIs:[^\n]*debian/ {
				sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f"
	done >"$d/sources.list.d/ioprobe-deb-src.sources"
	{ cat "$d/sources.list" "$d"/sources.list.d/*.list 2>/dev/null || true; } |
		sed -n 's/^deb\([[:space:]].*debian.*\)$/deb-src\1/p' >"$d/sources.list.d/ioprobe-deb-src.list"
	for f in "$d"/sources.list.d/ioprobe-deb-src.*; do
		[ -s "$f" ] || rm -f "$f"
	done
}

if [ "$bench" = yes ]; then
	bench_deps
	exit $?
fi
monitoring_deps() {
	if [ "$prometheus3" = yes ]; then
		"$root/scripts/prometheus3.sh"
	fi
	# @grafana/schema and typescript, exactly as package-lock.json pins them.
	local schema=$root/test/grafana-schema
	if [ -f "$schema/node_modules/@grafana/schema/package.json" ] &&
		[ -f "$schema/node_modules/typescript/bin/tsc" ] &&
		[ "$schema/node_modules/.package-lock.json" -nt "$schema/package-lock.json" ]; then
		echo "test-deps: @grafana/schema is in $schema/node_modules"
	elif ! command -v npm >/dev/null 2>&1; then
		echo "test-deps: no npm: the Grafana schema test will skip" >&2
	else
		echo "test-deps: npm ci in $schema"
		(cd "$schema" && npm ci --no-audit --no-fund --loglevel=error) ||
			echo "test-deps: npm ci failed: the Grafana schema test will skip" >&2
	fi
}
# ------------------------------------------------------------------------

have gcc        || need+=(gcc) # cgo, for go test -race

# staticcheck (make lint), pinned, from the Go module proxy: a Go tool, not
# a Debian package. The version must know the Go release in go.mod.
staticcheck_version=$(sed -n 's/^STATICCHECK_VERSION := //p' "$(dirname "$0")/../Makefile")
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
sc="$("$GO" env GOPATH)/bin/staticcheck"
if [ "$staticcheck" = yes ] && [ -n "$staticcheck_version" ] && ! { [ -x "$sc" ] && "$sc" -version 2>/dev/null | grep -q "(${staticcheck_version#v})"; }; then
	echo "test-deps: installing staticcheck $staticcheck_version"
	GOFLAGS= "$GO" install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" ||
		echo "test-deps: could not install staticcheck: make lint skips it" >&2
fi
if [ "$only_staticcheck" = yes ]; then
	exit 0
fi

if [ ${#need[@]} -eq 0 ]; then
	echo "test-deps: everything is installed"
	monitoring_deps
	exit 0
fi
mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
if [ "$(id -u)" -ne 0 ] || ! have apt-get; then
	echo "test-deps: missing ${need[*]} (not root or no apt-get): the tests that need them will skip" >&2
	monitoring_deps
	exit 0
fi
echo "test-deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# The Debian package may start a Prometheus service on :9090. It is left
# alone: the tests start their own on ports they pick, and nothing in the
# test path stops a process it did not start (test/hygiene_test.go).
monitoring_deps
echo "test-deps: done"
