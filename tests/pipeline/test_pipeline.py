#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Pipeline tests of dpdk-roce-vswitch through net_pcap virtual devices.

  /usr/bin/python3 tests/pipeline/test_pipeline.py BUILD_DIR [--only NAME[,NAME]] [--keep]

For every scenario in tests/pipeline/data/index.json (made by
gen_scenarios.py) the switch runs with one net_pcap vdev per configured port
(rx_pcap from data/, an empty pcap for idle ports, tx_pcap to a temporary
directory), --exit-when-idle 300 and --stats-json.  Then every output frame
is checked on its own terms, by tools that share no code with the switch:

  - scapy's decode of every field against the expectation (MACs, VLAN tags,
    IPs, TTL/hop limit, DSCP/ECN, IPv4 id and flags, UDP ports and checksum,
    every BTH field, DETH, FETH, RETH, AtomicETH, AETH, ImmDt, IETH, Ethernet
    padding) and the bytes, exactly;
  - the IPv4 header checksum, recomputed; a non-zero UDP checksum, recomputed;
  - the ICRC, recomputed by scapy (IPv4) or icrc_zlib() (IPv6), and by
    roce-inspect (icrc_ok); a hairpin that changes only MACs keeps its ICRC;
  - tshark's decode of the BTH, RETH/AtomicETH, DETH, IETH and addresses;
  - which port it left by and the order of frames within one flow;

NAKs of refused RC requests are expected output frames like any other
(gen_scenarios.py works them out); where the switch's per-burst re-arm
differs from the rule frame by frame, a NOTE line says so.

and the exit summary: drops by reason exactly, rx + NAKs = tx + dropped, the
forwarded/CNP/MR/NAK counters, per-port and per-tenant counters, and the mbuf
leak check (in_use_end == in_use_start, in_use_after_close == 0).

Also: startup errors (a configured device that was not given, an extra
--vdev, a semantic and a syntax error in the configuration) and a clean
SIGTERM shutdown while an infinite_rx pcap port is running.

One line per failed check, then exactly "N passed, M failed"; exit 1 on any
failure.
"""

import glob
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from pipeline_wire import (  # noqa: E402
    ROOT, fields_of, read_pcap, write_pcap, ipv4_header_ok, udp_checksum_ok,
    icrc_expected, icrc_found)

DATA = os.path.join(HERE, "data")

EAL_NO_HUGE = ["--no-huge", "-m", "256"]
SWITCH_TIMEOUT = 20


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, scenario, name, ok, detail=""):
        if ok:
            self.passed += 1
            return True
        self.failed += 1
        print("FAIL %s: %s: %s" % (scenario, name, detail))
        return False


R = Results()


# ---------------------------------------------------------------------------
# Running the switch.

def clean_prefix(prefix):
    shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    for f in glob.glob("/dev/hugepages/%smap_*" % prefix):
        try:
            os.unlink(f)
        except OSError:
            pass


def start_switch(build, prefix, vdevs, config, extra=(), eal_mem=EAL_NO_HUGE):
    cmd = [os.path.join(build, "dataplane", "dpdk-roce-vswitch"), "-l", "0", "--no-pci",
           "--file-prefix", prefix, "--log-level", "lib.eal:warning"] + list(eal_mem)
    for v in vdevs:
        cmd += ["--vdev", v]
    cmd += ["--", "--config", config] + list(extra)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, text=True), cmd


def wait_switch(p, timeout):
    """(returncode or None on timeout, stdout, stderr).  Kills only @p's own group."""
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out, err


def run_switch(build, prefix, vdevs, config, extra=(), timeout=SWITCH_TIMEOUT):
    p, cmd = start_switch(build, prefix, vdevs, config, extra)
    try:
        rc, out, err = wait_switch(p, timeout)
    finally:
        clean_prefix(prefix)
    return rc, out, err, cmd


def summary_of(stdout):
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


# ---------------------------------------------------------------------------
# Frame checks.

