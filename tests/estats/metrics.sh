#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The Prometheus exporter scraped under traffic: estats-harness serves
# /metrics while its timeline runs; two scrapes a second apart must pass
# promtool check metrics and check_metrics.py (histograms cumulative, tenant
# equal to the sum of its connections, counts growing), and /roce/estats
# must give the injected delays back.
#
# Usage: metrics.sh HARNESS SOURCE_DIR [PORT]
set -u
harness=$1
src=$2
port=${3:-19464}
prefix=est-metrics-$$
tmp=$(mktemp -d)
pid=

cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$tmp" "/var/run/dpdk/$prefix"
}
trap cleanup EXIT

command -v promtool >/dev/null || { echo "promtool missing (apt-get install prometheus)"; exit 77; }
command -v curl >/dev/null || { echo "curl missing"; exit 77; }

# One exposition with the traffic stopped, for the exact checks.
"$harness" --no-pci --no-huge -m 256 --file-prefix "$prefix-q" --log-level=lib.eal:error -- \
	--config "$src/examples/two-tenants.json" --metrics-connections --render >"$tmp/q.txt" 2>"$tmp/q.log" ||
	{ cat "$tmp/q.log"; rm -rf "/var/run/dpdk/$prefix-q"; exit 1; }
rm -rf "/var/run/dpdk/$prefix-q"

"$harness" --no-pci --no-huge -m 256 --file-prefix "$prefix" --log-level=lib.eal:error -- \
	--config "$src/examples/two-tenants.json" --metrics "127.0.0.1:$port" \
	--metrics-connections --seconds 60 2>"$tmp/harness.log" &
pid=$!

for i in $(seq 100); do
	curl -sf "http://127.0.0.1:$port/metrics" -o "$tmp/s1.txt" && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/harness.log"; exit 1; }
	sleep 0.1
done
[ -s "$tmp/s1.txt" ] || { echo "no scrape"; cat "$tmp/harness.log"; exit 1; }
sleep 1
curl -sf "http://127.0.0.1:$port/metrics" -o "$tmp/s2.txt" || { echo "second scrape failed"; exit 1; }
curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/nothing" | grep -qx 404 ||
	{ echo "unknown path is not a 404"; exit 1; }

rc=0
for s in q s1 s2; do
	if ! promtool check metrics <"$tmp/$s.txt"; then
		echo "promtool rejects scrape $s"
		rc=1
	fi
done
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" "$src/tests/estats/check_metrics.py" "$tmp/q.txt" "$tmp/s1.txt" "$tmp/s2.txt" "$prefix" || rc=1

# Label values are whole: two tenants whose names share their first 290 characters stay two series.
long=$(printf 't%.0s' $(seq 290))
sed -e "s/\"blue\"/\"$long-blue\"/g" -e "s/\"red\"/\"$long-red\"/g" "$src/examples/two-tenants.json" >"$tmp/long.json"
if "$harness" --no-pci --no-huge -m 256 --file-prefix "$prefix-l" --log-level=lib.eal:error -- \
	--config "$tmp/long.json" --metrics-connections --render >"$tmp/l.txt" 2>"$tmp/l.log"; then
	promtool check metrics <"$tmp/l.txt" || { echo "promtool rejects the long names' scrape"; rc=1; }
	for t in blue red; do
		grep -q "^roce_tenant_egress_packets_total{tenant=\"$long-$t\"}" "$tmp/l.txt" ||
			{ echo "no whole series for the long tenant name ...-$t"; rc=1; }
	done
else
	cat "$tmp/l.log"
	rc=1
fi
rm -rf "/var/run/dpdk/$prefix-l"
echo "scrapes: $(wc -l <"$tmp/s2.txt") lines, promtool and checks rc=$rc"
exit $rc
