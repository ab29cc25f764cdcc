#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# pktgen-dpdk beside dpdk-roce-vswitch: run the Lua scripts of this folder in
# a pktgen process that plays blue's VM over vhost-user/virtio-user, and
# compare pktgen's port counters with the switch's exit summary.
#
#   pktgen-scripts/check.sh [BUILD_DIR]        (default: build)
#
# pktgen is not packaged in Debian.  Without it (no "pktgen" on PATH and no
# PKTGEN=/path/to/pktgen) this prints why, then "0 passed, 0 failed,
# 1 skipped", and exits 0.
#
# With it, in the topology of examples/interop-testpmd.json (the switch owns
# net_vhost0 as vm-blue-1, a pcap fabric0 and a pcap vm-red-1):
#   A  replay-blue-rc.lua sends tests/interop/data/blue-rc.pcap (-s 0:...) once:
#      the switch must receive exactly what pktgen sent, forward all of it
#      (per pass, 55 renamed to the fabric and 4 hairpin back to pktgen), drop
#      nothing; after one exact pass the uplink capture is checked frame by
#      frame by tests/interop/check_frames.py (scapy, ICRC, roce-inspect).
#   B  while red-rc.pcap replays forever into vm-red-1, junk-flood.lua sends
#      zero-BTH junk to 192.168.1.20 (every frame must be dropped as
#      no_connection) and then to 192.168.1.99 (wrong_tenant); red's stream
#      must keep flowing and lose nothing.
# Every check that compares counters with what pktgen sent fails when pktgen
# sent nothing (0 frames received of 0 sent is no pass).
# pktgen refuses to start without a terminal on stdin ("scrn_constructor:
# tcgetattr failed"), so it runs under script(1) (util-linux), which gives it
# a pseudo-terminal and logs what it prints to WORK/NAME-pktgen.out.
# The last line is "N passed, M failed"; the exit status is non-zero on failure.
# It reserves PKTGEN_HUGEPAGES (default 1024) hugepages of 2 MiB, 2 GiB, and says how many
# it has: pktgen's mbuf pools for 4154-byte frames (-j) do not fit in 512.
# KEEP=1 keeps the work directory.  pktgen-scripts/build-pktgen.sh builds
# pktgen from its source, outside the repository.

set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PKTGEN=${PKTGEN:-pktgen}

if ! command -v "$PKTGEN" >/dev/null 2>&1; then
	echo "SKIP pktgen-scripts/check.sh: pktgen (pktgen-dpdk) is not installed: '$PKTGEN' is not on PATH."
	echo "     It is not packaged in Debian; build it against DPDK 22.11 and run"
	echo "     PKTGEN=/path/to/pktgen pktgen-scripts/check.sh BUILD_DIR; pktgen-scripts/build-pktgen.sh"
	echo "     builds it from its source (see pktgen-scripts/README.md)."
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

BUILD=$(cd "${1:-$ROOT/build}" && pwd) || exit 2
SWITCH=$BUILD/dataplane/dpdk-roce-vswitch
INSPECT=$BUILD/tools/roce-inspect
PY=/usr/bin/python3
TELEMETRY=${TELEMETRY:-dpdk-telemetry.py}
CFG=$ROOT/examples/interop-testpmd.json
DATA=$ROOT/tests/interop/data

# EAL file prefixes: ROCE_PKTGEN_PREFIX (default roce-pktgen), then -sw- or -pg- and our PID.
SWP=${ROCE_PKTGEN_PREFIX:-roce-pktgen}-sw-$$
PGP=${ROCE_PKTGEN_PREFIX:-roce-pktgen}-pg-$$
EAL_PREFIXES=("$SWP" "$PGP")
WORK=$(mktemp -d /tmp/roce-pktgen.XXXXXX)
SOCK=$WORK/vhost-blue.sock
PG_PID=
T0=$SECONDS
# shellcheck source=scripts/common.sh
source "$ROOT/scripts/common.sh"
# shellcheck source=tests/interop/lib.sh
source "$ROOT/tests/interop/lib.sh"

for f in "$SWITCH" "$INSPECT"; do
	[ -x "$f" ] || { echo "missing $f (build with: meson setup BUILD && ninja -C BUILD)" >&2; exit 2; }
done
for c in "$TELEMETRY" "$PY" script; do
	command -v "$c" >/dev/null ||
		{ echo "missing $c (Debian packages dpdk, python3-scapy, bsdutils)" >&2; exit 2; }
done
# pktgen's pools for 4154-byte frames (-j) and the switch's together held 759 hugepages of
# 2 MiB at their peak (measured on a 2048-page machine); 1024 leave a margin.
setup_hugepages "${PKTGEN_HUGEPAGES:-1024}" || exit 2

