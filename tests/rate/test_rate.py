#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Rate control through the real switch and real DPDK vdevs.

Tenant blue's port is net_pcap with infinite_rx: a pcap of valid RC
SEND and WRITE messages (1 to 4 KiB packets, one to four packets a message)
on a configured connection, replayed from memory far faster than any cap
here, so the shaper is always overloaded.  The uplink is net_null, or
net_pcap tx_pcap where the output is read back.  Figures come from
/roce/stats, /roce/tenants, /roce/connections, /roce/drops and the exit
summary.

Rates are in L2 frame bits: Ethernet header to ICRC, without FCS, preamble
or inter-frame gap.  That is what the shaper charges (the mbuf's pkt_len)
and what the ports' tx_bytes count.

A shaper cannot send while its lcore does not run, and recovers at most
its burst afterwards.  On a shared machine each measurement therefore reads
how long the forwarding lcore waited for its CPU or had it taken by the
hypervisor (schedstat, /proc/stat steal), retries a disturbed window, and
lowers only the lower bounds by that share, which it prints with the
figure; upper bounds are strict.

(1) accuracy: a tenant cap of 2 Gb/s, and (separate run) a QP cap of
    1.5 Gb/s under an uncapped tenant; the uplink's tx_bytes over 3 s after
    a warm-up is within 2 % of the cap.
(2) backpressure: under that overload backpressure_skips grows, the tenant
    shows backpressure_us > 0 and a full queue, and nothing is dropped: every
    drop reason is 0, rx = tx at exit and the mbuf pool is back to baseline.
(3) watchdog: a tenant whose queue cannot drain (0.5 Mb/s, 4 KiB frames,
    shaping.queue_bytes 65536, watchdog_ms 50): shaping_watchdog drops and
    watchdog trips, refused in whole messages (the per-message and
    per-packet counts agree), and every message in the uplink capture is
    complete and in PSN order (a First without its Last only at the end,
    the message in flight at exit).
(4) reload 2 -> 1 -> 2 Gb/s: in 200 ms windows after each reload no window
    is above the higher of the two rates + 5 % (no burst) or, going up,
    below the old rate - 5 % (no stall), and the new rate is reached
    within 3 windows; nothing is dropped.
(5) conn_removed: a reload that removes one of two connections while both
    have frames queued (50 Mb/s, 4 MiB queue) drops that connection's queue
    under conn_removed, the other goes on at the tenant's cap, the switch
    keeps running and the mbuf pool is back to baseline at exit.
(6) quota: /roce/tenants shows qps and max_qps; a reload with more QPs than
    max_qps is rejected naming the record's JSON path, and the running
    configuration stays.

Usage: /usr/bin/python3 tests/rate/test_rate.py BUILD_DIR [--keep] [--only TEST ...]
Final line: "N passed, M failed".
"""
import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from roce_telemetry import telemetry  # noqa: E402
from roce_switch import start_switch, stop_switch, wait_socket  # noqa: E402
from roce_checks import Checks  # noqa: E402

from roce_layers import BTH, RETH  # noqa: E402
from scapy.all import Ether, IP, UDP, Raw, wrpcap, rdpcap  # noqa: E402

UPLINK_MAC, PEER_MAC, GW_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:fe"
BLUE_VM, BLUE_PORT = "02:00:00:00:aa:10", "02:00:00:00:01:01"
L_VIP, R_VIP = "192.168.1.10", "192.168.1.20"
# blue's connections: local vqpn -> (remote vqpn, local pqpn, remote pqpn)
CONNS = {17: (33, 4113, 8193), 20: (40, 4116, 8201), 21: (41, 4117, 8202)}
UPLINK, TENANT_PORT = "net_null0", "net_pcap1"
LCORES = "1"   # one lcore: the main lcore forwards
GBPS = 1e9

# Opcodes of RC SEND and RDMA WRITE: First, Middle, Last, Only.
OPS = {"send": (0x00, 0x01, 0x02, 0x04), "write": (0x06, 0x07, 0x08, 0x0a)}
FIRST, MIDDLE, LAST, ONLY = range(4)
KIND = {op: (kind, pos) for kind, ops in OPS.items() for pos, op in enumerate(ops)}
# The rate tests' messages (payload bytes of each packet): 1 to 4 KiB packets, 1 to 3 packets.
RATE_MIX = [("write", [4096] * 3), ("send", [1024]), ("write", [2048]), ("send", [4096, 2048]),
            ("write", [4096, 1024]), ("send", [4096, 4096, 3072]), ("write", [4096])]
# The watchdog test's: four 4 KiB packets each.
WATCHDOG_MIX = [("write", [4096] * 4), ("send", [4096] * 4)] * 3

check = Checks()

# ---------------------------------------------------------------------------
# Configuration and traffic.

def config(conns=(17,), tenant_gbps=None, qp_gbps=None, shaping=None, max_qps=None, uplink=UPLINK):
    qps = []
    for lq in conns:
        rq, lp, rp = CONNS[lq]
        local = {"tenant": "blue", "vip": L_VIP, "vqpn": lq, "pqpn": lp, "type": "rc",
                 "peer": {"vip": R_VIP, "vqpn": rq}}
        if qp_gbps is not None:
            local["rate"] = {"gbps": qp_gbps}
        qps.append(local)
        qps.append({"tenant": "blue", "vip": R_VIP, "vqpn": rq, "pqpn": rp, "type": "rc",
                    "peer": {"vip": L_VIP, "vqpn": lq}})
    tenant = {"name": "blue", "vni": 100}
    if tenant_gbps is not None:
        tenant["rate"] = {"gbps": tenant_gbps}
    if max_qps is not None:
        tenant["max_qps"] = max_qps
    cfg = {
        "version": 1,
        "comment": "tests/rate/test_rate.py",
        "ports": [
            {"name": "fabric0", "device": uplink, "role": "uplink", "ip": "10.0.0.1",
             "mac": UPLINK_MAC, "gateway_mac": GW_MAC},
            {"name": "vm-blue", "device": TENANT_PORT, "role": "tenant", "tenant": "blue", "mac": BLUE_PORT},
        ],
        "tenants": [tenant],
        "endpoints": [
            {"tenant": "blue", "vip": L_VIP, "host": "10.0.0.1", "port": "vm-blue", "mac": BLUE_VM},
            {"tenant": "blue", "vip": R_VIP, "host": "10.0.0.2"},
        ],
        "qps": qps,
        "neighbors": [{"ip": "10.0.0.2", "mac": PEER_MAC}],
    }
    if shaping:
        cfg["shaping"] = shaping
    return cfg


def write_json(work, name, doc):
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def message(lq, psn, kind, sizes):
    """The frames of one message from L on connection @lq, starting at @psn; a WRITE's RETH names
    the whole message, so the switch charges it once, at its First."""
    rq = CONNS[lq][0]
    ops, n, out = OPS[kind], len(sizes), []
    for i, size in enumerate(sizes):
        pos = ONLY if n == 1 else FIRST if i == 0 else LAST if i == n - 1 else MIDDLE
        p = (Ether(src=BLUE_VM, dst=BLUE_PORT) / IP(src=L_VIP, dst=R_VIP, flags="DF") /
             UDP(sport=50000 + lq, dport=4791, chksum=0) / BTH(opcode=ops[pos], dqpn=rq, psn=psn + i))
        if kind == "write" and pos in (FIRST, ONLY):
            p = p / RETH(va=0x7f0000000000, rkey=0x1234, dmalen=sum(sizes))
        out.append(p / Raw(bytes(size)))
    return out


def traffic(path, conns, mix):
    """The pcap of @mix on each of @conns, messages interleaved; returns {(remote pqpn, first psn):
    packets} of every message."""
    frames, msgs = [], {}
    psn = {lq: 0 for lq in conns}
    for kind, sizes in mix:
        for lq in conns:
            frames += message(lq, psn[lq], kind, sizes)
            msgs[(CONNS[lq][2], psn[lq])] = len(sizes)
            psn[lq] += len(sizes)
    wrpcap(path, frames)
    return msgs


# ---------------------------------------------------------------------------
# Measuring.

def lost_ns(pid):
    """Time the switch's forwarding lcore (its main thread, on CPU LCORES) could not run, in ns:
    waiting for the CPU (schedstat) plus what the hypervisor stole from that CPU (/proc/stat).
    A shaper cannot send while it does not run, and recovers at most its burst afterwards."""
    with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as f:
        wait = int(f.read().split()[1])
    steal = 0
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu%s " % LCORES):
                steal = int(line.split()[8]) * 1e9 / os.sysconf("SC_CLK_TCK")
    return wait + steal


def sample(sw):
    """(time, uplink tx_bytes, /roce/stats, lost ns): the time is the middle of the telemetry call."""
    lost = lost_ns(sw.proc.pid)
    t0 = time.monotonic()
    s = telemetry(sw.prefix, "/roce/stats")
    t1 = time.monotonic()
    return (t0 + t1) / 2, s["fabric0"]["tx_bytes"], s, lost


def rate_over(sw, seconds):
    """The uplink's L2 bit rate over @seconds, the share of that time the lcore could not run,
    and the stats at both ends."""
    t0, b0, s0, l0 = sample(sw)
    time.sleep(seconds)
    t1, b1, s1, l1 = sample(sw)
    return (b1 - b0) * 8 / (t1 - t0), (l1 - l0) / 1e9 / (t1 - t0), s0, s1


def steady_rate(sw, seconds, tries=3):
    """rate_over() in up to @tries windows, until one in which the lcore ran (lost under 0.5 %);
    else the least disturbed one.  This machine is shared: a window the lcore spent waiting for
    a CPU says nothing of the shaper."""
    best = None
    for _ in range(tries):
        r = rate_over(sw, seconds)
        if best is None or r[1] < best[1]:
            best = r
        if r[1] < 0.005:
            break
    return best


def windows(sw, n, width=0.2):
    """(rate, lost share) of the uplink in @n consecutive windows of @width seconds, from now."""
    out = []
    t, b, _, lost = sample(sw)
    start = t
    for i in range(1, n + 1):
        delay = start + i * width - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        t1, b1, _, lost1 = sample(sw)
        out.append(((b1 - b) * 8 / (t1 - t), (lost1 - lost) / 1e9 / (t1 - t)))
        t, b, lost = t1, b1, lost1
    return out


def accuracy(bps, lost, cap, frac):
    """True when @bps is within @frac of @cap, below it by the share @lost of the time the lcore
    could not run on top; and the figure, with that share."""
    err = (bps - cap) / cap
    return -(frac + lost) <= err <= frac, "%s, %+.3f %% (lcore unable to run %.2f %% of the time)" % (
        gbps(bps), err * 100, lost * 100)


def tenant(prefix):
    return telemetry(prefix, "/roce/tenants,blue")["blue"]


def conns_of(prefix):
    """local vqpn -> the connection's /roce/connections record."""
    doc = telemetry(prefix, "/roce/connections,blue")
    return {v["local_vqpn"]: v for v in doc.values() if isinstance(v, dict)}


def drops_nonzero(prefix):
    return {k: v for k, v in telemetry(prefix, "/roce/drops").items() if v}


def reload(prefix, path):
    return telemetry(prefix, "/roce/reload," + path)


def gbps(bps):
    return "%.4f Gb/s" % (bps / GBPS)


# ---------------------------------------------------------------------------
# A run of the switch.

class Switch:
    """The switch on blue's infinite pcap, for a with-block; .summary, .rc and .err after it."""

    def __init__(self, build, name, cfg_path, pcap, uplink_vdev="net_null0,no-rx=1", args=(), lcores=LCORES):
        """@pcap: blue's pcap, or a list of them, one per rx queue (tests/mq/test_mq_rate.py)."""
        self.prefix = "rate-%s-%d" % (name, os.getpid())
        self.name = name
        pcaps = pcap if isinstance(pcap, list) else [pcap]
        self.vdevs = [uplink_vdev, "%s,%s,infinite_rx=1" % (TENANT_PORT, ",".join("rx_pcap=" + x for x in pcaps))]
        self.build, self.cfg_path, self.args, self.lcores = build, cfg_path, args, lcores
        self.summary = None

    def __enter__(self):
        self.proc = start_switch(self.build, self.prefix, self.vdevs, self.cfg_path, self.lcores, self.args)
        if not check(wait_socket(self.prefix, self.proc), "(%s) the switch answers telemetry" % self.name):
            self.__exit__(None, None, None)
            raise RuntimeError("%s: no telemetry" % self.name)
        return self

    def __exit__(self, *exc):
        if self.summary is None and self.proc:
            self.rc, self.summary, self.err = stop_switch(self.proc, self.prefix)
            self.proc = None
            check(self.rc == 0 and self.summary is not None,
                  "(%s) the switch exits cleanly with a summary" % self.name, (self.rc, self.err[-600:]))
        return False

    def exit_checks(self, allowed_drops=()):
        """The exit summary: drops only of @allowed_drops, rx = tx + dropped, the mbuf pool at baseline."""
        s = self.summary
        if s is None:
            return None
        drops = {k: v for k, v in s["drops"].items() if v}
        check(set(drops) <= set(allowed_drops), "(%s) drops at exit only %s" % (self.name, sorted(allowed_drops)),
              drops)
        check(s["dropped"] == sum(s["drops"].values()), "(%s) dropped = the sum of the reasons" % self.name)
        check(s["rx_packets"] == s["tx_packets"] + s["dropped"],
              "(%s) every frame received left or was dropped: rx %d = tx %d + dropped %d" % (
                  self.name, s["rx_packets"], s["tx_packets"], s["dropped"]))
        m = s["mbufs"]
        check(m["in_use_end"] == m["in_use_start"] and m["in_use_after_close"] == 0,
              "(%s) mbuf pool back to baseline" % self.name, m)
        return drops


# ---------------------------------------------------------------------------
# (1), (2), (4): a 2 Gb/s tenant, backpressure, reloads 2 -> 1 -> 2 Gb/s.

def check_backpressure(prefix, name, s0, s1, what):
    t = tenant(prefix)
    sh = t["shaping"]
    skips = s1["backpressure_skips"] - s0["backpressure_skips"]
    check(skips > 0, "(%s) backpressure: backpressure_skips grows under overload (+%d)" % (name, skips))
    check(sh["backpressure_us"] > 0, "(%s) backpressure: tenant backpressure_us > 0" % name, sh["backpressure_us"])
    # Full means at least the limit; the burst in hand when it filled may go beyond.
    check(sh["queued_bytes"] >= sh["queue_limit_bytes"] // 2 and sh["queue_limit_bytes"] == 4194304,
          "(%s) backpressure: the queue is (nearly) full, at its limit of 4 MiB" % name,
          (sh["queued_bytes"], sh["queue_limit_bytes"]))
    check(sh["watchdog_trips"] == 0 and sh["watchdog_dropping"] == 0,
          "(%s) backpressure: the watchdog never trips while the queue drains" % name, sh)
    d = drops_nonzero(prefix)
    check(not d and all(v == 0 for v in sh["drops"].values()),
          "(%s) backpressure: no frame dropped (every drop counter 0)" % name, (d, sh["drops"]))
    print("(%s) %s: backpressure_skips +%d over the measurement, backpressure_us %d, queued %d of %d B, "
           "achieved (shaper EWMA) %s" % (name, what, skips, sh["backpressure_us"], sh["queued_bytes"],
                                          sh["queue_limit_bytes"], gbps(sh["achieved_bps"])))
    return sh


def test_tenant_cap(build, work):
    name = "tenant-cap"
    pcap = os.path.join(work, "rate.pcap")
    traffic(pcap, (17,), RATE_MIX)
    paths = {g: write_json(work, "tenant-%g" % g, config(tenant_gbps=g)) for g in (2, 1)}
    bad = config(conns=(17, 20), tenant_gbps=2, max_qps=2)
    with Switch(build, name, paths[2], pcap) as sw:
        p = sw.prefix
        time.sleep(1.5)   # warm-up: the queue fills, the burst is spent
        bps, lost, s0, s1 = steady_rate(sw, 3.0)
        ok, fig = accuracy(bps, lost, 2 * GBPS, 0.02)
        print("(1) tenant cap 2 Gb/s: measured over 3 s %s" % fig)
        check(ok, "(1) tenant cap 2 Gb/s: the uplink carries 2 Gb/s +-2 %", fig)
        sh = check_backpressure(p, name, s0, s1, "2 Gb/s tenant")
        check(sh["configured_bps"] == 2 * GBPS and sh["connections"] >= 1,
              "(%s) shaping: configured_bps 2e9, the connection attached" % name, sh)
        # An EWMA of the last few milliseconds: near the cap, never above it.
        check(GBPS <= sh["achieved_bps"] <= 2 * GBPS * 1.05, "(%s) shaping: achieved_bps near 2 Gb/s" % name,
              gbps(sh["achieved_bps"]))
        # What the shaper let go is what left on the uplink, up to a tx buffer in flight: the
        # uplink's count between two of the shaper's.
        sent1 = tenant(p)["shaping"]["sent_bytes"]
        s = telemetry(p, "/roce/stats")
        sent2 = tenant(p)["shaping"]["sent_bytes"]
        tx = s["fabric0"]["tx_bytes"]
        check(sent1 - 32 * 4200 <= tx <= sent2, "(%s) shaping: the uplink's tx_bytes %d = the shaper's sent_bytes "
              "(%d .. %d)" % (name, tx, sent1, sent2))
        check(s["shaped"] > 0 and tenant(p)["shaping"]["charged_bytes"] > 0,
              "(%s) shaped frames and admission charges counted" % name)

        # (6) a quota, checked here on a running configuration too: 2 QPs, a file with 4 and max_qps 2.
        t = tenant(p)
        check(t["qps"] == 2 and t["max_qps"] == 65536, "(6) /roce/tenants: qps 2, max_qps 65536 (default)",
              (t["qps"], t["max_qps"]))
        r = reload(p, write_json(work, "over-quota-2", bad))
        errs = r.get("errors", [])
        check(r.get("result") == "rejected" and any(e.find("qps[2]") >= 0 and "max_qps 2" in e for e in errs),
              "(6) a file with 4 QPs and max_qps 2 is rejected at qps[2]", r)

        # (4) reload 2 -> 1 Gb/s, then 1 -> 2 Gb/s.
        for old, new in ((2, 1), (1, 2)):
            r = reload(p, paths[new])
            check(r.get("result") == "applied" and r.get("connections_kept") == 1,
                  "(4) reload %g -> %g Gb/s applied" % (old, new), r)
            w = windows(sw, 10)
            shown = " ".join("%.3f" % (x / GBPS) + ("(lcore idle %.0f %%)" % (100 * lo) if lo > 0.005 else "")
                             for x, lo in w)
            print("(4) reload %g -> %g Gb/s, 200 ms windows: %s Gb/s" % (old, new, shown))
            top = max(x for x, _ in w)
            check(top <= max(old, new) * GBPS * 1.05,
                  "(4) %g -> %g: no window above %g Gb/s + 5 %% (no burst)" % (old, new, max(old, new)), gbps(top))
            # Low bounds leave out what the lcore could not run in that window.
            if new > old:
                check(all(x >= old * GBPS * (0.95 - lo) for x, lo in w),
                      "(4) %g -> %g: no window below %g Gb/s - 5 %% (no stall)" % (old, new, old), shown)
            near = [x >= new * GBPS * (0.95 - lo) and x <= new * GBPS * 1.05 for x, lo in w]
            first = near.index(True) if True in near else len(w)
            check(first <= 2 and all(near[first:]),
                  "(4) %g -> %g: the new rate is reached within 3 windows and held" % (old, new), shown)
            d = drops_nonzero(p)
            check(not d, "(4) %g -> %g: nothing dropped" % (old, new), d)
            check(tenant(p)["shaping"]["configured_bps"] == new * GBPS,
                  "(4) %g -> %g: configured_bps follows" % (old, new))
    sw.exit_checks()


# ---------------------------------------------------------------------------
# (1), (2) with a QP cap.

def test_qp_cap(build, work):
    name = "qp-cap"
    pcap = os.path.join(work, "rate.pcap")
    path = write_json(work, "qp-cap", config(qp_gbps=1.5))
    with Switch(build, name, path, pcap) as sw:
        p = sw.prefix
        time.sleep(1.5)
        bps, lost, s0, s1 = steady_rate(sw, 3.0)
        ok, fig = accuracy(bps, lost, 1.5 * GBPS, 0.02)
        print("(1) QP cap 1.5 Gb/s, tenant uncapped: measured over 3 s %s" % fig)
        check(ok, "(1) QP cap 1.5 Gb/s: the uplink carries 1.5 Gb/s +-2 %", fig)
        sh = check_backpressure(p, name, s0, s1, "1.5 Gb/s QP")
        check(sh["configured_bps"] == 0, "(%s) the tenant itself is uncapped" % name, sh["configured_bps"])
        c = conns_of(p).get(17, {})
        check(c.get("rate_bps") == 1.5 * GBPS and c.get("pacing_bps") == 1.5 * GBPS and c.get("queued_bytes", 0) > 0
              and c.get("queued_packets", 0) > 0,
              "(%s) /roce/connections: rate_bps and pacing_bps 1.5e9, frames queued" % name, c)
    sw.exit_checks()


# ---------------------------------------------------------------------------
# (3) The watchdog, whole messages.

def message_check(frames, msgs):
    """Problems with the messages in @frames (in order): every message complete, in PSN order, as
    generated (@msgs: (dqpn, first psn) -> packets); a First without its Last only at the end."""
    problems, complete, open_msg = [], 0, None
    for i, f in enumerate(frames):
        b = f[BTH] if BTH in f else None
        if b is None or b.opcode not in KIND:
            problems.append("frame %d is not an RC SEND/WRITE" % i)
            continue
        pos = KIND[b.opcode][1]
        if pos in (FIRST, ONLY):
            if open_msg:
                problems.append("frame %d: %s at psn %d while the message at psn %d is open" % (
                    i, "First" if pos == FIRST else "Only", b.psn, open_msg[1]))
            n = msgs.get((b.dqpn, b.psn))
            if n is None:
                problems.append("frame %d: no message starts at dqpn %d psn %d" % (i, b.dqpn, b.psn))
            open_msg = [b.dqpn, b.psn, b.psn + 1, n, b.opcode]
        elif not open_msg:
            problems.append("frame %d: %s at psn %d without its First" % (
                i, "Middle" if pos == MIDDLE else "Last", b.psn))
            continue
        elif b.dqpn != open_msg[0] or b.psn != open_msg[2] or KIND[b.opcode][0] != KIND[open_msg[4]][0]:
            problems.append("frame %d: dqpn %d psn %d where psn %d of the message at %d was due" % (
                i, b.dqpn, b.psn, open_msg[2], open_msg[1]))
            open_msg = None
            continue
        else:
            open_msg[2] += 1
        if pos in (LAST, ONLY):
            if open_msg[3] is not None and open_msg[2] - open_msg[1] != open_msg[3]:
                problems.append("message at psn %d: %d packets of %d" % (
                    open_msg[1], open_msg[2] - open_msg[1], open_msg[3]))
            complete += 1
            open_msg = None
    return problems, complete, open_msg


def test_watchdog(build, work):
    name = "watchdog"
    pcap = os.path.join(work, "watchdog.pcap")
    msgs = traffic(pcap, (17,), WATCHDOG_MIX)
    out = os.path.join(work, "watchdog-uplink.pcap")
    path = write_json(work, "watchdog", config(tenant_gbps=0.0005, uplink="net_pcap0",
                                               shaping={"watchdog_ms": 50, "queue_bytes": 65536}))
    with Switch(build, name, path, pcap, uplink_vdev="net_pcap0,tx_pcap=%s" % out) as sw:
        p = sw.prefix
        time.sleep(4.0)
        d1 = telemetry(p, "/roce/drops")["shaping_watchdog"]
        t = tenant(p)
        d2 = telemetry(p, "/roce/drops")["shaping_watchdog"]
        sh = t["shaping"]
        dr = sh["drops"]
        print("(3) watchdog: after 4 s at 0.5 Mb/s: %d trips, %d messages (%d packets) refused, "
               "sent %d packets, overflow %d messages" % (sh["watchdog_trips"], dr["watchdog_messages"],
                                                           dr["watchdog_packets"], sh["sent_packets"],
                                                           dr["overflow_messages"]))
        check(sh["watchdog_trips"] > 0, "(3) watchdog_trips > 0", sh["watchdog_trips"])
        check(dr["watchdog_messages"] > 0 and d1 > 0, "(3) shaping_watchdog drops > 0", (d1, dr))
        check(d1 <= dr["watchdog_packets"] <= d2,
              "(3) /roce/drops shaping_watchdog and the tenant's watchdog_packets agree",
              (d1, dr["watchdog_packets"], d2))
        # Every message is four packets: refused whole, the last one perhaps still arriving (and
        # read while the lcore writes: its message counted, its first packet not yet).
        for why in ("watchdog", "overflow"):
            m, k = dr[why + "_messages"], dr[why + "_packets"]
            check(4 * m - 4 <= k <= 4 * m or m == k == 0,
                  "(3) %s refusals are whole messages: %d packets for %d four-packet messages" % (why, k, m))
        check(sh["queue_limit_bytes"] == 65536, "(3) queue_limit_bytes 65536", sh["queue_limit_bytes"])
        check(t["dropped"] >= d1, "(3) the tenant's dropped counts them", (t["dropped"], d1))
        check(sh["sent_packets"] > 0, "(3) frames still leave at the cap", sh["sent_packets"])
    drops = sw.exit_checks(("shaping_watchdog", "shaping_overflow", "shutdown"))
    if sw.summary is None:
        return
    frames = rdpcap(out)
    check(len(frames) == sw.summary["ports"]["fabric0"]["tx_packets"] and len(frames) > 0,
          "(3) the capture holds every frame the uplink sent", (len(frames), sw.summary["ports"]["fabric0"]))
    problems, complete, open_msg = message_check(frames, msgs)
    check(not problems, "(3) every message in the capture complete and in PSN order", problems[:5])
    check(complete >= 3, "(3) several whole messages left (%d)" % complete)
    print("(3) uplink capture: %d frames, %d complete messages, %s in flight at exit; drops at exit %s" % (
        len(frames), complete, "one" if open_msg else "none", json.dumps(drops)))


# ---------------------------------------------------------------------------
# (5) conn_removed, (6) the quota.

def test_conn_removed(build, work):
    name = "conn-removed"
    pcap = os.path.join(work, "two-conns.pcap")
    traffic(pcap, (17, 20), RATE_MIX)
    shaping = {"watchdog_ms": 60000, "queue_bytes": 4194304}
    both = write_json(work, "both", config(conns=(17, 20), tenant_gbps=0.05, shaping=shaping, max_qps=4))
    one = write_json(work, "one", config(conns=(17,), tenant_gbps=0.05, shaping=shaping, max_qps=4))
    fast = write_json(work, "fast", config(conns=(17,), tenant_gbps=5, shaping=shaping, max_qps=4))
    over = write_json(work, "over", config(conns=(17, 20, 21), tenant_gbps=0.05, shaping=shaping, max_qps=4))
    with Switch(build, name, both, pcap) as sw:
        p = sw.prefix
        time.sleep(1.0)
        # (6) The quota.
        t = tenant(p)
        check(t["qps"] == 4 and t["max_qps"] == 4, "(6) /roce/tenants: qps 4, max_qps 4", (t["qps"], t["max_qps"]))
        r = reload(p, over)
        errs = r.get("errors", [])
        print("(6) reload with 6 QPs, max_qps 4: %s %s" % (r.get("result"), errs))
        check(r.get("result") == "rejected" and any("qps[4].tenant" in e and "max_qps 4" in e for e in errs),
              "(6) a reload with 6 QPs over max_qps 4 is rejected at qps[4].tenant", r)
        t, c = tenant(p), conns_of(p)
        check(t["qps"] == 4 and sorted(c) == [17, 20] and t["shaping"]["configured_bps"] == 0.05 * GBPS,
              "(6) the running configuration stays: 4 QPs, connections 17 and 20, 50 Mb/s",
              (t["qps"], sorted(c), t["shaping"]["configured_bps"]))

        # (5) Both connections have frames queued; remove 20.
        q20 = c.get(20, {}).get("queued_packets", 0)
        check(q20 > 0 and c.get(17, {}).get("queued_packets", 0) > 0,
              "(5) both connections have frames queued before the reload",
              {k: (v["queued_packets"], v["queued_bytes"]) for k, v in c.items()})
        r = reload(p, one)
        check(r.get("result") == "applied" and r.get("connections_removed") == 1 and r.get("connections_kept") == 1,
              "(5) the reload removing connection 20 is applied", r)
        end, removed, last = time.time() + 5, -1, None
        while time.time() < end:
            time.sleep(0.3)
            removed = telemetry(p, "/roce/drops")["conn_removed"]
            if removed > 0 and removed == last:
                break
            last = removed
        q_before = q20
        print("(5) connection 20 had %d frames queued at the reload; dropped as conn_removed: %d" % (
            q_before, removed))
        check(0 < removed <= q_before + 64, "(5) its queued frames are dropped under conn_removed", (removed, q20))
        t, c = tenant(p), conns_of(p)
        check(sorted(c) == [17] and t["qps"] == 2, "(5) connection 17 alone remains", (sorted(c), t["qps"]))
        # Two reads, a moment apart: an rx burst may come in between.
        check(c[17]["queued_bytes"] > 0 and abs(t["shaping"]["queued_bytes"] - c[17]["queued_bytes"]) <= 32 * 4200,
              "(5) nothing of connection 20 left in the queue: the tenant's queue is 17's",
              (t["shaping"]["queued_bytes"], c[17]["queued_bytes"]))
        bps, lost, _, _ = steady_rate(sw, 2.0, tries=2)
        ok, fig = accuracy(bps, lost, 0.05 * GBPS, 0.05)
        print("(5) connection 17 after the removal (cap 50 Mb/s): %s" % fig)
        check(ok, "(5) connection 17 goes on at the tenant's 50 Mb/s", fig)
        d = drops_nonzero(p)
        check(set(d) <= {"conn_removed", "no_connection"} and d.get("no_connection", 0) > 0,
              "(5) drops only conn_removed and no_connection (20's new frames)", d)
        # Drain fast before the exit, so nothing is left for the shutdown.
        r = reload(p, fast)
        check(r.get("result") == "applied", "(5) reload to 5 Gb/s", r)
        time.sleep(0.5)
    sw.exit_checks(("conn_removed", "no_connection"))
    if sw.summary:
        check(sw.summary["drops"]["conn_removed"] == removed,
              "(5) conn_removed counted once per frame (%d at exit)" % sw.summary["drops"]["conn_removed"])


# ---------------------------------------------------------------------------
# (7) A tenant that stops being shaped under traffic: what it has queued
# leaves first, then its frames bypass the shaper; nothing is dropped.

def test_unshape(build, work):
    name = "unshape"
    pcap = os.path.join(work, "unshape.pcap")
    traffic(pcap, (17,), RATE_MIX)
    shaping = {"watchdog_ms": 60000, "queue_bytes": 4194304}
    capped = write_json(work, "unshape-capped", config(conns=(17,), tenant_gbps=0.05, shaping=shaping))
    free = write_json(work, "unshape-free", config(conns=(17,), shaping=shaping))
    with Switch(build, name, capped, pcap) as sw:
        p = sw.prefix
        time.sleep(1.0)
        t = tenant(p)
        check(t["shaping"]["queued_bytes"] > 0, "(7) shaped at 50 Mb/s, the tenant has frames queued",
              t["shaping"]["queued_bytes"])
        r = reload(p, free)
        check(r.get("result") == "applied", "(7) the reload that removes the tenant's rate is applied", r)
        # The queue drains; from then on the tenant's frames no longer enter the shaper.
        end, t = time.time() + 5, None
        while time.time() < end:
            time.sleep(0.2)
            t = tenant(p)
            if t["shaping"]["queued_bytes"] == 0:
                break
        check(t is not None and t["shaping"]["queued_bytes"] == 0, "(7) its queue drains after the reload",
              t and t["shaping"]["queued_bytes"])
        time.sleep(0.3)
        s0 = telemetry(p, "/roce/stats")
        time.sleep(0.5)
        s1 = telemetry(p, "/roce/stats")
        fwd = s1["forwarded_egress"] - s0["forwarded_egress"]
        shaped = s1["shaped"] - s0["shaped"]
        print("(7) after the drain, over 0.5 s: %d frames forwarded, %d through the shaper" % (fwd, shaped))
        check(fwd > 0 and shaped == 0, "(7) the tenant's frames bypass the shaper once its queue is empty",
              (fwd, shaped))
        check(not drops_nonzero(p), "(7) nothing dropped", drops_nonzero(p))
    sw.exit_checks(())


TESTS = (test_tenant_cap, test_qp_cap, test_watchdog, test_conn_removed, test_unshape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--only", nargs="*", choices=[t.__name__[5:] for t in TESTS], help="run only these")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    work = tempfile.mkdtemp(prefix="roce-rate-")
    t0 = time.time()
    for test in TESTS:
        if a.only and test.__name__[5:] not in a.only:
            continue
        try:
            test(build, work)
        except Exception as e:   # counted, and the other tests still run
            check(False, "%s: %r" % (test.__name__, e))
    print("rate: %.1f s" % (time.time() - t0))
    return check.finish(work, a.keep)


if __name__ == "__main__":
    sys.exit(main())