def field_diff(want, got):
    diffs = []
    for k in sorted(set(want) | set(got)):
        if want.get(k, "<absent>") != got.get(k, "<absent>"):
            diffs.append("%s: got %s, want %s" % (k, got.get(k, "<absent>"), want.get(k, "<absent>")))
    return diffs


def bytes_diff(got, want_hex):
    want = bytes.fromhex(want_hex)
    n = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
             min(len(got), len(want)))
    return "differs from the expected frame at byte %d (len %d, want %d): got %s, want %s" % (
        n, len(got), len(want), got[n:n + 16].hex(), want[n:n + 16].hex())


def describe(fr):
    try:
        f = fields_of(fr)
        return "len %d %s>%s %s>%s opcode 0x%02x dqpn %s psn %s" % (
            len(fr), f.get("eth.src"), f.get("eth.dst"), f.get("ip.src"), f.get("ip.dst"),
            f.get("bth.opcode", -1), f.get("bth.dqpn"), f.get("bth.psn"))
    except Exception as e:  # noqa: BLE001 (describe anything)
        return "len %d undecodable (%s): %s" % (len(fr), e, fr[:64].hex())


def pair_outputs(expected, got):
    """
    Pair output frames with expectations: exact bytes first, then, for what
    is left, the expectation with the same PSN and DestQP, else the same PSN.
    Returns (pairs [(out index, exp index, exact)], unmatched outs, unmatched exps).
    """
    free = list(range(len(expected)))
    pairs, left = [], []
    for i, fr in enumerate(got):
        h = fr.hex()
        j = next((j for j in free if expected[j]["hex"] == h), None)
        if j is None:
            left.append(i)
        else:
            free.remove(j)
            pairs.append((i, j, True))
    still = []
    for i in left:
        try:
            f = fields_of(got[i])
        except Exception:  # noqa: BLE001
            f = {}
        cands = [j for j in free if expected[j]["psn"] == f.get("bth.psn")]
        best = [j for j in cands if expected[j]["fields"].get("bth.dqpn") == f.get("bth.dqpn")]
        pick = (best or cands or [None])[0]
        if pick is None:
            still.append(i)
        else:
            free.remove(pick)
            pairs.append((i, pick, False))
    pairs.sort()
    return pairs, still, free


def inspect(build, pcap):
    """roce-inspect's per-frame objects and its summary line."""
    r = subprocess.run([os.path.join(build, "tools", "roce-inspect"), "--summary", pcap],
                       capture_output=True, text=True, timeout=30)
    objs = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    summ = objs.pop() if objs and "summary" in objs[-1] else None
    return r.returncode, objs, summ


TSHARK_FIELDS = ["frame.number", "eth.src", "eth.dst", "ieee8021ad.id", "vlan.id", "ip.src", "ip.dst", "ipv6.src",
                 "ipv6.dst", "udp.srcport", "udp.dstport", "infiniband.bth.opcode",
                 "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.reth.va",
                 "infiniband.reth.r_key", "infiniband.reth.dmalen", "infiniband.deth.srcqp",
                 "infiniband.deth.q_key", "infiniband.aeth.msn", "infiniband.atomiceth.swapdt",
                 "infiniband.atomiceth.cmpdt", "infiniband.atomicacketh.origremdt",
                 "infiniband.ieth"]
# IBTA 1.5 FLUSH and ATOMIC WRITE: tshark 4.0 names their opcodes but decodes
# none of their headers, so only the BTH and addresses are compared.
TSHARK_NO_EXT = {0x1c, 0x1d}
# XRC (0xa0-0xbf): tshark 4.0 names the opcodes and decodes the BTH but none of
# the headers after it (no XRCETH, and so no RETH, AtomicETH or AETH either);
# scapy, roce-inspect and the ICRC check those.
TSHARK_NO_EXT |= set(range(0xa0, 0xc0))


