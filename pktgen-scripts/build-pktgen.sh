#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build pktgen-dpdk against the system's DPDK 22.11 (Debian's libdpdk-dev),
# with Lua, outside this repository, for pktgen-scripts/check.sh.
#
#   pktgen-scripts/build-pktgen.sh [-s SRC] OUT_DIR
#
# SRC (or the environment's PKTGEN_SRC) is pktgen's source: a source tree
# (with meson.build and app/), or a git repository (bare or not) from which
# the tag PKTGEN_TAG (default pktgen-23.06.1) is exported into OUT_DIR/src.
# Blobs missing from a partial clone (pktgen's sample pcaps) are skipped and
# listed; the build needs none of them.  OUT_DIR must lie outside the
# repository: pktgen's code is never part of it.
#
# The build is the one the pktgen issue names:
#   CFLAGS="$(pkg-config --cflags libdpdk)" meson setup BUILD -Denable_lua=true
# in OUT_DIR/build, then ninja.  It needs meson, ninja, pkg-config, libdpdk-dev,
# libnuma-dev, libpcap-dev and liblua5.3-dev (Debian packages).  The last
# line printed is the pktgen binary, so that
#   PKTGEN=$(pktgen-scripts/build-pktgen.sh -s SRC /tmp/pg | tail -1) pktgen-scripts/check.sh BUILD
# runs the interop checks.  Exit status: 0 built, 1 the build failed, 2 a
# usage error or a source that is not at hand.

set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SRC=${PKTGEN_SRC:-}
TAG=${PKTGEN_TAG:-pktgen-23.06.1}

usage() {
	sed -n '4,24p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while getopts "s:h" opt; do
	case $opt in
	s) SRC=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
[ -n "$SRC" ] || { echo "build-pktgen.sh: no pktgen source: give -s SRC or PKTGEN_SRC" >&2; exit 2; }
[ -d "$SRC" ] || { echo "build-pktgen.sh: $SRC: not a directory" >&2; exit 2; }

OUT=$(realpath -m "$1")
case "$OUT/" in
"$ROOT"/*) echo "build-pktgen.sh: $OUT is inside the repository; build pktgen elsewhere" >&2; exit 2 ;;
esac
mkdir -p "$OUT"

for c in meson ninja pkg-config git; do
	command -v "$c" >/dev/null || { echo "build-pktgen.sh: $c is missing" >&2; exit 2; }
done
pkg-config --exists libdpdk || { echo "build-pktgen.sh: pkg-config finds no libdpdk (Debian libdpdk-dev)" >&2; exit 2; }

# The source: a tree as it is, or the tag exported from a git repository.
SRC=$(cd "$SRC" && pwd)
if [ -f "$SRC/meson.build" ] && [ -d "$SRC/app" ]; then
	TREE=$SRC
elif git --git-dir="$SRC" rev-parse --verify -q "$TAG^{commit}" >/dev/null 2>&1 ||
	git --git-dir="$SRC/.git" rev-parse --verify -q "$TAG^{commit}" >/dev/null 2>&1; then
	GD=$SRC
	git --git-dir="$GD" rev-parse --verify -q "$TAG^{commit}" >/dev/null 2>&1 || GD=$SRC/.git
	TREE=$OUT/src
	rm -rf "$TREE"
	mkdir -p "$TREE"
	missing=0
	# Blob by blob, so that a partial clone without pktgen's big pcaps still builds.
	while read -r mode type hash path; do
		[ "$type" = blob ] || continue
		if ! git --git-dir="$GD" cat-file -e "$hash" 2>/dev/null; then
			echo "build-pktgen.sh: $path is not in $GD (skipped)" >&2
			missing=$((missing + 1))
			continue
		fi
		mkdir -p "$TREE/$(dirname "$path")"
		if [ "$mode" = 120000 ]; then
			ln -s "$(git --git-dir="$GD" cat-file blob "$hash")" "$TREE/$path"
		else
			git --git-dir="$GD" cat-file blob "$hash" >"$TREE/$path"
			[ "$mode" = 100755 ] && chmod +x "$TREE/$path"
		fi
	done < <(git --git-dir="$GD" ls-tree -r "$TAG")
	echo "build-pktgen.sh: exported $TAG into $TREE ($missing files missing)" >&2
else
	echo "build-pktgen.sh: $SRC is neither a pktgen source tree nor a git repository with tag $TAG" >&2
	exit 2
fi

BUILD=$OUT/build
rm -rf "$BUILD"
(
	cd "$TREE"
	CFLAGS="$(pkg-config --cflags libdpdk)" meson setup "$BUILD" -Denable_lua=true
) >&2 || { echo "build-pktgen.sh: meson setup failed (liblua5.3-dev, libnuma-dev installed?)" >&2; exit 1; }
ninja -C "$BUILD" >&2 || { echo "build-pktgen.sh: the build failed" >&2; exit 1; }
[ -x "$BUILD/app/pktgen" ] || { echo "build-pktgen.sh: no $BUILD/app/pktgen after the build" >&2; exit 1; }
echo "$BUILD/app/pktgen"
