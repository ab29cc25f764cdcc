#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Adversarial isolation suite: identical tenants on two hosts, hostile frames.

  /usr/bin/python3 tests/isolation/test_isolation.py BUILD_DIR [--seed N] [--frames N] [--keep]

gen_isolation.py describes the world (two hosts, three identical tenants,
IPv4 and IPv6) and makes, for each host, a seeded mix of at least --frames
hostile frames (default 10 000) among legitimate ones; model.py predicts,
from DESIGN.md alone, what must become of every frame.

Phase 1 runs both hosts' switches side by side, each fed its own frames on
every port through net_pcap.  Phase 2 wires the hosts together: each
host's uplink input is what the other host's uplinks sent in phase 1.

Checks, for each of the four runs:
  - every counter of the exit summary equals the model's prediction: drops
    by reason, forwarded by kind, CNPs, MR translations, NAKs of refused
    requests, per port and per tenant; rx + NAKs = tx + dropped; the mbuf
    pool is back to its baseline;
  - every output frame is exactly (byte for byte) one the model predicted,
    on the port predicted, none is missing, and each flow keeps its order;
    NAKs of refused RC requests too (gen_isolation.Gen.finish());
  - invariants that need no model, on every frame that comes out: a frame
    on a tenant port is addressed to a QP of that tenant on that port, from
    a vIP (and UD QP) of that tenant, carries that tenant's payload marker
    and traces back (by its PSN) to a frame of that tenant; a frame on an
    uplink is addressed to a configured (host, pqpn) of another host of the
    same tenant, from this host; ICRC, IPv4 and UDP checksums are valid
    (except where the input's ICRC was corrupted on purpose, which must
    stay corrupted);
  - nothing in the switch's stderr from AddressSanitizer, LeakSanitizer or
    UBSan, and no report file under ASAN_OPTIONS/UBSAN_OPTIONS log_path.
And a sample of every frame class (input and predicted output) is built by
scapy too, and must be byte-identical to the suite's fast builder.