def tshark_want(f):
    """What tshark must print for a frame whose scapy fields are @f."""
    w = {"eth.src": f["eth.src"], "eth.dst": f["eth.dst"],
         # tshark calls a 0x88a8 tag ieee8021ad, a 0x8100 tag vlan.
         "ieee8021ad.id": ",".join(str(v[1]) for v in f["vlans"] if v[0] == 0x88a8),
         "vlan.id": ",".join(str(v[1]) for v in f["vlans"] if v[0] == 0x8100),
         "udp.srcport": str(f["udp.sport"]), "udp.dstport": str(f["udp.dport"]),
         "infiniband.bth.opcode": str(f["bth.opcode"]),
         "infiniband.bth.destqp": f["bth.dqpn"], "infiniband.bth.psn": str(f["bth.psn"])}
    v = "ip" if f["ip.version"] == 4 else "ipv6"
    w[v + ".src"], w[v + ".dst"] = f["ip.src"], f["ip.dst"]
    if "reth.va" in f and f["bth.opcode"] not in TSHARK_NO_EXT:
        w["infiniband.reth.va"] = int(f["reth.va"], 16)
        w["infiniband.reth.r_key"] = int(f["reth.rkey"], 16)
        w["infiniband.reth.dmalen"] = str(f["reth.dmalen"])
    if f["bth.opcode"] in TSHARK_NO_EXT:
        return w
    if "atomiceth.va" in f:  # tshark shows the AtomicETH VA and R_Key as reth.*
        w["infiniband.reth.va"] = int(f["atomiceth.va"], 16)
        w["infiniband.reth.r_key"] = int(f["atomiceth.rkey"], 16)
        w["infiniband.atomiceth.swapdt"] = str(int(f["atomiceth.swap"], 16))
        w["infiniband.atomiceth.cmpdt"] = str(int(f["atomiceth.comp"], 16))
    if "deth.srcqp" in f:
        w["infiniband.deth.srcqp"] = f["deth.srcqp"]
        w["infiniband.deth.q_key"] = int(f["deth.qkey"], 16)
    if "aeth.msn" in f:
        w["infiniband.aeth.msn"] = str(f["aeth.msn"])
    if "atomicacketh.orig" in f:
        w["infiniband.atomicacketh.origremdt"] = str(int(f["atomicacketh.orig"], 16))
    if "ieth.rkey" in f:
        w["infiniband.ieth"] = int(f["ieth.rkey"], 16)
    return w


def tshark_norm(k, v):
    """tshark's text of field @k as the type tshark_want() uses."""
    if v == "":
        return None
    if k in ("infiniband.bth.destqp", "infiniband.reth.va", "infiniband.reth.r_key",
             "infiniband.deth.srcqp", "infiniband.deth.q_key"):
        return int(v, 0)
    if k == "infiniband.ieth":  # hex digits, given twice by tshark 4.0
        return int(v.split(",")[0], 16)
    if k in ("ip.src", "ip.dst", "ipv6.src", "ipv6.dst"):
        return str(ipaddress.ip_address(v))
    return v.lower()


def tshark_check(frames):
    """frames: [(scenario, label, bytes, expected fields)]; one tshark run for all."""
    if not frames:
        return
    if not shutil.which("tshark"):
        R.check("tshark", "available", False, "tshark not found")
        return
    tmp = tempfile.mkdtemp(prefix="pipe-tshark-")
    try:
        path = os.path.join(tmp, "all.pcap")
        write_pcap(path, [fr for _, _, fr, _ in frames])
        cmd = ["tshark", "-r", path, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a",
               "-E", "aggregator=,"]
        for f in TSHARK_FIELDS:
            cmd += ["-e", f]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        rows = [line.split("|") for line in r.stdout.splitlines()]
        R.check("tshark", "decoded every frame", len(rows) == len(frames),
                "%d rows for %d frames; stderr: %s" % (len(rows), len(frames), r.stderr[-300:]))
        for (scn, label, fr, want_f), row in zip(frames, rows):
            got = {k: tshark_norm(k, v) for k, v in zip(TSHARK_FIELDS, row)}
            want = tshark_want(want_f)
            bad = []
            for k, v in want.items():
                g = got.get(k)
                if isinstance(v, str):
                    v = v.lower()
                if g != v and not (v == "" and g is None):
                    bad.append("%s: tshark %s, want %s" % (k, g, v))
            R.check(scn, "tshark " + label, not bad, "; ".join(bad))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------
