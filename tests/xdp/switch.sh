# SPDX-License-Identifier: BSD-3-Clause
# The switch on net_af_xdp, sourced by tests/xdp/run (its namespaces, helpers
# and counters).  The uplink shares xdpv0 with the kernel's 10.77.0.1:
#
#   xdpT: xdpv3 (VM 192.168.1.10) -- xdpv2 [vm-blue-1 net_af_xdp1] xdpS
#   xdpS: [fabric0 net_af_xdp0] xdpv0 10.77.0.1 (the kernel's too) -- xdpv1 10.77.0.2 xdpP
#   xdpP: host 10.77.0.2 (VM 192.168.1.20 behind it), ping, curl
#
# blue 192.168.1.10 qp 17 (pqpn 4097) <-> 192.168.1.20 qp 33 (pqpn 8193).
SW=$BUILD/dataplane/dpdk-roce-vswitch
T="ip netns exec xdpT"

ip netns add xdpT
ip link add xdpv2 numtxqueues 1 numrxqueues 1 type veth peer name xdpv3 numtxqueues 1 numrxqueues 1
ip link set xdpv2 netns xdpS
ip link set xdpv3 netns xdpT
ip -n xdpS link set xdpv2 up
ip -n xdpT link set xdpv3 up
UPLINK_MAC=$($S cat /sys/class/net/xdpv0/address)
PEER_MAC=$($P cat /sys/class/net/xdpv1/address)
VM_MAC=$($T cat /sys/class/net/xdpv3/address)
GW_MAC=02:00:00:00:01:01
cat >"$TMP/sw.json" <<EOF
{
  "version": 1,
  "ports": [
    {"name": "fabric0", "device": "net_af_xdp0", "role": "uplink",
     "ip": "10.77.0.1", "mac": "$UPLINK_MAC"},
    {"name": "vm-blue-1", "device": "net_af_xdp1", "role": "tenant", "tenant": "blue", "mac": "$GW_MAC"}
  ],
  "tenants": [{"name": "blue", "vni": 100, "max_qps": 16}],
  "endpoints": [
    {"tenant": "blue", "vip": "192.168.1.10", "host": "10.77.0.1", "port": "vm-blue-1", "mac": "$VM_MAC"},
    {"tenant": "blue", "vip": "192.168.1.20", "host": "10.77.0.2"}
  ],
  "qps": [
    {"tenant": "blue", "vip": "192.168.1.10", "vqpn": 17, "pqpn": 4097, "type": "rc",
     "peer": {"vip": "192.168.1.20", "vqpn": 33}},
    {"tenant": "blue", "vip": "192.168.1.20", "vqpn": 33, "pqpn": 8193, "type": "rc",
     "peer": {"vip": "192.168.1.10", "vqpn": 17}}
  ],
  "neighbors": [{"ip": "10.77.0.2", "mac": "$PEER_MAC"}]
}
EOF

