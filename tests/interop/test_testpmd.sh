#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Interop with testpmd (test tier (c)): a dpdk-testpmd process plays blue's VM
# and exchanges traffic with dpdk-roce-vswitch over vhost-user/virtio-user.
#
#   tests/interop/test_testpmd.sh BUILD_DIR
#
# Topology (examples/interop-testpmd.json):
#
#   testpmd: net_pcap0 (blue-rc.pcap) <-io-> net_virtio_user0,path=SOCK
#                                                 | vhost-user
#   switch:  [vm-blue-1] net_vhost0,iface=SOCK    [vm-red-1] net_pcap1
#                  \                                 /
#                   [fabric0] net_pcap0 (tx_pcap: uplink capture)
#
# Scenario A: testpmd replays blue's RC traffic (tests/interop/data/blue-rc.pcap,
#   made by gen_pcaps.py) once into the tenant port.  The switch is stopped by
#   SIGTERM; check_frames.py then checks with scapy that every frame left the
#   uplink renamed to the fabric (MACs, IPs, DestQP, checksums, ICRC), that the
#   hairpin frames came back to testpmd in the virtual view (RETH translated),
#   and roce-inspect must say icrc_ok for each.  The counters of the exit
#   summary must agree.
# Scenario B: red's valid traffic replays forever into vm-red-1 while testpmd
#   floods vm-blue-1 with txonly junk (UDP 4791 with an all-zero BTH: RC SEND
#   First to QP 0, no valid ICRC), first to 192.168.1.20 (a blue endpoint with
#   no QP 0: "no_connection"), then, after testpmd reconnects, to 192.168.1.99
#   (no blue endpoint: "wrong_tenant").  The junk must be dropped under those
#   names, exactly as many frames as testpmd sent, while the red stream keeps
#   being forwarded (telemetry sampled twice during the flood).
#
# Every process runs under timeout and is stopped by its PID.  Sockets,
# /var/run/dpdk/<prefix> and hugepage files are removed and checked.  The
# last line is "N passed, M failed"; the exit status is non-zero on failure.
# KEEP=1 keeps the work directory (captures, logs, summaries).

set -uo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "$1" && pwd) || exit 2
SWITCH=$BUILD/dataplane/dpdk-roce-vswitch
INSPECT=$BUILD/tools/roce-inspect
PY=/usr/bin/python3
TESTPMD=${TESTPMD:-dpdk-testpmd}
TELEMETRY=${TELEMETRY:-dpdk-telemetry.py}
CFG=$ROOT/examples/interop-testpmd.json
DATA=$HERE/data

SWP=roce-interop-sw-$$   # EAL --file-prefix of the switch
TPP=roce-interop-tp-$$   # and of testpmd
WORK=$(mktemp -d /tmp/roce-interop.XXXXXX)
SOCK=$WORK/vhost-blue.sock
T0=$SECONDS

EAL_PREFIXES=("$SWP" "$TPP")
TP_PID=
# shellcheck source=tests/interop/lib.sh
source "$HERE/lib.sh"

# --- prerequisites -----------------------------------------------------------

for f in "$SWITCH" "$INSPECT"; do
	[ -x "$f" ] || { echo "missing $f (build with: meson setup BUILD && ninja -C BUILD)" >&2; exit 2; }
done
for c in "$TESTPMD" "$TELEMETRY" "$PY"; do
	command -v "$c" >/dev/null || { echo "missing $c (Debian packages dpdk, python3-scapy)" >&2; exit 2; }
done
if [ "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)" -lt 128 ]; then
	echo "need 128 free 2 MB hugepages (echo 512 > /proc/sys/vm/nr_hugepages; mount hugetlbfs on /dev/hugepages)" >&2
	exit 2
fi

# --- the two processes -------------------------------------------------------