# One scenario.

def run_scenario(build, doc, tmp, n, tshark_frames):
    name = doc["name"]
    cfg_path = os.path.join(ROOT, doc["config"])
    with open(cfg_path) as f:
        cfg = json.load(f)
    empty = os.path.join(tmp, "empty.pcap")
    vdevs, outs = [], {}
    for port, dev in doc["ports"].items():
        rx = os.path.join(DATA, doc["inputs"][port]["pcap"]) if port in doc["inputs"] else empty
        outs[port] = os.path.join(tmp, "%s.%s.out.pcap" % (name, port))
        vdevs.append("%s,rx_pcap=%s,tx_pcap=%s" % (dev, rx, outs[port]))
    stats = os.path.join(tmp, name + ".stats.json")
    prefix = "pipe-%d-%d" % (os.getpid(), n)
    t0 = time.time()
    rc, out, err, cmd = run_switch(build, prefix, vdevs, cfg_path,
                                   ["--exit-when-idle", "300", "--stats-json", stats]
                                   + doc["switch_args"])
    dt = time.time() - t0
    tail = " | ".join(err.strip().splitlines()[-4:])
    if not R.check(name, "exit status", rc == 0, "rc %s after %.1fs; stderr: %s" % (rc, dt, tail)):
        return
    summ = summary_of(out)
    if not R.check(name, "summary printed", summ is not None, "stdout: %r" % out[-300:]):
        return
    try:
        with open(stats) as f:
            file_summ = json.load(f)
    except (OSError, ValueError) as e:
        file_summ = e
    R.check(name, "stats-json equals the printed summary", file_summ == summ,
            "--stats-json: %s" % (file_summ if not isinstance(file_summ, dict) else "differs"))

    # -- output frames
    for port in doc["ports"]:
        expected = doc["outputs"][port]
        try:
            got = read_pcap(outs[port])
        except (OSError, ValueError) as e:
            R.check(name, "output pcap %s" % port, False, str(e))
            continue
        pairs, extra, missing = pair_outputs(expected, got)
        R.check(name, "no unexpected frames on %s" % port, not extra,
                "; ".join("frame %d: %s" % (i + 1, describe(got[i])) for i in extra))
        R.check(name, "every expected frame on %s" % port, not missing,
                "; ".join("missing: %s input #%d (%s) psn %d" % (
                    expected[j]["from"], expected[j]["in_index"] + 1, expected[j]["note"],
                    expected[j]["psn"]) for j in missing))
        # Order: the frames of one flow (one QP, from one port) leave in the
        # order they came.
        last, bad = {}, []
        for i, j, _ in pairs:
            e = expected[j]
            key = (e["from"], e["flow"])
            if key in last and e["in_index"] < last[key]:
                bad.append("input #%d of %s (%s) after #%d" % (e["in_index"] + 1, e["from"],
                                                              e["flow"], last[key] + 1))
            last[key] = e["in_index"]
        R.check(name, "order on %s" % port, not bad, "; ".join(bad))

        rrc, objs, isumm = inspect(build, outs[port])
        R.check(name, "roce-inspect summary %s" % port,
                rrc == 0 and isumm is not None and isumm["summary"]["frames"] == len(expected)
                and isumm["summary"]["icrc_bad"] == 0 and not isumm["summary"]["errors"]
                and isumm["summary"]["ok"] == len(got),
                "rc %d, %s (want %d frames, all ok, no bad ICRC)" % (rrc, isumm, len(expected)))
        exp_of = {i: (expected[j], exact) for i, j, exact in pairs}
        for i, fr in enumerate(got):
            e, exact = exp_of.get(i, (None, False))
            label = "%s frame %d (%s)" % (port, i + 1,
                                          "%s #%d: %s" % (e["from"], e["in_index"] + 1, e["note"])
                                          if e else "unexpected")
            try:
                f = fields_of(fr)
            except Exception as ex:  # noqa: BLE001
                R.check(name, "decode " + label, False, "scapy: %s" % ex)
                continue
            if e:
                R.check(name, "fields " + label, not field_diff(e["fields"], f),
                        "; ".join(field_diff(e["fields"], f)))
                R.check(name, "bytes " + label, exact, "" if exact else bytes_diff(fr, e["hex"]))
                if e["icrc_unchanged"]:
                    R.check(name, "ICRC unchanged " + label,
                            "0x%08x" % icrc_found(fr) == e["icrc_in"],
                            "ICRC 0x%08x, arrived as %s" % (icrc_found(fr), e["icrc_in"]))
            if f.get("ip.version") == 4:
                R.check(name, "IPv4 checksum " + label, ipv4_header_ok(fr) is True,
                        "header checksum does not verify")
            if f.get("udp.chksum"):
                R.check(name, "UDP checksum " + label, udp_checksum_ok(fr) is True,
                        "non-zero UDP checksum 0x%04x does not verify" % f["udp.chksum"])
            want = icrc_expected(fr)
            R.check(name, "ICRC " + label, want == icrc_found(fr),
                    "ICRC 0x%08x, %s computes 0x%08x" % (
                        icrc_found(fr), "scapy" if f.get("ip.version") == 4 else "icrc_zlib",
                        want if want is not None else -1))
            o = objs[i] if i < len(objs) else {}
            bad = []
            if not o.get("ok") or not o.get("icrc_ok"):
                bad.append("ok %s icrc_ok %s error %s" % (o.get("ok"), o.get("icrc_ok"), o.get("error")))
            if f.get("ip.version") == 4 and not o.get("ipv4_csum_ok"):
                bad.append("ipv4_csum_ok %s" % o.get("ipv4_csum_ok"))
            if e:
                b = o.get("bth", {})
                for k in ("opcode", "dqpn", "psn"):
                    if b.get(k) != e["fields"]["bth." + k]:
                        bad.append("bth.%s %s, want %s" % (k, b.get(k), e["fields"]["bth." + k]))
                for h, k in (("reth", "va"), ("reth", "rkey"), ("deth", "srcqp"), ("ieth", "rkey"),
                             ("feth", "sel"), ("feth", "plt"), ("xrceth", "xrcsrq")):
                    if h + "." + k in e["fields"]:
                        g = o.get(h, {}).get(k)
                        w = e["fields"][h + "." + k]
                        if (int(g, 16) if isinstance(g, str) else g) != (
                                int(w, 16) if isinstance(w, str) else w):
                            bad.append("%s.%s %s, want %s" % (h, k, g, w))
                # Ethernet padding: roce-inspect sees as much as scapy does.
                if o.get("l2_pad", 0) != e["fields"].get("l2pad", 0):
                    bad.append("l2_pad %s, want %s" % (o.get("l2_pad"), e["fields"].get("l2pad", 0)))
            R.check(name, "roce-inspect " + label, not bad, "; ".join(bad))
            if e:
                tshark_frames.append((name, label, fr, e["fields"]))
        if doc.get("isolation"):
            isolation_check(name, doc["isolation"], port, got)

    # NAKs the switch gives otherwise than the rule frame by frame (its
    # re-arms and MSNs take effect per rx burst): expected as the switch
    # does it, and shown on every run (gen_scenarios.py, nak_run()).
    for d in doc.get("nak_rule_deviations", []):
        print("NOTE %s: %s" % (name, d))

    # -- counters
    c = doc["counters"]
    for k in ("rx_packets", "tx_packets", "dropped", "forwarded", "cnp_forwarded", "mr_translated",
              "naks_refused", "naks_sent"):
        R.check(name, "counter " + k, summ.get(k) == c[k], "got %s, want %s" % (summ.get(k), c[k]))
    d = summ.get("drops", {})
    bad = ["%s: got %s, want %s" % (r, d.get(r, "<absent>"), c["drops"].get(r, "<absent>"))
           for r in sorted(set(d) | set(c["drops"])) if d.get(r) != c["drops"].get(r)]
    R.check(name, "drops by reason", not bad, "; ".join(bad))
    # NAKs are the switch's own frames: sent, not forwarded.
    naks = (summ.get("naks_refused") or 0) + (summ.get("naks_sent") or 0)
    R.check(name, "rx + NAKs = tx + dropped",
            (summ.get("rx_packets") or 0) + naks == (summ.get("tx_packets") or 0) + (summ.get("dropped") or 0),
            "rx %s, NAKs %s, tx %s, dropped %s" % (summ.get("rx_packets"), naks, summ.get("tx_packets"),
                                                   summ.get("dropped")))
    R.check(name, "dropped = sum of drops", summ.get("dropped") == sum(d.values()),
            "dropped %s, sum %s" % (summ.get("dropped"), sum(d.values())))
    bad = []
    for port, want in c["ports"].items():
        got = summ.get("ports", {}).get(port, {})
        bad += ["%s.%s: got %s, want %s" % (port, k, got.get(k), v) for k, v in want.items()
                if got.get(k) != v]
    R.check(name, "port counters", not bad and set(summ.get("ports", {})) == set(c["ports"]),
            "; ".join(bad) or "ports %s" % sorted(summ.get("ports", {})))
    bad = []
    for t in cfg["tenants"]:
        want = dict(c["tenants"][t["name"]])
        want["qps"] = sum(1 for q in cfg["qps"] if q["tenant"] == t["name"])
        want["max_qps"] = t.get("max_qps", 65536)
        got = summ.get("tenants", {}).get(t["name"], {})
        bad += ["%s.%s: got %s, want %s" % (t["name"], k, got.get(k), v) for k, v in want.items()
                if got.get(k) != v]
    R.check(name, "tenant counters", not bad, "; ".join(bad))
    fwd = summ.get("forwarded", {})
    R.check(name, "forwarded + NAKs = tx", sum(fwd.values()) + naks == summ.get("tx_packets"),
            "egress + ingress + hairpin = %d, NAKs %d, tx %s" % (sum(fwd.values()), naks,
                                                                summ.get("tx_packets")))
    mb = summ.get("mbufs", {})
    R.check(name, "mbuf leak: in_use_end == in_use_start",
            mb.get("in_use_end") is not None and mb.get("in_use_end") == mb.get("in_use_start"),
            "mbufs %s" % mb)
    R.check(name, "mbuf leak: in_use_after_close == 0", mb.get("in_use_after_close") == 0,
            "mbufs %s" % mb)