One line per failed check, the hostile-frame breakdown, then exactly
"N passed, M failed"; exit 1 on any failure.
"""

import argparse
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen_isolation as gi  # noqa: E402
from model import Cluster, Drop, Fwd, ALL_DROPS, norm  # noqa: E402
from wire import (decode, icrc_ok, ipv4_header_ok, udp_ok, read_pcap, scapy_bytes,  # noqa: E402
                  ip_ver)

SWITCH_TIMEOUT = 60
SANITIZER_RE = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|"
                          r"SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer)")


class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, where, what, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s: %s: %s" % (where, what, detail))
        return ok


R = Results()


# ---------------------------------------------------------------------------
# Running the switches.

def sanitizer_logs():
    """log_path prefixes set in ASAN_OPTIONS/UBSAN_OPTIONS."""
    out = []
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        for kv in os.environ.get(var, "").split(":"):
            if kv.startswith("log_path="):
                out.append(kv[len("log_path="):])
    return out


def clean_prefix(prefix):
    shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    for f in glob.glob("/dev/hugepages/%smap_*" % prefix):
        try:
            os.unlink(f)
        except OSError:
            pass


def start_switch(build, prefix, lcore, config, vdevs, stats):
    cmd = [os.path.join(build, "dataplane", "dpdk-roce-vswitch"), "-l", str(lcore), "--no-pci",
           "--file-prefix", prefix, "--log-level", "lib.eal:warning", "--no-huge", "-m", "512"]
    for v in vdevs:
        cmd += ["--vdev", v]
    cmd += ["--", "--config", config, "--stats-json", stats]
    logs = tempfile.TemporaryFile(mode="w+"), tempfile.TemporaryFile(mode="w+")
    return subprocess.Popen(cmd, stdout=logs[0], stderr=logs[1], text=True, start_new_session=True), logs


def telemetry(prefix, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    try:
        s.connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix)
        s.recv(1024)
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 20).decode())[cmd]
    finally:
        s.close()


def finish_switch(p, logs, prefix, expect_rx, deadline):
    """
    Wait until the switch has received all @expect_rx frames (its telemetry
    says so), then stop it with SIGTERM: it flushes what it holds and
    prints its summary.  Waiting on the count, not on idleness, keeps a
    loaded machine from ending a run early.
    """
    while p.poll() is None and time.time() < deadline:
        try:
            if telemetry(prefix, "/roce/stats")["rx_packets"] >= expect_rx:
                break
        except (OSError, ValueError, KeyError, TypeError):
            pass    # not up yet
        time.sleep(0.05)
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=max(deadline - time.time(), 10))
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        rc = None
    clean_prefix(prefix)
    out = []
    for f in logs:
        f.seek(0)
        out.append(f.read())
        f.close()
    return rc, out[0], out[1]


def summary_of(stdout):
    for line in reversed(stdout.splitlines()):
        if line.strip().startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def run_pair(build, tmp, tag, inputs, expect_rx):
    """
    Run both hosts at once; @inputs: {h: {port: pcap}} (a port missing gets
    an empty pcap), @expect_rx: {h: frames}.  Returns {h: (rc, summary,
    stderr, {port: output frames}, sanitizer report files)}.
    """
    empty = os.path.join(tmp, "empty.pcap")
    procs = {}
    for h in (1, 2):
        cfg = os.path.join(tmp, "host%d.json" % h)
        vdevs, outs = [], {}
        for p in gi.host_ports(h):
            outs[p["name"]] = os.path.join(tmp, "%s.h%d.%s.out.pcap" % (tag, h, p["name"]))
            vdevs.append("%s,rx_pcap=%s,tx_pcap=%s" % (p["device"], inputs[h].get(p["name"], empty),
                                                      outs[p["name"]]))
        prefix = "iso-%d-%s-h%d" % (os.getpid(), tag, h)
        stats = os.path.join(tmp, "%s.h%d.stats.json" % (tag, h))
        before = {f for lp in sanitizer_logs() for f in glob.glob(lp + "*")}
        procs[h] = (start_switch(build, prefix, h - 1, cfg, vdevs, stats), prefix, outs, before)
    res = {}
    deadline = time.time() + SWITCH_TIMEOUT
    try:
        for h, ((p, logs), prefix, outs, before) in procs.items():
            res[h] = finish_switch(p, logs, prefix, expect_rx[h], deadline)
    finally:
        # Whatever went wrong here, no switch of ours outlives the run.
        for (p, _), prefix, _, _ in procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                clean_prefix(prefix)
    for h, ((p, logs), prefix, outs, before) in procs.items():
        rc, out, err = res[h]
        frames = {}
        for port, path in outs.items():
            try:
                frames[port] = read_pcap(path)
            except OSError:
                frames[port] = None
        reports = sorted({f for lp in sanitizer_logs() for f in glob.glob(lp + "*")} - before)
        res[h] = (rc, summary_of(out), err, frames, reports)
    return res


# ---------------------------------------------------------------------------
# Checks of one run.

def describe(frame, by_psn):
    d = decode(frame)
    if d is None:
        return "len %d undecodable: %s" % (len(frame), frame[:48].hex())
    rec = by_psn.get(d["psn"])
    origin = ("input #%d on %s (%s%s), model: %s" % (rec.id + 1, rec.port, rec.cls,
                                                      ", " + rec.note if rec.note else "", rec.outcome)
              if rec else "no input with this PSN")
    return "len %d %s>%s opcode 0x%02x dqpn %#x psn %#x; %s" % (
        len(frame), d["src"], d["dst"], d["opcode"], d["dqpn"], d["psn"], origin)


def check_counters(where, want, got):
    for k in ("rx_packets", "tx_packets", "dropped", "cnp_forwarded", "mr_translated", "naks_refused"):
        R.check(where, "counter " + k, got.get(k) == want[k], "switch %s, model %s" % (got.get(k), want[k]))
    R.check(where, "forwarded egress/ingress/hairpin", got.get("forwarded") == want["forwarded"],
            "switch %s, model %s" % (got.get("forwarded"), want["forwarded"]))
    d = got.get("drops", {})
    # Reasons the model does not know (a later feature's, such as ACLs) must stay at zero.
    bad = ["%s: switch %s, model %s" % (r, d.get(r, "<absent>"), want["drops"].get(r, 0))
           for r in sorted(set(d) | set(want["drops"])) if d.get(r) != want["drops"].get(r, 0)]
    R.check(where, "every drop counted under its named reason, as the model predicts", not bad,
            "; ".join(bad))
    R.check(where, "the summary names all %d reasons the model knows" % len(ALL_DROPS),
            set(ALL_DROPS) <= set(d), "missing: %s" % sorted(set(ALL_DROPS) - set(d)))
    R.check(where, "no revocation NAK", got.get("naks_sent") == 0, "naks_sent %s" % got.get("naks_sent"))
    # NAKs of refused requests are the switch's own frames: sent, not received or forwarded.
    naks = (got.get("naks_refused") or 0) + (got.get("naks_sent") or 0)
    R.check(where, "rx + NAKs = tx + dropped",
            got.get("rx_packets", 0) + naks == got.get("tx_packets", 0) + got.get("dropped", 0),
            "rx %s NAKs %s tx %s dropped %s" % (got.get("rx_packets"), naks, got.get("tx_packets"),
                                                got.get("dropped")))
    fwd = got.get("forwarded") or {}
    R.check(where, "forwarded + NAKs = tx", sum(fwd.values()) + naks == got.get("tx_packets"),
            "forwarded %s NAKs %s tx %s" % (sum(fwd.values()), naks, got.get("tx_packets")))
    R.check(where, "dropped = sum of reasons", got.get("dropped") == sum(d.values()),
            "dropped %s, sum %s" % (got.get("dropped"), sum(d.values())))
    for sect, keys in (("ports", ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes")),
                       ("tenants", ("egress_packets", "egress_bytes", "ingress_packets", "ingress_bytes",
                                    "dropped"))):
        for name, w in want[sect].items():
            g = got.get(sect, {}).get(name, {})
            bad = ["%s: switch %s, model %s" % (k, g.get(k), w[k]) for k in keys if g.get(k) != w[k]]
            R.check(where, "%s %s counters" % (sect[:-1], name), not bad, "; ".join(bad))
    mb = got.get("mbufs", {})
    R.check(where, "mbuf pool back to its baseline",
            mb.get("in_use_end") == mb.get("in_use_start") and mb.get("in_use_after_close") == 0,
            "mbufs %s" % mb)


def invariants(where, h, cluster, ports, port, frames, by_psn):
    """Model-free properties of everything that left @port of host @h."""
    pinfo = ports[port]
    host_ips = {norm(p["ip"]) for p in ports.values() if p["role"] == "uplink"}
    qps = cluster.qps.values()
    bad = {"isolation": [], "mapped": [], "wire": []}
    for i, fr in enumerate(frames):
        d = decode(fr)
        if d is None:
            bad["wire"].append("frame %d undecodable" % (i + 1))
            continue
        rec = by_psn.get(d["psn"])
        mark = d["payload"][:4] if len(d["payload"]) >= 4 else None
        owner = {v: k for k, v in gi.MARKERS.items()}.get(mark) if mark else None
        if pinfo["role"] == "tenant":
            t = pinfo["tenant"]
            q = cluster.qps.get((t, norm(d["dst"]), d["dqpn"]))
            ep = cluster.eps.get((t, norm(d["dst"])))
            if q is None or ep is None or ep["host"] not in host_ips or ep.get("port") != port:
                bad["mapped"].append("frame %d to %s qp %d: not a QP of %s on %s" % (
                    i + 1, d["dst"], d["dqpn"], t, port))
            elif q["type"] == "ud":
                sq = cluster.qps.get((t, norm(d["src"]), d.get("srcqp")))
                if sq is None or sq["type"] != "ud":
                    bad["isolation"].append("frame %d: UD from %s qp %s, not a UD QP of %s" % (
                        i + 1, d["src"], d.get("srcqp"), t))
            elif (norm(d["src"]), ) != (q["peer"][0], ):
                bad["isolation"].append("frame %d: from %s, not %s's peer %s" % (
                    i + 1, d["src"], d["dst"], q["peer"][0]))
            if mark is not None and owner != t:
                bad["isolation"].append("frame %d: payload marker %r on %s's port" % (i + 1, mark, t))
            if rec is not None and rec.tenant != t:
                bad["isolation"].append("frame %d: traces back to %s's input #%d (%s) on %s" % (
                    i + 1, rec.tenant, rec.id + 1, rec.cls, rec.port))
            if rec is None:
                bad["isolation"].append("frame %d: traces back to no input (PSN %#x)" % (i + 1, d["psn"]))
        else:
            dst = norm(d["dst"])
            q = cluster.by_fabric.get((dst, d["dqpn"]))
            if q is None or dst in host_ips or ip_ver(dst) != ip_ver(pinfo["ip"]):
                bad["mapped"].append("frame %d to %s pqpn %#x: not a QP of another host (out of %s)" % (
                    i + 1, d["dst"], d["dqpn"], port))
                q = None
            if norm(d["src"]) != norm(pinfo["ip"]):
                bad["isolation"].append("frame %d: source %s is not this uplink's %s" % (
                    i + 1, d["src"], pinfo["ip"]))
            if q is not None:
                if q["type"] == "ud":
                    sq = cluster.by_fabric.get((norm(d["src"]), d.get("srcqp")))
                    if sq is None or sq["tenant"] != q["tenant"] or sq["type"] != "ud":
                        bad["isolation"].append("frame %d: UD sender pqpn %s is not %s's" % (
                            i + 1, d.get("srcqp"), q["tenant"]))
                if mark is not None and owner != q["tenant"]:
                    bad["isolation"].append("frame %d: marker %r to %s's pqpn %#x" % (
                        i + 1, mark, q["tenant"], d["dqpn"]))
                if rec is not None and rec.tenant != q["tenant"]:
                    bad["isolation"].append("frame %d: %s's input #%d (%s) to %s's pqpn %#x" % (
                        i + 1, rec.tenant, rec.id + 1, rec.cls, q["tenant"], d["dqpn"]))
            if rec is None:
                bad["isolation"].append("frame %d: traces back to no input (PSN %#x)" % (i + 1, d["psn"]))
        if not ipv4_header_ok(fr, d):
            bad["wire"].append("frame %d: IPv4 header checksum" % (i + 1))
        if not udp_ok(fr, d):
            bad["wire"].append("frame %d: UDP checksum" % (i + 1))
        if icrc_ok(fr, d) == bool(rec is not None and rec.icrc_bad):
            bad["wire"].append("frame %d: ICRC %s (%s)" % (
                i + 1, "valid but the input's was corrupted" if rec is not None and rec.icrc_bad else "invalid",
                describe(fr, by_psn)))
    R.check(where, "%s: no frame of another tenant (%d frames)" % (port, len(frames)),
            not bad["isolation"], "; ".join(bad["isolation"][:6]) + (
                " (+%d more)" % (len(bad["isolation"]) - 6) if len(bad["isolation"]) > 6 else ""))
    R.check(where, "%s: no frame to an unmapped QP" % port, not bad["mapped"],
            "; ".join(bad["mapped"][:6]) + (" (+%d more)" % (len(bad["mapped"]) - 6) if len(bad["mapped"]) > 6 else ""))
    R.check(where, "%s: ICRC, IPv4 and UDP checksums" % port, not bad["wire"],
            "; ".join(bad["wire"][:6]) + (" (+%d more)" % (len(bad["wire"]) - 6) if len(bad["wire"]) > 6 else ""))


def check_run(where, h, g, res, cluster, by_psn):
    rc, summ, err, frames, reports = res
    san = [line for line in err.splitlines() if SANITIZER_RE.search(line)]
    R.check(where, "no sanitizer report", not san and not reports,
            "; ".join(san[:5]) + (" report files: %s" % reports if reports else ""))
    if not R.check(where, "switch exits 0 with a summary", rc == 0 and summ is not None,
                   "rc %s; stderr: %s" % (rc, " | ".join(err.strip().splitlines()[-5:]))):
        return
    check_counters(where, g.model.summary(), summ)
    expected = {p: {} for p in g.model.port_order}
    for rec in g.records + g.nak_records:
        if isinstance(rec.outcome, Fwd):
            expected[rec.outcome.port].setdefault(rec.outcome.data, []).append(rec)
    ports = g.model.ports
    for port in g.model.port_order:
        got = frames.get(port)
        if not R.check(where, "%s: output pcap readable" % port, got is not None):
            continue
        want = {k: list(v) for k, v in expected[port].items()}
        extra, order_bad, last = [], [], {}
        for i, fr in enumerate(got):
            lst = want.get(fr)
            if lst:
                rec = lst.pop(0)
                d = decode(fr)
                key = (rec.port, d["src"], d["dst"], d["dqpn"])
                if key in last and rec.id < last[key]:
                    order_bad.append("input #%d after #%d (%s)" % (rec.id + 1, last[key] + 1, rec.cls))
                last[key] = rec.id
            else:
                extra.append("frame %d: %s" % (i + 1, describe(fr, by_psn)))
        missing = ["input #%d on %s (%s%s)" % (r.id + 1, r.port, r.cls, ", " + r.note if r.note else "")
                   for lst in want.values() for r in lst]
        R.check(where, "%s: every frame is one the model predicted, byte for byte (%d)" % (port, len(got)),
                not extra, "%d unexpected: %s" % (len(extra), "; ".join(extra[:5])))
        R.check(where, "%s: no predicted frame missing" % port, not missing,
                "%d missing: %s" % (len(missing), "; ".join(missing[:5])))
        R.check(where, "%s: each flow in order" % port, not order_bad, "; ".join(order_bad[:5]))
        invariants(where, h, cluster, ports, port, got, by_psn)


def scapy_crosscheck(gens):
    """The fast builder against scapy, on a sample of every class's frames and predictions."""
    bad, n = [], 0
    for g in gens:
        for cls, frames in sorted(g.samples.items()):
            for f in frames:
                n += 1
                if f.build() != scapy_bytes(f):
                    bad.append("%s: input differs from scapy's" % cls)
        done = set()
        for rec in g.records + g.nak_records:
            out = rec.outcome
            if isinstance(out, Fwd) and (rec.cls, out.kind) not in done:
                done.add((rec.cls, out.kind))
                n += 1
                if out.data != scapy_bytes(out.frame):
                    bad.append("%s (%s): predicted output differs from scapy's" % (rec.cls, out.kind))
    R.check("builder", "%d sample frames built by scapy equal the suite's" % n, not bad, "; ".join(bad[:8]))


