# SPDX-License-Identifier: BSD-3-Clause
# Shared by scripts/test, scripts/run-demo and scripts/fuzz: dependencies,
# hugepages and the build.  Sourced, not run.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=/usr/bin/python3   # Debian's Python, which has scapy

# Debian packages the build and the tests need (see docs/PLATFORM notes in README).
DEPS=(dpdk dpdk-dev libdpdk-dev meson ninja-build pkg-config libjansson-dev libcunit1-dev
      libbpf-dev libxdp-dev python3-scapy tshark tcpreplay libpcap-dev
      clang-14 libclang-rt-14-dev libfuzzer-14-dev
      libmicrohttpd-dev prometheus etcd-server etcd-client libcurl4-openssl-dev
      iproute2 iputils-ping bsdutils curl iperf3 bc)

log() { printf '== %s\n' "$*" >&2; }

install_deps() {
	local missing=()
	for p in "${DEPS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing: ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing packages and not root: ${missing[*]}" >&2
		return 1
	fi
	apt-get update -q >/dev/null
	# tshark asks whether non-root users may capture; the default answer is fine.
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
		"${missing[@]}" >/dev/null
}

# setup_hugepages N: at least N hugepages of 2 MiB reserved (more are left as they are) and
# hugetlbfs on /dev/hugepages; says how many there are.  Fails when the kernel grants fewer.
setup_hugepages() {
	local want=${1:-512} have
	[ "$(cat /proc/sys/vm/nr_hugepages)" -ge "$want" ] || echo "$want" > /proc/sys/vm/nr_hugepages
	mkdir -p /dev/hugepages
	mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages
	have=$(cat /proc/sys/vm/nr_hugepages)
	log "hugepages: $have of 2 MiB reserved ($want wanted), $(awk '/HugePages_Free/ {print $2}' /proc/meminfo) free"
	[ "$have" -ge "$want" ] || { echo "only $have hugepages could be reserved, $want are needed" >&2; return 1; }
}

build_release() {
	[ -f "$ROOT/build/build.ninja" ] || meson setup "$ROOT/build" "$ROOT" >/dev/null
	ninja -C "$ROOT/build" >&2
}