def isolation_check(name, iso, port, frames):
    """Nothing of one tenant leaves by another's port or with another's pqpn."""
    markers = {v.encode(): t for t, v in iso["markers"].items()}
    bad = []
    for i, fr in enumerate(frames):
        f = fields_of(fr)
        body = fr[len(fr) - 4 - f.get("payload.len", 0):len(fr) - 4]
        owner = markers.get(body[:4])
        if owner is None:
            bad.append("frame %d has no tenant marker" % (i + 1))
            continue
        if port == iso["uplink"]:
            for t, qpns in iso["fabric_dqpns"].items():
                if t != owner and f.get("bth.dqpn") in qpns:
                    bad.append("frame %d: %s's frame carries %s's pqpn %d" % (
                        i + 1, owner, t, f["bth.dqpn"]))
            if f.get("bth.dqpn") not in iso["fabric_dqpns"][owner]:
                bad.append("frame %d: %s's frame with DestQP %s" % (i + 1, owner, f.get("bth.dqpn")))
        elif iso["tenant_ports"].get(port) != owner:
            bad.append("frame %d: %s's frame left by %s" % (i + 1, owner, port))
    R.check(name, "isolation on %s" % port, not bad, "; ".join(bad))


# ---------------------------------------------------------------------------
# Startup errors and shutdown.