def breakdown(g, title):
    print("%s: %d frames, %d hostile" % (title, len(g.records), g.hostile))
    by = {}
    for rec in g.records:
        res = "forwarded" if isinstance(rec.outcome, Fwd) else rec.outcome.reason
        by.setdefault(rec.cls, {}).setdefault(res, 0)
        by[rec.cls][res] += 1
    for cls, res in sorted(by.items(), key=lambda kv: -sum(kv[1].values())):
        print("  %6d  %-62s %s" % (sum(res.values()), cls[:62],
                                   ", ".join("%s %d" % kv for kv in sorted(res.items(), key=lambda kv: -kv[1]))))


def main():
    ap = argparse.ArgumentParser(description="adversarial isolation suite")
    ap.add_argument("build")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("ISOLATION_SEED", "7")))
    ap.add_argument("--frames", type=int, default=10000, help="hostile frames per host (phase 1)")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if not os.access(os.path.join(build, "dataplane", "dpdk-roce-vswitch"), os.X_OK):
        print("FAIL setup: %s/dataplane/dpdk-roce-vswitch not built" % build)
        print("0 passed, 1 failed")
        return 1
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="iso-%d-" % os.getpid())
    try:
        cl = gi.cluster_config()
        cluster = Cluster(cl)
        for h in (1, 2):
            with open(os.path.join(tmp, "host%d.json" % h), "w") as f:
                json.dump(gi.host_config(h, cl), f, indent=1)
        from wire import write_pcap
        write_pcap(os.path.join(tmp, "empty.pcap"), [])
        gens = {h: gi.generate(h, cluster, a.seed, a.frames) for h in (1, 2)}
        t_gen = time.time() - t0
        by_psn = {}
        for g in gens.values():
            for rec in g.records:
                if rec.psn is not None:
                    by_psn[rec.psn] = rec
        inputs = {h: gi.write_inputs(gens[h], tmp, "p1.h%d" % h) for h in (1, 2)}

        # Phase 1: each host on its own.
        res1 = run_pair(build, tmp, "p1", inputs, {h: len(gens[h].records) for h in (1, 2)})
        for h in (1, 2):
            check_run("H%d phase 1" % h, h, gens[h], res1[h], cluster, by_psn)

        # Phase 2: each host's uplinks receive what the other's sent.
        relayed = {h: gi.relay(gens[3 - h], h, cluster) for h in (1, 2)}
        inputs2 = {h: {p: os.path.join(tmp, "p1.h%d.%s.out.pcap" % (3 - h, p)) for p in ("fabric0", "fabric6")}
                   for h in (1, 2)}
        # The frames actually sent, which the model's count equals when phase 1 passed.
        sent = {h: sum(len(res1[3 - h][3].get(p) or []) for p in ("fabric0", "fabric6")) for h in (1, 2)}
        res2 = run_pair(build, tmp, "p2", inputs2, sent)
        for h in (1, 2):
            check_run("H%d phase 2 (from H%d)" % (h, 3 - h), h, relayed[h], res2[h], cluster, by_psn)

        scapy_crosscheck(list(gens.values()) + list(relayed.values()))

        print()
        for h in (1, 2):
            breakdown(gens[h], "H%d phase 1" % h)
        for h in (1, 2):
            breakdown(relayed[h], "H%d phase 2 (frames H%d forwarded to the fabric)" % (h, 3 - h))
        total = sum(g.hostile for g in gens.values())
        print("hostile frames: %d (H1 %d, H2 %d) in phase 1, %d relayed in phase 2; frames in all: %d; "
              "seed %d" % (total, gens[1].hostile, gens[2].hostile,
                           sum(g.hostile for g in relayed.values()),
                           sum(len(g.records) for g in list(gens.values()) + list(relayed.values())), a.seed))
        for h in (1, 2):
            print("H%d phase 1 drops: %s" % (h, json.dumps({k: v for k, v in gens[h].model.drops.items() if v})))
        print("generation %.1f s" % t_gen)
    finally:
        if a.keep:
            print("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("run time %.1f s" % (time.time() - t0))
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
