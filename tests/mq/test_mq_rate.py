#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A tenant's cap across lcores, through the real switch (issue 23).

Tenant blue's port has two rx queues (net_pcap, two infinite rx_pcap files:
connection 17 on one, connection 20 on the other), polled by the two
forwarding lcores (--lcores 0@0,1@0,2@1: the main lcore shares CPU 0; a
net_pcap port without tx_pcap has as many tx queues as rx queues, and each
lcore needs one); the uplink is net_null with a queue per lcore.  Each lcore shapes what it
receives; the tenant's bucket is shared by their shapers.  Rates as in
tests/rate/test_rate.py (L2 frame bits, the uplink's tx_bytes).

(1) a tenant cap of 2 Gb/s holds within +-1 % over 3 s, although its frames
    arrive on two lcores (each lcore's own bucket at the cap would let 4 Gb/s
    through); the lower bound gives way by the share of the time during which
    neither lcore could run (schedstat wait and steal, as test_rate.py reads
    them), the upper bound is strict.
(2) both lcores carry the tenant: each one's rx_packets and each connection's
    egress_packets grow; /roce/tenants sums the lcores' shapers
    (configured_bps 2e9; achieved_bps, a sum of the lcores' EWMAs, is rough).
(3) /roce/lcores lists every (port, queue) exactly once, with the lcore ids
    and rx_packets, and each port's rx_queues.
(4) at exit: nothing dropped, rx = tx, the mbuf pool back to baseline.

Usage: /usr/bin/python3 tests/mq/test_mq_rate.py BUILD_DIR [--keep]
Final line: "N passed, M failed".
"""
import argparse
import collections
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "rate"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import test_rate as tr  # noqa: E402
from roce_telemetry import telemetry  # noqa: E402

LCORES = "0@0,1@0,2@1"
GBPS = tr.GBPS
check = tr.check


def lcore_tids(pid):
    """{lcore id: thread id} of the forwarding lcores (EAL names them rte-worker-N)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                name = f.read().strip()
        except OSError:
            continue
        if name.startswith("rte-worker-"):
            out[int(name.rsplit("-", 1)[1])] = int(tid)
    return out


def lost(pid, tids, cpus):
    """Per thread of @tids (on CPU @cpus[i]), ns it could not run: waiting for its CPU plus steal."""
    steal = {}
    with open("/proc/stat") as f:
        for line in f:
            parts = line.split()
            if parts[0].startswith("cpu") and parts[0] != "cpu":
                steal[int(parts[0][3:])] = int(parts[8]) * 1e9 / os.sysconf("SC_CLK_TCK")
    out = []
    for tid, cpu in zip(tids, cpus):
        with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
            out.append(int(f.read().split()[1]) + steal.get(cpu, 0))
    return out


def measure(sw, tids, cpus, seconds):
    """The uplink's bit rate over @seconds and the share of that time neither of @tids could run
    (at most the least of their shares: while one runs, it may take the whole shared bucket)."""
    l0 = lost(sw.proc.pid, tids, cpus)
    t0 = time.monotonic()
    b0 = telemetry(sw.prefix, "/roce/stats")["fabric0"]["tx_bytes"]
    time.sleep(seconds)
    b1 = telemetry(sw.prefix, "/roce/stats")["fabric0"]["tx_bytes"]
    t1 = time.monotonic()
    l1 = lost(sw.proc.pid, tids, cpus)
    return (b1 - b0) * 8 / (t1 - t0), min((b - a) / 1e9 / (t1 - t0) for a, b in zip(l0, l1))


def lcores_of(prefix):
    doc = telemetry(prefix, "/roce/lcores")
    return doc, [v for k, v in doc.items() if k.isdigit()]


def test_cap_across_lcores(build, work):
    name = "mq-cap"
    pcaps = [os.path.join(work, "q%d.pcap" % q) for q in range(2)]
    tr.traffic(pcaps[0], (17,), tr.RATE_MIX)
    tr.traffic(pcaps[1], (20,), tr.RATE_MIX)
    cfg = tr.config(conns=(17, 20), tenant_gbps=2)
    cfg["ports"][1]["rx_queues"] = 2
    path = tr.write_json(work, "mq-cap", cfg)
    with tr.Switch(build, name, path, pcaps, lcores=LCORES) as sw:
        p = sw.prefix
        doc, lcs = lcores_of(p)
        pairs = collections.Counter((a, int(b)) for lc in lcs for a, b in (x.rsplit(":", 1) for x in lc["rx"]))
        want = collections.Counter([("fabric0", 0), ("fabric0", 1), ("vm-blue", 0), ("vm-blue", 1)])
        check(pairs == want and sorted(lc["lcore"] for lc in lcs) == [1, 2] and doc.get("n_lcores") == 2,
              "(3) /roce/lcores: two lcores, every (port, queue) exactly once", doc)
        check(doc.get("ports", {}).get("vm_blue", {}).get("rx_queues") == 2 and
              doc["ports"]["fabric0"]["rx_queues"] == 2,
              "(3) /roce/lcores: vm-blue has 2 rx queues, the uplink one per lcore (2)", doc.get("ports"))
        blue_lcores = sorted(lc["lcore"] for lc in lcs if any(x.startswith("vm-blue:") for x in lc["rx"]))
        tids = lcore_tids(sw.proc.pid)
        cpus = {1: 0, 2: 1}
        use = [tids[i] for i in blue_lcores if i in tids]
        time.sleep(1.5)   # warm-up: the queues fill, the burst is spent
        c0 = tr.conns_of(p)
        _, before = lcores_of(p)
        best = None
        for _ in range(3):
            bps, lo = measure(sw, use, [cpus[i] for i in blue_lcores], 3.0)
            if best is None or lo < best[1]:
                best = (bps, lo)
            if lo < 0.005:
                break
        bps, lo = best
        ok, fig = tr.accuracy(bps, lo, 2 * GBPS, 0.01)
        print("(1) tenant cap 2 Gb/s on lcores %s: measured over 3 s %s" % (blue_lcores, fig))
        check(len(use) == 2, "(1) blue's two queues are on two lcores", (blue_lcores, tids))
        check(ok, "(1) tenant cap 2 Gb/s across two lcores: the uplink carries 2 Gb/s +-1 %", fig)
        _, after = lcores_of(p)
        grew = {a["lcore"]: b["rx_packets"] - a["rx_packets"] for a, b in zip(before, after)}
        check(all(grew[i] > 0 for i in blue_lcores), "(2) both of blue's lcores receive", grew)
        c1 = tr.conns_of(p)
        check(all(c1[q]["egress_packets"] > c0[q]["egress_packets"] for q in (17, 20)),
              "(2) both connections forward", {q: c1[q]["egress_packets"] for q in (17, 20)})
        sh = tr.tenant(p)["shaping"]
        # achieved_bps is the sum of each lcore's shaper's EWMA over its latest 1 ms windows: the
        # lcores take turns at the shared bucket a quantum (64 KiB) at a time and an lcore that
        # does not run keeps its last figure, so the sum is a rough one; (1) is the exact figure.
        check(sh["configured_bps"] == 2 * GBPS and sh["achieved_bps"] > 0,
              "(2) /roce/tenants: configured_bps 2e9 (one bucket), achieved_bps summed over the lcores",
              (sh["configured_bps"], sh["achieved_bps"]))
        check(not tr.drops_nonzero(p), "(4) nothing dropped under overload", tr.drops_nonzero(p))
    sw.exit_checks()
    if sw.summary:
        check(sw.summary.get("conn_foreign") == 0, "(4) each connection stayed on its lcore: conn_foreign 0",
              sw.summary.get("conn_foreign"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="test_mq_rate.")
    try:
        test_cap_across_lcores(os.path.abspath(a.build), work)
    except Exception as e:   # counted
        check(False, "test_cap_across_lcores: %r" % e)
    return check.finish(work, a.keep)


if __name__ == "__main__":
    sys.exit(main())