def startup_errors(build, tmp):
    base = os.path.join(ROOT, "examples", "two-tenants.json")
    with open(base) as f:
        cfg = json.load(f)
    empty = os.path.join(tmp, "empty.pcap")

    def vdev(dev):
        return "%s,rx_pcap=%s,tx_pcap=%s" % (dev, empty, os.path.join(tmp, dev + ".err.pcap"))

    scn = "startup"
    # A configured device that was not given.
    c = json.loads(json.dumps(cfg))
    c["ports"][2]["device"] = "net_pcap9"
    path = os.path.join(tmp, "missing-device.json")
    with open(path, "w") as f:
        json.dump(c, f, indent=1)
    rc, out, err, _ = run_switch(build, "pipe-%d-e1" % os.getpid(),
                                 [vdev("net_pcap0"), vdev("net_pcap1")], path)
    R.check(scn, "device in the config but not given: exits non-zero", rc not in (0, None),
            "rc %s" % rc)
    R.check(scn, "device in the config but not given: names net_pcap9", "net_pcap9" in err,
            "stderr: %s" % err.strip()[-300:])
    R.check(scn, "device in the config but not given: no summary", summary_of(out) is None,
            "stdout: %s" % out[-200:])
    # An extra device.
    rc, out, err, _ = run_switch(build, "pipe-%d-e2" % os.getpid(),
                                 [vdev("net_pcap0"), vdev("net_pcap1"), vdev("net_pcap2"),
                                  vdev("net_pcap3")], base)
    R.check(scn, "extra --vdev: exits non-zero", rc not in (0, None), "rc %s" % rc)
    R.check(scn, "extra --vdev: names net_pcap3", "net_pcap3" in err,
            "stderr: %s" % err.strip()[-300:])
    # A semantic error: qps[4] takes the pqpn of qps[0] on the same host.
    c = json.loads(json.dumps(cfg))
    c["qps"][4]["pqpn"] = c["qps"][0]["pqpn"]
    path = os.path.join(tmp, "semantic.json")
    with open(path, "w") as f:
        json.dump(c, f, indent=1)
    devs = [vdev("net_pcap0"), vdev("net_pcap1"), vdev("net_pcap2")]
    rc, out, err, _ = run_switch(build, "pipe-%d-e3" % os.getpid(), devs, path)
    R.check(scn, "semantic error: exits non-zero", rc not in (0, None), "rc %s" % rc)
    R.check(scn, "semantic error: prints the file and the JSON path qps[4].pqpn",
            "qps[4].pqpn" in err and path in err, "stderr: %s" % err.strip()[-300:])
    # A syntax error: file:line:col.
    path = os.path.join(tmp, "syntax.json")
    with open(base) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace('"version": 1,', '"version": 1', 1))
    rc, out, err, _ = run_switch(build, "pipe-%d-e4" % os.getpid(), devs, path)
    R.check(scn, "syntax error: exits non-zero", rc not in (0, None), "rc %s" % rc)
    R.check(scn, "syntax error: prints file:line:col",
            re.search(re.escape(path) + r":\d+:\d+", err) is not None,
            "stderr: %s" % err.strip()[-300:])


