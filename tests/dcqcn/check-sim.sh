#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs dcqcn-sim on the canonical single-CNP scenario with the default
# profile and checks the CSV header and known rows (docs/dcqcn.md derives
# them), plus the exit status on bad input.
#   check-sim.sh PATH/TO/dcqcn-sim TESTS/DCQCN/DIR
set -u
sim=$1
dir=$2
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

check() {
	if grep -qx "$1" "$out"; then
		echo "ok: $2"
	else
		echo "FAIL: $2: no row '$1'"
		fail=1
	fi
}

"$sim" "$dir/one_cnp.json" >"$out" || { echo "FAIL: dcqcn-sim exited $?"; exit 1; }
if [ "$(head -n 1 "$out")" = "t_us,rate_gbps,target_gbps,alpha,stage" ]; then
	echo "ok: header"
else
	echo "FAIL: header is '$(head -n 1 "$out")'"
	fail=1
fi
check '0.000,100.000000000,100.000000000,0.000000,FR' "initial row"
check '0.000,50.048828125,100.000000000,0.999023,FR' "first cut from 100 Gb/s"
check '300.000,75.024414063,100.000000000,0.229993,AI' "first increase (fast recovery)"
check '1500.000,98.439025879,100.000000000,0.000551,AI' "rate after five increase steps"
check '1800.000,99.219512940,100.000000000,0.000059,AI' "back within 1 % of line rate"
check '10800.000,100.000000000,100.000000000,0.000000,FR' "limiter released"

"$sim" --profile paper "$dir/one_cnp.json" >"$out" || { echo "FAIL: dcqcn-sim exited $?"; exit 1; }
check '0.000,50.000000000,100.000000000,1.000000,FR' "paper: first cut"
check '330.000,99.218750000,100.000000000,0.976788,AI' "paper: five FR steps, then AI"

# Bad input names the event and exits with status 2.
printf '[{"t_us": 5, "ev": "cnp"}, {"t_us": 1, "ev": "cnp"}]\n' >"$out.json"
"$sim" "$out.json" >/dev/null 2>"$out"
st=$?
rm -f "$out.json"
if [ $st -eq 2 ] && grep -q 'event 1' "$out"; then
	echo "ok: out-of-order event rejected with status 2"
else
	echo "FAIL: out-of-order event: status $st, message '$(cat "$out")'"
	fail=1
fi
exit $fail