tel() {
	/usr/bin/python3 -c "import json, sys; sys.path.insert(0, '$ROOT/tests/lib')
from roce_telemetry import telemetry
print(json.dumps(telemetry(sys.argv[1], sys.argv[2])))" "$@"
}
# A field of /roce/xdp: port, key.
xtel() { tel xdpsw /roce/xdp | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ports']['$1']['$2'])"; }
sw_rx() { tel xdpsw "/ethdev/stats,$1" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ipackets'])"; }

# Starts the switch with --file-prefix $1 (more switch options after it); SWPID.
sw_start() {
	local prefix=$1; shift
	$S "$SW" -l 0 --no-pci --no-huge -m 512 --file-prefix "$prefix" --log-level lib.eal:warning \
		--vdev net_af_xdp0,iface=xdpv0 --vdev net_af_xdp1,iface=xdpv2 -- \
		--config "$TMP/sw.json" "$@" >"$TMP/$prefix.out" 2>"$TMP/$prefix.err" &
	SWPID=$!
	pids+=("$SWPID")
	for _ in $(seq 100); do
		kill -0 "$SWPID" 2>/dev/null || return 1
		tel "$prefix" /roce/xdp 2>/dev/null | grep -q fabric0 && return 0
		sleep 0.1
	done
	return 1
}
sw_stop() { kill -"${1:-TERM}" "$SWPID" 2>/dev/null; wait "$SWPID" 2>/dev/null; rm -rf /var/run/dpdk/xdpsw; }
# Captures UDP 4791 on IFACE of NETNS for SECONDS in the background; CAPPID.
capture() {
	ip netns exec "$1" /usr/bin/python3 "$ROOT/tests/xdp/frames.py" capture "$2" "$3" "$4" >"$TMP/cap.out" 2>&1 &
	CAPPID=$!
	for _ in $(seq 50); do grep -q ready "$TMP/cap.out" && return 0; sleep 0.1; done
}
xdp_on() { ip -n xdpS link show dev "$1" | grep -q "prog/xdp"; }
promisc_on() { ip -n xdpS link show dev "$1" | grep -q PROMISC; }

# --- start on a shared interface -------------------------------------------
$S "$SW" -l 0 --no-pci --no-huge -m 512 --file-prefix xdpsw --log-level lib.eal:warning \
	--vdev net_af_xdp0,iface=xdpv0 --vdev net_af_xdp1,iface=xdpv2 -- \
	--config "$TMP/sw.json" --mbuf-size 9216 >/dev/null 2>"$TMP/mbuf.err"
check "switch: an explicit --mbuf-size 9216 is refused with the largest size that fits" \
	grep -q -- "--mbuf-size 9216: a net_af_xdp port's mbufs must fit a page" "$TMP/mbuf.err"
check "switch: ... and leaves no program behind" test "$(insp holder)" = none
rm -rf /var/run/dpdk/xdpsw
check "switch: starts on net_af_xdp with the default --mbuf-size (it picks one that fits a page)" \
	sw_start xdpsw --control "$TMP/ctl.sock"
check "switch: /roce/xdp shows our program on both ports, through a link, native mode" \
	test "$(xtel fabric0 program) $(xtel fabric0 attach) $(xtel fabric0 mode) $(xtel vm_blue_1 attach)" = \
	"roce_xdp link native link"
check "switch: the interface's program is held by the switch" test "$(insp owner_pid)" = "$SWPID"
$S "$SW" -l 1 --no-pci --no-huge -m 512 --file-prefix xdpsw2 --vdev net_af_xdp0,iface=xdpv0 -- \
	--config "$TMP/sw.json" >/dev/null 2>"$TMP/second-switch.err"
check "switch: a second switch on the same interface is refused, with who holds it" \
	grep -q "xdpv0 is held by another switch (pid $SWPID" "$TMP/second-switch.err"
rm -rf /var/run/dpdk/xdpsw2
$S "$SW" -l 1 --no-pci --no-huge -m 512 --file-prefix xdpsw3 --vdev net_af_xdp0,iface=xdpnope -- \
	--config "$TMP/sw.json" >/dev/null 2>"$TMP/noiface.err"
check "switch: a missing interface is refused by name" grep -q 'no interface "xdpnope"' "$TMP/noiface.err"
rm -rf /var/run/dpdk/xdpsw3

# --- RoCEv2 through the switch, the kernel's traffic beside it -------------
$S /usr/bin/python3 -m http.server --bind 10.77.0.1 --directory "$TMP" 8081 >/dev/null 2>&1 &
pids+=($!)
sleep 0.5
$P curl -s -o "$TMP/got2" --max-time 60 --limit-rate 4M http://10.77.0.1:8081/blob &
CURL=$!
capture xdpP xdpv1 "$TMP/fabric.pcap" 3
$T $FR rsend xdpv3 "$GW_MAC" 192.168.1.10 192.168.1.20 33 5
wait "$CAPPID"
check "switch: tenant -> fabric RoCEv2 leaves through AF_XDP renamed (10.77.0.1 -> 10.77.0.2, QP 8193), ICRC valid" \
	$FR rcheck "$TMP/fabric.pcap" 10.77.0.1 10.77.0.2 8193 5
capture xdpT xdpv3 "$TMP/tenant.pcap" 3
$P $FR rsend xdpv1 "$UPLINK_MAC" 10.77.0.2 10.77.0.1 4097 5
wait "$CAPPID"
check "switch: fabric -> tenant RoCEv2 arrives renamed (192.168.1.20 -> 192.168.1.10, QP 17), ICRC valid" \
	$FR rcheck "$TMP/tenant.pcap" 192.168.1.20 192.168.1.10 17 5
check "switch: the kernel answers ping on the shared interface meanwhile" quiet $P ping -c 3 -i 0.2 -W 1 -q 10.77.0.1
check "switch: ARP for the shared address is answered by the kernel" $P $FR arp xdpv1 10.77.0.1
wait "$CURL"
check "switch: a 16 MiB TCP transfer to the shared address, during RoCEv2 traffic, arrives intact" \
	cmp -s "$TMP/blob" "$TMP/got2"
check "switch: /roce/xdp counts the redirected frames" test "$(xtel fabric0 redirected)" -ge 5

# --- revocation in the driver ------------------------------------------------
tel xdpsw "/roce/revoke,blue,192.168.1.10,17" >/dev/null
check "switch: a revocation puts the connection's fabric key into the deny map" \
	test "$(xtel fabric0 deny_entries)" -ge 1
d0=$(xtel fabric0 denied) r0=$(sw_rx 0)
capture xdpT xdpv3 "$TMP/revoked.pcap" 2
$P $FR rsend xdpv1 "$UPLINK_MAC" 10.77.0.2 10.77.0.1 4097 6
wait "$CAPPID"
check "switch: a revoked connection's frames are dropped by the program (denied +6)" \
	test $(($(xtel fabric0 denied) - d0)) -eq 6
check "switch: ... and never reach the switch's rx" test "$(sw_rx 0)" -eq "$r0"
check "switch: ... nor the tenant" $FR rcheck "$TMP/revoked.pcap" 192.168.1.20 192.168.1.10 17 0
check "switch: the switch counts them under the drop reason xdp_denied" \
	test "$(tel xdpsw /roce/drops | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['xdp_denied'])")" -ge 6
tel xdpsw "/roce/unrevoke,blue,192.168.1.10,17" >/dev/null
check "switch: undoing the revocation empties the deny map" test "$(xtel fabric0 deny_entries)" -eq 0
capture xdpT xdpv3 "$TMP/restored.pcap" 2
$P $FR rsend xdpv1 "$UPLINK_MAC" 10.77.0.2 10.77.0.1 4097 3
wait "$CAPPID"
check "switch: ... and forwarding resumes" $FR rcheck "$TMP/restored.pcap" 192.168.1.20 192.168.1.10 17 3

# --- deltas: the deny map follows the connections a batch removes and adds ----
ctl() { "$ROOT/tools/roce-ctl" -s "$TMP/ctl.sock" apply - >>"$TMP/ctl.out"; }
qp() {	# vqpn pqpn peer-vqpn: a QP of 192.168.1.10 (vqpn < 30) or of 192.168.1.20
	local vip=192.168.1.10 pvip=192.168.1.20
	[ "$1" -ge 30 ] && vip=192.168.1.20 pvip=192.168.1.10
	echo "{\"tenant\": \"blue\", \"vip\": \"$vip\", \"vqpn\": $1, \"pqpn\": $2, \"type\": \"rc\", \"peer\": {\"vip\": \"$pvip\", \"vqpn\": $3}}"
}
key() { echo "{\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": $1}"; }
check "switch: a delta deleting the connection is applied in place" \
	ctl <<<"{\"delete\": {\"qps\": [$(key 17), {\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"vqpn\": 33}]}}"
check "switch: ... and puts its fabric key into the deny map" test "$(xtel fabric0 deny_entries)" -ge 1
d0=$(xtel fabric0 denied)
$P $FR rsend xdpv1 "$UPLINK_MAC" 10.77.0.2 10.77.0.1 4097 4
sleep 0.5
check "switch: ... whose frames the program drops (denied +4)" test $(($(xtel fabric0 denied) - d0)) -eq 4
# One batch: the pair comes back as 18 <-> 33, 18 on the deleted 17's pqpn (the same fabric key).
check "switch: a delta putting 18 <-> 33 on pqpn 4097 is applied in place" \
	ctl <<<"{\"put\": {\"qps\": [$(qp 18 4097 33), $(qp 33 8193 18)]}}"
check "switch: ... and the deny map no longer holds its key" test "$(xtel fabric0 deny_entries)" -eq 0
check "switch: ... every delta answered applied, in place" \
	test "$(grep -c '"result": "applied".*"incremental": true' "$TMP/ctl.out")" -eq 2
# Removed and added in one batch under one key: 18 goes, 17 comes back on 4097.
ctl <<<"{\"delete\": {\"qps\": [$(key 18)]}, \"put\": {\"qps\": [$(qp 17 4097 33), $(qp 33 8193 17)]}}"
check "switch: a batch removing 18 and adding 17 under the same fabric key is applied in place" \
	test "$(grep -c '"result": "applied".*"incremental": true' "$TMP/ctl.out")" -eq 3
check "switch: ... and leaves the key out of the deny map" test "$(xtel fabric0 deny_entries)" -eq 0
capture xdpT xdpv3 "$TMP/delta.pcap" 2
$P $FR rsend xdpv1 "$UPLINK_MAC" 10.77.0.2 10.77.0.1 4097 3
wait "$CAPPID"
check "switch: ... and the frames reach the tenant as QP 17" $FR rcheck "$TMP/delta.pcap" 192.168.1.20 192.168.1.10 17 3

# --- leaving the interface as it was ------------------------------------------
sw_stop TERM
check "switch: after SIGTERM no XDP program is left on either interface" \
	test "$(xdp_on xdpv0 && echo y)$(xdp_on xdpv2 && echo y)" = ""
check "switch: ... and the interfaces are no longer promiscuous" \
	test "$(promisc_on xdpv0 && echo y)$(promisc_on xdpv2 && echo y)" = ""
check "switch: ... and it printed its exit summary" grep -q '"mbufs"' "$TMP/xdpsw.out"
sw_start xdpsw
sw_stop KILL
sleep 0.5
check "switch: after SIGKILL the program left with the process (bpf_link)" test "$(insp holder)" = none
export ROCE_XDP_MODE=generic
check "switch: the next start after SIGKILL succeeds (here in generic mode, ROCE_XDP_MODE)" sw_start xdpsw
unset ROCE_XDP_MODE
check "switch: ROCE_XDP_MODE=generic attaches in generic mode" test "$(xtel fabric0 mode)" = generic
capture xdpT xdpv3 "$TMP/generic.pcap" 2
$P $FR rsend xdpv1 "$UPLINK_MAC" 10.77.0.2 10.77.0.1 4097 3
wait "$CAPPID"
check "switch: in generic mode RoCEv2 still reaches the switch and the tenant" \
	$FR rcheck "$TMP/generic.pcap" 192.168.1.20 192.168.1.10 17 3
sw_stop TERM
rm -f /dev/hugepages/xdpsw*map_* 2>/dev/null