def hugepages_usable():
    if not os.path.ismount("/dev/hugepages"):
        return False
    try:
        with open("/proc/meminfo") as f:
            info = f.read()
        free = int(re.search(r"HugePages_Free:\s+(\d+)", info).group(1))
        size = int(re.search(r"Hugepagesize:\s+(\d+) kB", info).group(1))
    except (OSError, AttributeError):
        return False
    return free * size >= 256 * 1024


def shutdown_check(build, tmp):
    scn = "shutdown"
    empty = os.path.join(tmp, "empty.pcap")
    cfg = os.path.join(ROOT, "examples", "two-tenants.json")
    src = os.path.join(DATA, "rc_send.vm-blue-1.pcap")
    src_in = os.path.join(DATA, "rc_send.fabric0.pcap")
    vdevs = ["net_pcap0,rx_pcap=%s,infinite_rx=1,tx_pcap=/dev/null" % src_in,
             "net_pcap1,rx_pcap=%s,infinite_rx=1" % src,
             "net_pcap2,rx_pcap=%s,tx_pcap=/dev/null" % empty]
    huge = hugepages_usable()
    prefix = "pipe-%d-term" % os.getpid()
    p, _ = start_switch(build, prefix, vdevs, cfg, eal_mem=[] if huge else EAL_NO_HUGE)
    try:
        time.sleep(2)
        alive = p.poll() is None
        R.check(scn, "running after 2 s with infinite_rx ports", alive, "exited rc %s" % p.returncode)
        files_live = glob.glob("/dev/hugepages/%smap_*" % prefix)
        if huge:
            R.check(scn, "hugepage files exist while running", bool(files_live),
                    "none under /dev/hugepages for %s" % prefix)
        t0 = time.time()
        if alive:
            p.send_signal(signal.SIGTERM)
        rc, out, err = wait_switch(p, 5)
        dt = time.time() - t0
        R.check(scn, "SIGTERM: exits 0 within 5 s", rc == 0,
                "rc %s after %.1f s; stderr: %s" % (rc, dt, " | ".join(err.strip().splitlines()[-3:])))
        summ = summary_of(out)
        R.check(scn, "SIGTERM: prints the summary", summ is not None, "stdout: %r" % out[-200:])
        if summ:
            R.check(scn, "SIGTERM: forwarded traffic", summ["rx_packets"] > 0 and summ["tx_packets"] > 0,
                    "rx %s tx %s" % (summ["rx_packets"], summ["tx_packets"]))
            R.check(scn, "SIGTERM: rx = tx + dropped",
                    summ["rx_packets"] == summ["tx_packets"] + summ["dropped"],
                    "rx %s tx %s dropped %s" % (summ["rx_packets"], summ["tx_packets"], summ["dropped"]))
            mb = summ.get("mbufs", {})
            R.check(scn, "SIGTERM: in_use_end == in_use_start",
                    mb.get("in_use_end") == mb.get("in_use_start"), "mbufs %s" % mb)
            R.check(scn, "SIGTERM: in_use_after_close == 0", mb.get("in_use_after_close") == 0,
                    "mbufs %s" % mb)
        left = glob.glob("/dev/hugepages/%s*" % prefix)
        R.check(scn, "no hugepage files left (%s)" % ("hugepages" if huge else "--no-huge"),
                not left, "left: %s" % left)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
        clean_prefix(prefix)


