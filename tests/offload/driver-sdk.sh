#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Print a directory holding DPDK's driver-side headers (ethdev_driver.h and
# the four it needs) for the installed DPDK, fetching them if need be.
#
# The test-only PMD of tests/offload/ implements eth_dev_ops and flow_ops, so
# it needs the headers a PMD is built with.  Debian's libdpdk-dev does not
# install them (DPDK 22.11 keeps them for its "driver SDK"), so this takes
# them from Debian's source package of exactly the installed version, with
# apt-get in a private state directory (the system's apt configuration is
# not touched), and keeps them in a cache.  Prints nothing and exits 1 when
# they cannot be had; the offload tests then say so and fail.
#   usage: driver-sdk.sh [DPDK_VERSION]
set -uo pipefail

HEADERS=(lib/ethdev/ethdev_driver.h lib/ethdev/ethdev_vdev.h lib/eal/include/dev_driver.h
	 lib/eal/include/bus_driver.h drivers/bus/vdev/bus_vdev_driver.h)

ver=${1:-$(pkg-config --modversion libdpdk 2>/dev/null)}
[ -n "$ver" ] || { echo "driver-sdk: libdpdk not found" >&2; exit 1; }

# Installed with DPDK (a build with enable_driver_sdk=true): nothing to do.
for dir in $(pkg-config --cflags-only-I libdpdk 2>/dev/null | tr ' ' '\n' | sed -n 's/^-I//p') /usr/include/dpdk; do
	if [ -f "$dir/ethdev_driver.h" ] && [ -f "$dir/bus_vdev_driver.h" ]; then
		echo "$dir"
		exit 0
	fi
done

if [ -w /var/cache ]; then
	cache=${DPDK_SDK_CACHE:-/var/cache/dpdk-roce-vswitch}
else
	cache=${DPDK_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dpdk-roce-vswitch}
fi
inc=$cache/dpdk-$ver/include
have_all() {
	for h in "${HEADERS[@]}"; do [ -f "$inc/${h##*/}" ] || return 1; done
}
if have_all; then
	echo "$inc"
	exit 0
fi

# The Debian revision of the installed package, e.g. 22.11.11-0+deb12u1.
debver=$(dpkg-query -W -f='${Version}' libdpdk-dev 2>/dev/null)
case "$debver" in
"$ver"-*) ;;
*) echo "driver-sdk: installed libdpdk-dev is '$debver', not DPDK $ver from Debian" >&2; exit 1 ;;
esac

work=$(mktemp -d /tmp/dpdk-sdk.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
cat >"$work/sources.list" <<EOF
deb-src http://deb.debian.org/debian $codename main
deb-src http://deb.debian.org/debian $codename-updates main
deb-src http://deb.debian.org/debian-security $codename-security main
EOF
apt_opts=(-q -o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
	  -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache"
	  -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
echo "driver-sdk: fetching DPDK $debver source headers from Debian" >&2
if ! apt-get "${apt_opts[@]}" update >"$work/log" 2>&1 ||
   ! (cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "dpdk=$debver") >>"$work/log" 2>&1; then
	sed 's/^/driver-sdk: /' "$work/log" | tail -5 >&2
	echo "driver-sdk: could not download the dpdk $debver source package" >&2
	exit 1
fi
orig=$(ls "$work"/src/dpdk_"$ver".orig.tar.* 2>/dev/null | head -1)
[ -n "$orig" ] || { echo "driver-sdk: no dpdk_$ver.orig tarball" >&2; exit 1; }
members=()
for h in "${HEADERS[@]}"; do members+=("--wildcards" "*/$h"); done
if ! tar -C "$work/src" -xf "$orig" "${members[@]}"; then
	echo "driver-sdk: headers missing from $orig" >&2
	exit 1
fi
mkdir -p "$inc"
for h in "${HEADERS[@]}"; do
	cp "$work"/src/*/"$h" "$inc/" || exit 1
done
have_all || exit 1
echo "$inc"