# pktgen_run NAME SCRIPT [PKTGEN_ARGS...]: pktgen as blue's VM, the second
# primary (main lcore 1; lcore 0 drives port 0), running SCRIPT and quitting.
# Its result line goes to $WORK/NAME-result.json, its screen to
# $WORK/NAME-pktgen.out.  pktgen needs a terminal: script(1) gives it one
# (-q quiet, -f flush, -e its exit status, -c the command).  Runs in the
# background; PG_PID is script's.
pktgen_run() {
	local name=$1 lua=$2 cmd
	shift 2
	: >"$WORK/$name-result.json"
	printf -v cmd '%q ' timeout 120 "$PKTGEN" -l 0,1 --main-lcore 1 --no-pci --file-prefix "$PGP" \
		--in-memory --single-file-segments \
		--vdev "net_virtio_user0,path=$SOCK,mac=02:00:00:00:aa:10" \
		-- -P -m "0.0" "$@" -f "$HERE/$lua"
	ROCE_PKTGEN_RESULT=$WORK/$name-result.json ROCE_PKTGEN_QUIT=1 TERM=${TERM:-dumb} \
		script -qfec "$cmd" "$WORK/$name-pktgen.out" </dev/null >/dev/null 2>&1 &
	PG_PID=$!
	pids+=("$PG_PID")
}

# pktgen_stop: end the pktgen of PG_PID if it still runs: timeout (script's
# child) passes SIGTERM on to pktgen; then script itself.
pktgen_stop() {
	local c
	[ -n "$PG_PID" ] && kill -0 "$PG_PID" 2>/dev/null || return 0
	for c in $(pgrep -P "$PG_PID"); do
		stop_pid "$c"
	done
	stop_pid "$PG_PID"
}

# pg NAME KEY: a field of pktgen's result line.
pg() { jget "$WORK/$1-result.json" "d[\"$2\"]"; }

# --- A: replay -----------------------------------------------------------------

n_sent=$("$INSPECT" --summary "$DATA/blue-rc.pcap" | tail -1 |
	"$PY" -c 'import json,sys; print(json.load(sys.stdin)["summary"]["frames"])')
log "A: pktgen replays blue-rc.pcap ($n_sent frames) into vm-blue-1"
UP=$WORK/a-uplink.pcap
if start_switch a "$UP" "rx_pcap=$DATA/empty.pcap,tx_pcap=$WORK/a-red.pcap"; then
	pass "A: switch up with net_vhost0"
	# -j: the capture holds 4154-byte frames (a 4 KiB RoCE MTU).
	ROCE_PKTGEN_FRAMES=$n_sent ROCE_PKTGEN_PASSES=1 pktgen_run a replay-blue-rc.lua -j -s "0:$DATA/blue-rc.pcap"
	wait "$PG_PID"
	expect "A: pktgen ran replay-blue-rc.lua and quit (status $?)" test -s "$WORK/a-result.json"
	sleep 0.5
	stop_switch a
	expect "A: switch stopped cleanly on SIGTERM with a JSON summary" test $? -eq 0
else
	fail "A: switch up with net_vhost0"
fi
pktgen_stop

S=$WORK/a-summary.json
if [ -s "$WORK/a-result.json" ] && [ -s "$S" ]; then
	sent=$(pg a opackets)
	echo "   pktgen: $(cat "$WORK/a-result.json")"
	expect "A: pktgen sent frames (opackets ${sent:-?} > 0, oerrors 0)" \
		test "${sent:-0}" -gt 0 -a "$(pg a oerrors)" = 0
	# Each comparison needs frames sent: 0 received of 0 sent proves nothing.
	expect "A: the switch received exactly what pktgen sent (vm-blue-1 rx = ${sent:-?} > 0)" \
		test "${sent:-0}" -gt 0 -a "$(jget "$S" 'd["ports"]["vm-blue-1"]["rx_packets"]')" = "${sent:-x}"
	expect "A: the switch forwarded all of it and dropped nothing" \
		test "${sent:-0}" -gt 0 \
		-a "$(jget "$S" 'd["forwarded"]["egress"] + d["forwarded"]["hairpin"]')" = "${sent:-x}" \
		-a "$(jget "$S" 'd["dropped"]')" = 0
	if [ "${sent:-0}" -gt 0 ] && [ $((sent % n_sent)) -eq 0 ]; then
		passes=$((sent / n_sent))
		"$PY" "$ROOT/tests/interop/check_frames.py" --config "$CFG" --port vm-blue-1 \
			--sent "$DATA/blue-rc.pcap" --out "fabric0=$UP" --inspect "$INSPECT" >"$WORK/a-predict.out" 2>&1 || true
		n_back=$(grep -o '^EXPECT .*' "$WORK/a-predict.out" | tr ' ' '\n' | sed -n 's/^vm-blue-1=//p')
		n_back=${n_back:-0}
		expect "A: $passes pass(es): $(((n_sent - n_back) * passes)) to the fabric, $((n_back * passes)) hairpin back to pktgen" \
			test "$(jget "$S" 'd["forwarded"]["egress"]')" = $(((n_sent - n_back) * passes)) \
			-a "$(jget "$S" 'd["ports"]["vm-blue-1"]["tx_packets"]')" = $((n_back * passes)) \
			-a "$(pg a ipackets)" = $((n_back * passes))
		if [ "$passes" -eq 1 ]; then
			while read -r verdict rest; do
				case $verdict in
				PASS) pass "A: $rest" ;;
				FAIL) fail "A: $rest" ;;
				esac
			done <"$WORK/a-predict.out"
		fi
	else
		fail "A: pktgen sent whole passes of the capture (${sent:-?} frames, not a positive multiple of $n_sent)"
	fi