# ---------------------------------------------------------------------------

def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    build = os.path.abspath(args[0])
    only, keep = None, False
    i = 1
    while i < len(args):
        if args[i] == "--only":
            only = set(args[i + 1].split(","))
            i += 1
        elif args[i] == "--keep":
            keep = True
        i += 1
    for exe in ("dataplane/dpdk-roce-vswitch", "tools/roce-inspect"):
        if not os.access(os.path.join(build, exe), os.X_OK):
            print("FAIL setup: %s not built in %s" % (exe, build))
            print("0 passed, 1 failed")
            return 1
    with open(os.path.join(DATA, "index.json")) as f:
        index = json.load(f)
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="pipe-%d-" % os.getpid())
    tshark_frames = []
    try:
        write_pcap(os.path.join(tmp, "empty.pcap"), [])
        for n, name in enumerate(index["scenarios"]):
            if only and name not in only:
                continue
            with open(os.path.join(DATA, name + ".json")) as f:
                doc = json.load(f)
            run_scenario(build, doc, tmp, n, tshark_frames)
        tshark_check(tshark_frames)
        if not only or "startup" in only:
            startup_errors(build, tmp)
        if not only or "shutdown" in only:
            shutdown_check(build, tmp)
    finally:
        if keep:
            print("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("run time %.1f s" % (time.time() - t0))
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