# testpmd NAME VDEVS... -- TESTPMD_ARGS...: an interactive testpmd in the
# background (TP_PID) that reads its commands from a FIFO (tp_cmd), so that
# the test, not a clock, decides when it stops.  The second primary: main
# lcore 1, forwarding lcore 0 (the switch forwards on lcore 1).
testpmd() {
	local name=$1
	shift
	local eal=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		eal+=(--vdev "$1")
		shift
	done
	shift
	rm -f "$WORK/$name.cmd"
	mkfifo "$WORK/$name.cmd"
	timeout 90 "$TESTPMD" -l 0,1 --main-lcore 1 --no-pci --file-prefix "$TPP" \
		--in-memory --single-file-segments "${eal[@]}" \
		-- -i --total-num-mbufs=4096 "$@" <"$WORK/$name.cmd" >"$WORK/$name-testpmd.out" 2>&1 &
	TP_PID=$!
	pids+=("$TP_PID")
	exec {TP_FD}>"$WORK/$name.cmd"
}
tp_cmd() { echo "$*" >&"$TP_FD"; }

# testpmd_finish: stop forwarding, give the switch a moment to drain the
# virtqueue (testpmd's main lcore shares the switch's core), print the stats,
# quit.  Returns testpmd's exit status.
testpmd_finish() {
	tp_cmd stop
	sleep 1
	tp_cmd "show port stats all"
	tp_cmd quit
	exec {TP_FD}>&-
	wait "$TP_PID"
}

# tp_stat NAME PORT FIELD: a counter from testpmd's final "Forward statistics".
tp_stat() {
	awk -v port="$2" -v field="$3:" '
		/Forward statistics for port/ { cur = $(NF - 1) }
		cur == port { for (i = 1; i < NF; i++) if ($i == field) { print $(i + 1); exit } }
	' "$WORK/$1-testpmd.out"
}

# --- scenario A: one-shot replay, frames checked on the wire -------------------

n_sent=$("$INSPECT" --summary "$DATA/blue-rc.pcap" | tail -1 |
	"$PY" -c 'import json,sys; print(json.load(sys.stdin)["summary"]["frames"])')
log "scenario A: testpmd replays blue-rc.pcap into vm-blue-1 over vhost-user"
UP=$WORK/a-uplink.pcap
BACK=$WORK/a-back.pcap
RED_OUT=$WORK/a-red.pcap
if start_switch a "$UP" "rx_pcap=$DATA/empty.pcap,tx_pcap=$RED_OUT"; then
	pass "A: switch up with net_vhost0 (vhost-user server at $SOCK)"
	# pcap -> virtio_user (to the switch), virtio_user -> pcap (hairpin returns).
	testpmd a "net_pcap0,rx_pcap=$DATA/blue-rc.pcap,tx_pcap=$BACK" \
		"net_virtio_user0,path=$SOCK,mac=02:00:00:00:aa:10" -- \
		--forward-mode=io --no-flush-rx --mbuf-size=5120
	tp_cmd start
	# Until the switch has seen the whole capture (or 30 s).
	poll_until 30 /roce/tenants "d['/roce/tenants']['blue']['egress_packets'] + d['/roce/tenants']['blue']['dropped'] >= $n_sent" ||
		echo "the switch did not see $n_sent frames from blue within 30 s"
	sleep 0.5
	testpmd_finish
	tp_rc=$?
	expect "A: testpmd ran and quit cleanly (status $tp_rc)" test $tp_rc -eq 0
	sleep 0.3
	stop_switch a
	expect "A: switch stopped cleanly on SIGTERM with a JSON summary" test $? -eq 0
else
	fail "A: switch up with net_vhost0"
	tp_rc=1
fi
[ -n "$TP_PID" ] && kill -0 "$TP_PID" 2>/dev/null && stop_pid "$TP_PID"

if [ $tp_rc -eq 0 ]; then
	expect "A: testpmd read all $n_sent frames from the pcap" test "$(tp_stat a 0 RX-packets)" = "$n_sent"
	expect "A: testpmd sent all $n_sent to the switch (virtio_user TX, none dropped)" \
		test "$(tp_stat a 1 TX-packets)" = "$n_sent" -a "$(tp_stat a 1 TX-dropped)" = 0
fi

# The oracle: frame by frame, in order, per output port.
"$PY" "$HERE/check_frames.py" --config "$CFG" --port vm-blue-1 --sent "$DATA/blue-rc.pcap" \
	--out "fabric0=$UP" --out "vm-blue-1=$BACK" --out "vm-red-1=$RED_OUT" --inspect "$INSPECT" \
	>"$WORK/a-check.out" 2>&1
while read -r verdict rest; do
	case $verdict in
	PASS) pass "A: $rest" ;;
	FAIL) fail "A: $rest" ;;
	esac
