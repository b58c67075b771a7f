#!/usr/bin/env bash
# Builds util-linux's blkid and wipefs, statically linked against the
# libblkid of the same tree, from a util-linux source tree (a clone or an
# exported snapshot of github.com/util-linux/util-linux), for the blkid
# differential test to use as a referee newer than the system's:
#
#   scripts/blkid-referee.sh SRC OUT
#   IOPROBE_BLKID_REFEREE=OUT go test -run 'TestBlkid' ./test/
#
# Needs Debian's build tools: autoconf automake libtool autopoint bison
# flex gettext pkg-config gcc make (apt-get install them first). Nothing is
# installed: OUT gets blkid and wipefs only.
set -euo pipefail
src=${1:?usage: $0 UTIL_LINUX_SOURCE OUT_DIR}
out=${2:?usage: $0 UTIL_LINUX_SOURCE OUT_DIR}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cp -a "$src/." "$build/"
cd "$build"
# An exported tree has no git history to name its version from.
[ -e .tarball-version ] || [ -d .git ] || echo "2.43.0-devel" > .tarball-version
./autogen.sh >/dev/null
./configure --disable-all-programs --enable-libblkid --enable-blkid --enable-wipefs \
	--enable-libsmartcols --disable-nls --without-python --disable-bash-completion \
	--without-systemd --without-udev --disable-asciidoc --disable-poman \
	--disable-shared --enable-static >/dev/null
make -j"$(nproc)" blkid wipefs >/dev/null
mkdir -p "$out"
cp blkid wipefs "$out/"
"$out/blkid" --version
