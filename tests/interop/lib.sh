# SPDX-License-Identifier: BSD-3-Clause
#
# Shared by tests/interop/test_testpmd.sh and pktgen-scripts/check.sh: the
# switch of the interop topology (examples/interop-testpmd.json) as one
# process, its telemetry and exit summary, check counting, and clean-up of
# processes, sockets and EAL files.  Sourced, not run.
#
# The caller sets, before sourcing:
#   PY, TELEMETRY        /usr/bin/python3 and dpdk-telemetry.py
#   SWITCH, CFG, DATA    the switch binary, its configuration, tests/interop/data
#   SWP                  the switch's --file-prefix
#   EAL_PREFIXES         every --file-prefix to clean up (an array)
#   WORK, SOCK           the work directory and the vhost-user socket path
# and gets pass/fail/expect (counting into passed/failed), log, jget,
# telemetry, poll_until, stop_pid, eal_clean, eal_files, start_switch,
# stop_switch and check_clean, plus an EXIT trap that cleans up.

passed=0
failed=0
pids=()        # every background process, killed at exit if still there
SW_PID=

pass() { passed=$((passed + 1)); echo "PASS $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
# expect DESCRIPTION COMMAND...: one check.
expect() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
log() { printf '== %s\n' "$*"; }

# jget FILE EXPR: a value of a JSON file, with d the document.
jget() {
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}

# telemetry OUT CMD...: one dpdk-telemetry.py client for several commands; OUT
# gets {"/roce/drops": {...}, ...}.
telemetry() {
	local out=$1
	shift
	printf '%s\n' "$@" | timeout 20 "$TELEMETRY" -f "$SWP" 2>/dev/null |
		"$PY" -c 'import json,sys
d = {}
for line in sys.stdin:
    if line.strip():
        d.update(json.loads(line))
json.dump(d, open(sys.argv[1], "w"))' "$out" 2>/dev/null
}

# poll_until SECONDS CMD EXPR: query CMD until EXPR (d is its answer) holds.
poll_until() {
	local limit=$1 cmd=$2 expr=$3 t0=$SECONDS
	while [ $((SECONDS - t0)) -lt "$limit" ]; do
		telemetry "$WORK/poll.json" "$cmd" &&
			[ "$(jget "$WORK/poll.json" "bool($expr)")" = True ] && return 0
		sleep 0.2
	done
	return 1
}

# stop_pid PID [SECONDS]: SIGTERM (timeout relays it), then SIGKILL if needed.
# Returns the process's exit status.
stop_pid() {
	local pid=$1 limit=${2:-10} i
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < limit * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "pid $pid ignored SIGTERM for ${limit}s: SIGKILL" >&2
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
}

# The EAL leftovers of one prefix, removed; then checked gone.
eal_clean() {
	local p=$1
	rm -rf "/var/run/dpdk/$p"
	rm -f /dev/hugepages/"$p"map_* /dev/hugepages/"$p"-* 2>/dev/null
}
eal_files() {
	local p=$1
	ls -d "/var/run/dpdk/$p" /dev/hugepages/"$p"* 2>/dev/null
}

cleanup() {
	local pid p
	for pid in "${pids[@]}"; do
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	done
	for p in "${EAL_PREFIXES[@]}"; do
		eal_clean "$p"
	done
	if [ "${KEEP:-0}" = 1 ]; then
		echo "work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap '' PIPE   # a peer that died early must not kill the test through its FIFO

# start_switch NAME UPLINK_TX RED_ARGS: the switch on lcore 1 (its peer forwards on lcore 0),
# with net_vhost0 as vm-blue-1, net_pcap0 (tx to UPLINK_TX) as fabric0 and
# net_pcap1 (devargs RED_ARGS) as vm-red-1.
start_switch() {
	local name=$1 uplink_tx=$2 red=$3 i
	rm -f "$SOCK"
	timeout 120 "$SWITCH" -l 1 --no-pci --file-prefix "$SWP" --huge-unlink \
		--vdev "net_pcap0,rx_pcap=$DATA/empty.pcap,tx_pcap=$uplink_tx" \
		--vdev "net_vhost0,iface=$SOCK" \
		--vdev "net_pcap1,$red" \
		-- --config "$CFG" --stats-json "$WORK/$name-summary.json" \
		>"$WORK/$name-switch.out" 2>"$WORK/$name-switch.err" &
	SW_PID=$!
	pids+=("$SW_PID")
	for ((i = 0; i < 100; i++)); do
		grep -q '^dpdk-roce-vswitch: .* ports' "$WORK/$name-switch.err" 2>/dev/null && [ -S "$SOCK" ] && return 0
		kill -0 "$SW_PID" 2>/dev/null || break
		sleep 0.1
	done
	tail -5 "$WORK/$name-switch.err" >&2
	return 1
}

# stop_switch NAME: SIGTERM, a clean exit and its summary.
stop_switch() {
	local name=$1 rc
	stop_pid "$SW_PID" 15
	rc=$?
	echo "switch exit status $rc" >>"$WORK/$name-switch.err"
	[ $rc -eq 0 ] && [ -s "$WORK/$name-summary.json" ] &&
		"$PY" -c 'import json,sys; json.loads(open(sys.argv[1]).read().splitlines()[-1])' "$WORK/$name-switch.out"
}

# after NAME PREFIX...: the processes are gone; remove their leftovers and check.
check_clean() {
	local name=$1 p left
	shift
	rm -f "$SOCK"
	for p in "$@"; do
		eal_clean "$p"
	done
	left=$(for p in "$@"; do eal_files "$p"; done)
	expect "$name: no socket, /var/run/dpdk/<prefix> or hugepage file left" \
		test -z "$left" -a ! -e "$SOCK"
	[ -z "$left" ] || echo "left: $left"
}