else
	fail "A: pktgen result and switch summary present"
	tail -5 "$WORK/a-pktgen.out" 2>/dev/null
fi
check_clean A "$SWP" "$PGP"

# --- B: junk while red flows ---------------------------------------------------

log "B: pktgen junk into vm-blue-1 while red-rc.pcap replays forever into vm-red-1"
if start_switch b /dev/null "rx_pcap=$DATA/red-rc.pcap,infinite_rx=1"; then
	pass "B: switch up with an endless red stream"
	ROCE_PKTGEN_DST=192.168.1.20 ROCE_PKTGEN_SECONDS=5 pktgen_run b1 junk-flood.lua
	poll_until 60 /roce/drops "d['/roce/drops']['no_connection'] > 0" ||
		echo "no junk reached the switch within 60 s"
	telemetry "$WORK/b-s1.json" /roce/drops /roce/tenants
	sleep 1
	telemetry "$WORK/b-s2.json" /roce/drops /roce/tenants
	wait "$PG_PID"
	expect "B1: pktgen ran junk-flood.lua to 192.168.1.20 and quit" test -s "$WORK/b1-result.json"
	expect "B1: telemetry: junk arriving and red forwarded over the same second" \
		"$PY" -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
sys.exit(not (b["/roce/drops"]["no_connection"] > a["/roce/drops"]["no_connection"] and
              b["/roce/tenants"]["red"]["egress_packets"] > a["/roce/tenants"]["red"]["egress_packets"]))' \
		"$WORK/b-s1.json" "$WORK/b-s2.json"
	eal_clean "$PGP"
	ROCE_PKTGEN_DST=192.168.1.99 ROCE_PKTGEN_SECONDS=2 pktgen_run b2 junk-flood.lua
	wait "$PG_PID"
	expect "B2: a second pktgen reconnected, ran junk-flood.lua to 192.168.1.99 and quit" \
		test -s "$WORK/b2-result.json"
	sleep 0.5
	stop_switch b
	expect "B: switch stopped cleanly on SIGTERM with a JSON summary" test $? -eq 0

	S=$WORK/b-summary.json
	j1=$(pg b1 opackets)
	j2=$(pg b2 opackets)
	echo "   pktgen sent ${j1:-?} + ${j2:-?} junk frames; summary: $(jget "$S" \
		'"no_connection %d, wrong_tenant %d, dropped %d, red egress %d" % (d["drops"]["no_connection"], d["drops"]["wrong_tenant"], d["dropped"], d["tenants"]["red"]["egress_packets"])')"
	expect "B1: all ${j1:-?} junk frames to 192.168.1.20 dropped as no_connection" \
		test "${j1:-0}" -gt 0 -a "$(jget "$S" 'd["drops"]["no_connection"]')" = "${j1:-x}"
	expect "B2: all ${j2:-?} junk frames to 192.168.1.99 dropped as wrong_tenant" \
		test "${j2:-0}" -gt 0 -a "$(jget "$S" 'd["drops"]["wrong_tenant"]')" = "${j2:-x}"
	expect "B: nothing but the junk dropped; vm-blue-1 rx = junk (> 0 from each pktgen)" \
		test "${j1:-0}" -gt 0 -a "${j2:-0}" -gt 0 \
		-a "$(jget "$S" 'd["dropped"]')" = "$((${j1:-0} + ${j2:-0}))" \
		-a "$(jget "$S" 'd["ports"]["vm-blue-1"]["rx_packets"]')" = "$((${j1:-0} + ${j2:-0}))"
	expect "B: every red frame received was forwarded to the fabric" \
		"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["ports"]["vm-red-1"]["rx_packets"]
sys.exit(not (r > 0 and r == d["tenants"]["red"]["egress_packets"] == d["ports"]["fabric0"]["tx_packets"]))' "$S"
else
	fail "B: switch up with an endless red stream"
fi
pktgen_stop
check_clean B "$SWP" "$PGP"

echo "run time $((SECONDS - T0)) s"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
