#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks of two /metrics scrapes and of /roce/estats telemetry from estats-harness.

Usage: check_metrics.py QUIESCENT SCRAPE1 SCRAPE2 PREFIX
QUIESCENT is an exposition rendered with the traffic stopped (--render), where a
tenant's buckets must equal the sum of its connections' exactly; in the live
scrapes the connections are read after their tenant, so they may only be ahead.
The harness's timeline (tests/estats/metrics_harness.c): connection i of the
configuration has a network round trip of (i + 1) * 20 us, a host response of
(i + 1) * 5 us and a message completion of 3 us more than its round trip; one
NAK of kind i % 7 per 128 rounds; hairpin connections are not measured.
"""
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from roce_telemetry import telemetry  # noqa: E402

SAMPLE = re.compile(r'^([a-z_]+)\{([^}]*)\} (\S+)$')
HISTS = ("network_rtt", "host_response", "message_completion")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def parse(path):
    """{(name, frozenset(labels)): value}"""
    out = {}
    for line in open(path):
        m = SAMPLE.match(line.strip())
        if not m:
            continue
        labels = frozenset(tuple(kv.split("=", 1)) for kv in re.findall(r'[a-z_]+="[^"]*"', m.group(2)))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def series(doc, name, **want):
    """[(labels dict, value)] of metric @name whose labels include @want."""
    res = []
    for (n, labels), v in doc.items():
        d = {k: val.strip('"') for k, val in labels}
        if n == name and all(d.get(k) == str(val) for k, val in want.items()):
            res.append((d, v))
    return res


def buckets(doc, base, **want):
    """The cumulative buckets of one series, sorted by le: [(le, count)]."""
    b = [(float("inf") if d["le"] == "+Inf" else float(d["le"]), v) for d, v in series(doc, base + "_bucket", **want)]
    return sorted(b)


q, s1, s2 = parse(sys.argv[1]), parse(sys.argv[2]), parse(sys.argv[3])
prefix = sys.argv[4]


def conn_sum(doc, h, tenant):
    cb = {}
    for d, v in series(doc, "roce_estats_connection_%s_seconds_bucket" % h, tenant=tenant):
        cb[d["le"]] = cb.get(d["le"], 0) + v
    return cb


for tenant in ("blue", "red"):
    for h in HISTS:
        base = "roce_estats_%s_seconds" % h
        b = buckets(s2, base, tenant=tenant)
        cnt = series(s2, base + "_count", tenant=tenant)[0][1]
        check(len(b) == 97, "%s %s: 96 bounds and +Inf (%d)" % (tenant, h, len(b)))
        check(all(b[i][1] <= b[i + 1][1] for i in range(len(b) - 1)), "%s %s: cumulative" % (tenant, h))
        check(b[-1][1] == cnt, "%s %s: +Inf bucket equals _count" % (tenant, h))
        # Under traffic: the second scrape has more samples.
        cnt1 = series(s1, base + "_count", tenant=tenant)[0][1]
        check(cnt > cnt1 > 0, "%s %s: count grows between scrapes (%d, %d)" % (tenant, h, cnt1, cnt))
        # The tenant is the sum of its connections, bucket by bucket.
        cb = conn_sum(s2, h, tenant)
        tb = {d["le"]: v for d, v in series(s2, base + "_bucket", tenant=tenant)}
        check(set(cb) == set(tb) and all(tb[le] <= cb[le] for le in tb),
              "%s %s: live, no tenant bucket ahead of its connections'" % (tenant, h))
        cb = conn_sum(q, h, tenant)
        tb = {d["le"]: v for d, v in series(q, base + "_bucket", tenant=tenant)}
        check(cb == tb and tb["+Inf"] > 0, "%s %s: quiescent, tenant buckets are the sum of its connections'"
              % (tenant, h))

# Telemetry: percentiles within the histogram's error of the injected delays.
conf = telemetry(prefix, "/roce/estats")
check(conf["enabled"] == 1, "telemetry: enabled")
conns = [conf[k] for k in sorted((k for k in conf if k.isdigit()), key=int)]
check(len(conns) == conf["total"], "telemetry: one page holds them all")
kinds = ["psn_sequence_error", "rnr", "remote_access_error", "remote_operational_error",
         "invalid_request", "invalid_rd_request", "reserved"]
measured = 0
for i, c in enumerate(conns):
    net = c["network_rtt"]
    if net["count"] == 0:
        continue  # a hairpin
    measured += 1
    want = {"network_rtt": 20000 * (i + 1), "host_response": 5000 * (i + 1),
            "message_completion": 20000 * (i + 1) + 3000}
    for h, ns in want.items():
        for p in ("p50_ns", "p99_ns", "max_ns"):
            got = c[h][p]
            check(abs(got - ns) <= 0.05 * ns, "conn %d %s %s: %d within 5 %% of %d" % (i, h, p, got, ns))
    check(c["naks_received"][kinds[i % 7]] > 0, "conn %d: NAK %s counted" % (i, kinds[i % 7]))
    check(sum(c["naks_received"].values()) == c["naks_received"][kinds[i % 7]],
          "conn %d: no other NAK kind" % i)
    check(c["retransmissions"] > 0, "conn %d: retransmissions counted" % i)
check(measured >= 2, "telemetry: two measured connections (%d)" % measured)

h = telemetry(prefix, "/roce/estats/hist,blue,192.168.1.10,17")
net = h["network_rtt"]
check(sum(net["counts"]) == net["count"] > 0, "hist: counts add up")
check(len(net["le_ns"]) == 1 and 20000 <= net["le_ns"][0] <= 20000 * 1.0625,
      "hist: one bucket, its bound within 6.25 %% above 20 us (%s)" % net["le_ns"])
ht = telemetry(prefix, "/roce/estats/hist,blue")
check(ht["network_rtt"]["count"] >= net["count"], "hist: the tenant has at least its connection's samples")

# Pausing for a benchmark: no sample while paused, samples again once resumed.
check(telemetry(prefix, "/roce/estats/enable,0")["enabled"] == 0, "enable,0 pauses")
time.sleep(0.05)
a = telemetry(prefix, "/roce/estats/hist,blue")["network_rtt"]["count"]
time.sleep(0.3)
b = telemetry(prefix, "/roce/estats/hist,blue")["network_rtt"]["count"]
check(a == b, "paused: no new samples (%d, %d)" % (a, b))
check(telemetry(prefix, "/roce/estats/enable,1")["enabled"] == 1, "enable,1 resumes")
time.sleep(0.3)
c = telemetry(prefix, "/roce/estats/hist,blue")["network_rtt"]["count"]
check(c > b, "resumed: samples again (%d, %d)" % (b, c))

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