done <"$WORK/a-check.out"
if ! grep -q '^[0-9]* passed, [0-9]* failed$' "$WORK/a-check.out"; then
	fail "A: check_frames.py ran to the end"
	tail -5 "$WORK/a-check.out"
fi

# The oracle's prediction of the counters: frames per output port, translations.
expect_of() { grep -o "^EXPECT .*" "$WORK/a-check.out" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
n_up=$(expect_of fabric0)
n_back=$(expect_of vm-blue-1)
n_mr=$(expect_of translated)
if [ -s "$WORK/a-summary.json" ]; then
	S=$WORK/a-summary.json
	expect "A: summary: vm-blue-1 received $n_sent, forwarded ${n_up:-?} to the fabric and ${n_back:-?} hairpin, none dropped" \
		test "$(jget "$S" 'd["ports"]["vm-blue-1"]["rx_packets"]')" = "$n_sent" \
		-a "$(jget "$S" 'd["forwarded"]["egress"]')" = "${n_up:-x}" \
		-a "$(jget "$S" 'd["forwarded"]["hairpin"]')" = "${n_back:-x}" \
		-a "$(jget "$S" 'd["dropped"]')" = 0
	expect "A: summary: fabric0 tx = egress, vm-blue-1 tx = hairpin, tenant blue egress = all" \
		test "$(jget "$S" 'd["ports"]["fabric0"]["tx_packets"]')" = "${n_up:-x}" \
		-a "$(jget "$S" 'd["ports"]["vm-blue-1"]["tx_packets"]')" = "${n_back:-x}" \
		-a "$(jget "$S" 'd["tenants"]["blue"]["egress_packets"]')" = "$n_sent"
	expect "A: summary: the ${n_mr:-?} hairpin WRITEs into .10's MR translated (mr_translated)" \
		test "$(jget "$S" 'd["mr_translated"]')" = "${n_mr:-x}"
	expect "A: testpmd got the ${n_back:-?} hairpin frames back on virtio_user" \
		test "$(tp_stat a 1 RX-packets)" = "${n_back:-x}"
	expect "A: summary: no mbuf leaked (in use after close 0)" \
		test "$(jget "$S" 'd["mbufs"]["in_use_after_close"]')" = 0
else
	fail "A: exit summary written (--stats-json)"
fi
check_clean A "$SWP" "$TPP"

# --- scenario B: junk on blue's port while red's traffic flows ----------------

log "scenario B: testpmd txonly junk into vm-blue-1 while red-rc.pcap replays forever into vm-red-1"
# The fabric side of an endless stream goes to /dev/null; the counters tell.
if start_switch b /dev/null "rx_pcap=$DATA/red-rc.pcap,infinite_rx=1"; then
	pass "B: switch up with an endless red stream"
	junk=(--forward-mode=txonly --tx-udp=4791,4791 --txpkts=64 --eth-peer=0,02:00:00:00:01:01)

	# B1: to a blue endpoint that has no QP 0.  Sample telemetry twice during the flood.
	testpmd b1 "net_virtio_user0,path=$SOCK,mac=02:00:00:00:aa:10" -- \
		"${junk[@]}" --tx-ip=192.168.1.10,192.168.1.20
	tp_cmd start
	poll_until 30 /roce/drops "d['/roce/drops']['no_connection'] > 0" ||
		echo "no junk reached the switch within 30 s"
	tel=(/roce/drops /roce/stats /roce/tenants)
	telemetry "$WORK/b-s1.json" "${tel[@]}"
	sleep 1
	telemetry "$WORK/b-s2.json" "${tel[@]}"
	testpmd_finish
	expect "B1: testpmd txonly ran and quit cleanly" test $? -eq 0

	g() { jget "$WORK/b-$1.json" "$2"; }
	nc1=$(g s1 'd["/roce/drops"]["no_connection"]')
	nc2=$(g s2 'd["/roce/drops"]["no_connection"]')
	tx1=$(g s1 'd["/roce/stats"]["fabric0"]["tx_packets"]')
	tx2=$(g s2 'd["/roce/stats"]["fabric0"]["tx_packets"]')
	re1=$(g s1 'd["/roce/tenants"]["red"]["egress_packets"]')
	re2=$(g s2 'd["/roce/tenants"]["red"]["egress_packets"]')
	echo "   telemetry 1 s apart during the flood: no_connection $nc1 -> $nc2, fabric0 tx $tx1 -> $tx2, red egress $re1 -> $re2"
	expect "B1: telemetry: junk still arriving (no_connection grew)" test "${nc2:-0}" -gt "${nc1:-0}"
	expect "B1: telemetry: red's valid traffic kept flowing to the fabric meanwhile (fabric0 tx and red egress grew)" \
		test "${tx2:-0}" -gt "${tx1:-0}" -a "${re2:-0}" -gt "${re1:-0}"
	expect "B1: telemetry: no drop under any other reason during the flood" \
		test "$(g s2 'sum(v for k, v in d["/roce/drops"].items() if k != "no_connection")')" = 0
	# /roce/stats is documented to carry every port's counters.
	ports_missing=$(g s2 '" ".join(p for p in ("fabric0", "vm-blue-1", "vm-red-1") if p not in [v.get("name") for v in d["/roce/stats"].values() if isinstance(v, dict)])')
	expect "B1: telemetry /roce/stats lists every configured port (missing: ${ports_missing:-none})" \
		test -z "$ports_missing" -a -s "$WORK/b-s2.json"
	junk1=$(tp_stat b1 0 TX-packets)
	eal_clean "$TPP"

	# B2: after testpmd left and a new one connected: to an address blue does not have.
	testpmd b2 "net_virtio_user0,path=$SOCK,mac=02:00:00:00:aa:10" -- \
		"${junk[@]}" --tx-ip=192.168.1.10,192.168.1.99
	tp_cmd start
	poll_until 30 /roce/drops "d['/roce/drops']['wrong_tenant'] > 0" ||
		echo "no junk reached the switch within 30 s"
	sleep 0.5
	testpmd_finish
	expect "B2: a second testpmd reconnected, ran and quit cleanly" test $? -eq 0
	junk2=$(tp_stat b2 0 TX-packets)
	sleep 0.3
	stop_switch b
	expect "B: switch stopped cleanly on SIGTERM with a JSON summary" test $? -eq 0

	S=$WORK/b-summary.json
	echo "   testpmd sent ${junk1:-?} + ${junk2:-?} junk frames; summary: $(jget "$S" \
		'"no_connection %d, wrong_tenant %d, dropped %d, red egress %d" % (d["drops"]["no_connection"], d["drops"]["wrong_tenant"], d["dropped"], d["tenants"]["red"]["egress_packets"])')"
	expect "B1: all ${junk1:-?} junk frames to 192.168.1.20 qp 0 dropped as no_connection" \
		test "${junk1:-0}" -gt 0 -a "$(jget "$S" 'd["drops"]["no_connection"]')" = "${junk1:-x}"
	expect "B2: all ${junk2:-?} junk frames to 192.168.1.99 dropped as wrong_tenant" \
		test "${junk2:-0}" -gt 0 -a "$(jget "$S" 'd["drops"]["wrong_tenant"]')" = "${junk2:-x}"
	expect "B: vm-blue-1 received exactly the junk, all dropped and charged to blue, nothing else dropped" \
		test "$(jget "$S" 'd["ports"]["vm-blue-1"]["rx_packets"]')" = "$((junk1 + junk2))" \
		-a "$(jget "$S" 'd["dropped"]')" = "$((junk1 + junk2))" \
		-a "$(jget "$S" 'd["tenants"]["blue"]["dropped"]')" = "$((junk1 + junk2))" \
		-a "$(jget "$S" 'd["tenants"]["blue"]["egress_packets"]')" = 0
	expect "B: every red frame received was forwarded to the fabric (rx = egress = fabric0 tx > 10000)" \
		"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["ports"]["vm-red-1"]["rx_packets"]
sys.exit(not (r > 10000 and r == d["tenants"]["red"]["egress_packets"] == d["ports"]["fabric0"]["tx_packets"] == d["forwarded"]["egress"]))' "$S"
	expect "B: summary: no mbuf leaked (in use after close 0)" \
		test "$(jget "$S" 'd["mbufs"]["in_use_after_close"]')" = 0
else
	fail "B: switch up with an endless red stream"
fi
[ -n "$TP_PID" ] && kill -0 "$TP_PID" 2>/dev/null && stop_pid "$TP_PID"
check_clean B "$SWP" "$TPP"

echo "run time $((SECONDS - T0)) s"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
