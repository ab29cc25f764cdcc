#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
The wire oracle of tests/interop/test_testpmd.sh: given the frames a tenant
sent into the switch and what came out of the switch's ports, check with
scapy that every frame was renamed as the configuration says.

  check_frames.py --config CFG --port NAME --sent SENT.pcap
                  --out PORT=FILE.pcap [--out PORT=FILE.pcap ...]
                  [--inspect ROCE_INSPECT]

The model of the rename is written here from DESIGN.md ("Packet paths",
"Addresses on the wire"), not from the switch's code: for each sent frame it
finds the connection in the JSON configuration, predicts the output port and
builds the expected frame with scapy (MACs, IPs, DestQP, RETH translation on
the owner's side, IPv4 checksum, UDP checksum when non-zero, and the ICRC
scapy computes).  Each output file must hold exactly the expected frames, in
the order they were sent.  Every output frame must also carry an ICRC that
icrc_zlib() (tests/gen/roce_layers.py) and, with --inspect, roce-inspect
accept.

Prints one "EXPECT PORT=N ... translated=N" line (frames predicted per output
port, RETH/AtomicETH translations predicted), one "PASS ..." or
"FAIL ...: why" line per check (and "SKIP ..." for a port that frames go to
but that was not captured), and exits non-zero if any check failed.
"""

import argparse
import ipaddress
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))

from roce_layers import (  # noqa: E402
    BTH, RETH, AtomicETH, OPCODES, icrc_zlib, icrc_found)
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import rdpcap  # noqa: E402

results = {"pass": 0, "fail": 0}


def check(ok, what, why=""):
    if ok:
        results["pass"] += 1
        print("PASS %s" % what)
    else:
        results["fail"] += 1
        print("FAIL %s: %s" % (what, why))
    return ok


def num(v):
    return int(v, 0) if isinstance(v, str) else int(v)


def ip_norm(s):
    return str(ipaddress.ip_address(s))


class Topology:
    """The parts of a version 1 configuration that decide a rename."""

    def __init__(self, path):
        self.translated = 0
        with open(path) as f:
            c = json.load(f)
        self.ports = {p["name"]: p for p in c["ports"]}
        self.host_ips = {ip_norm(p["ip"]) for p in c["ports"] if p["role"] == "uplink"}
        self.uplinks = [p for p in c["ports"] if p["role"] == "uplink"]
        self.endpoints = {(e["tenant"], ip_norm(e["vip"])): e for e in c["endpoints"]}
        self.qps = {(q["tenant"], ip_norm(q["vip"]), num(q["vqpn"])): q for q in c["qps"]}
        self.neighbors = {ip_norm(n["ip"]): n["mac"] for n in c.get("neighbors", [])}
        self.mrs = c.get("mrs", [])

    def local(self, ep):
        return ip_norm(ep["host"]) in self.host_ips

    def predict(self, port_name, frame):
        """(output port name, expected frame bytes) for a frame sent on a tenant port."""
        tenant = self.ports[port_name]["tenant"]
        p = Ether(frame)
        src, dst, dqpn = ip_norm(p[IP].src), ip_norm(p[IP].dst), p[BTH].dqpn
        r = self.qps[(tenant, dst, dqpn)]
        l_ = self.qps[(tenant, src, num(r["peer"]["vqpn"]))]
        assert ip_norm(l_["peer"]["vip"]) == dst and self.local(self.endpoints[(tenant, src)])
        re_, le = self.endpoints[(tenant, dst)], self.endpoints[(tenant, src)]
        udp_zero = p[UDP].chksum == 0
        if self.local(re_):
            # Hairpin: the receiver's virtual view, through its own port.
            out = re_["port"]
            p.dst, p.src = re_["mac"], self.ports[out]["mac"]
            flags = OPCODES[p[BTH].opcode][0]
            first = flags.endswith(("_FIRST", "_ONLY")) or "ONLY_WITH" in flags
            if first and (RETH in p or AtomicETH in p):
                self.translate(p, tenant, dst)
        else:
            host = ip_norm(re_["host"])
            up = next(u for u in self.uplinks
                      if ipaddress.ip_address(u["ip"]).version == ipaddress.ip_address(host).version)
            out = up["name"]
            p.dst = self.neighbors.get(host, up.get("gateway_mac"))
            p.src = up["mac"]
            p[IP].src, p[IP].dst = ip_norm(le["host"]), host
            p[BTH].dqpn = num(r["pqpn"])
        del p[IP].chksum
        if not udp_zero:
            del p[UDP].chksum
        p[BTH].icrc = None
        return out, bytes(p)

    def translate(self, p, tenant, owner_vip):
        """Advertised to target memory, as the owner's host does (DESIGN.md "mrs")."""
        h = p[RETH] if RETH in p else p[AtomicETH]
        for m in self.mrs:
            if m["tenant"] != tenant or ip_norm(m["vip"]) != owner_vip or num(m["rkey"]) != h.rkey:
                continue
            off = h.va - num(m["addr"])
            if 0 <= off < num(m["length"]):
                h.rkey, h.va = num(m["target_rkey"]), num(m["target_addr"]) + off
                self.translated += 1
            return


def describe(b):
    p = Ether(b)
    s = "%s>%s %s>%s" % (p.src, p.dst, p[IP].src, p[IP].dst) if IP in p else p.summary()
    if BTH in p:
        s += " op=0x%02x dqpn=%d psn=%d" % (p[BTH].opcode, p[BTH].dqpn, p[BTH].psn)
    if RETH in p:
        s += " reth=(va=0x%x rkey=0x%x)" % (p[RETH].va, p[RETH].rkey)
    return s


def raw_load(p):
    """The payload after the extension headers, without the ICRC."""
    return bytes(p[Raw].load) if Raw in p else b""


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--port", required=True, help="the tenant port the frames were sent on")
    ap.add_argument("--sent", required=True)
    ap.add_argument("--out", action="append", default=[], help="PORT=FILE: what left that port")
    ap.add_argument("--inspect", help="roce-inspect binary")
    a = ap.parse_args()

    topo = Topology(a.config)
    sent = [bytes(p) for p in rdpcap(a.sent)]
    expected = {}
    for fr in sent:
        port, exp = topo.predict(a.port, fr)
        expected.setdefault(port, []).append((fr, exp))
    outs = dict(o.split("=", 1) for o in a.out)
    # What the switch's counters should say (read by the shell scripts).
    print("EXPECT %s translated=%d" % (" ".join("%s=%d" % (p, len(v)) for p, v in sorted(expected.items())),
                                       topo.translated))
    for port in expected:
        if port not in outs:
            print("SKIP %s: %d frames expected there, not captured (no --out %s=FILE)"
                  % (port, len(expected[port]), port))

    for port, path in outs.items():
        got = [bytes(p) for p in rdpcap(path)] if os.path.getsize(path) > 24 else []
        exp = expected.get(port, [])
        check(len(got) == len(exp), "%s: %d frames out" % (port, len(exp)), "got %d" % len(got))
        if not got and not exp:
            continue
        bad = []
        for i, ((fr, e), g) in enumerate(zip(exp, got)):
            if g != e:
                bad.append("frame %d: expected [%s] got [%s], first differing byte %d" % (
                    i + 1, describe(e), describe(g), first_diff(e, g)))
        check(not bad, "%s: every frame renamed as predicted (MACs, IPs, DestQP, RETH, checksums, ICRC)"
              % port, "; ".join(bad[:3]) + (" (%d in all)" % len(bad) if len(bad) > 3 else ""))

        # The same, field by field, for a readable verdict.
        fields = {"MACs": 0, "IPs": 0, "DestQP": 0, "TOS, TTL, IP id and flags, UDP sport, PSN, opcode, payload": 0}
        for (fr, e), g in zip(exp, got):
            pe, pg, ps = Ether(e), Ether(g), Ether(fr)
            if (pe.src, pe.dst) != (pg.src, pg.dst):
                fields["MACs"] += 1
            if IP in pg and (pe[IP].src, pe[IP].dst) != (pg[IP].src, pg[IP].dst):
                fields["IPs"] += 1
            if BTH in pg and pe[BTH].dqpn != pg[BTH].dqpn:
                fields["DestQP"] += 1
            if IP in pg and BTH in pg and (
                    (ps[IP].tos, ps[IP].ttl, ps[IP].id, ps[IP].flags, ps[UDP].sport, ps[BTH].psn,
                     ps[BTH].opcode, raw_load(ps)) !=
                    (pg[IP].tos, pg[IP].ttl, pg[IP].id, pg[IP].flags, pg[UDP].sport, pg[BTH].psn,
                     pg[BTH].opcode, raw_load(pg))):
                fields["TOS, TTL, IP id and flags, UDP sport, PSN, opcode, payload"] += 1
        for k, n in fields.items():
            check(n == 0, "%s: %s as predicted on every frame" % (port, k), "%d frames differ" % n)

        icrc_bad = [i + 1 for i, g in enumerate(got) if icrc_zlib(g) != icrc_found(g)]
        check(not icrc_bad, "%s: ICRC recomputed correctly (zlib) on every frame" % port,
              "frames %s" % icrc_bad[:10])
        scapy_bad = []
        for i, g in enumerate(got):
            p = Ether(g)
            p[BTH].icrc = None
            if bytes(p)[-4:] != g[-4:]:
                scapy_bad.append(i + 1)
        check(not scapy_bad, "%s: ICRC equals scapy's on every frame" % port, "frames %s" % scapy_bad[:10])

        if a.inspect and got:
            r = subprocess.run([a.inspect, path], capture_output=True, text=True, timeout=30)
            objs = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
            notok = [o["frame"] for o in objs
                     if not (o.get("ok") and o.get("icrc_ok") and o.get("ipv4_csum_ok", True))]
            check(r.returncode == 0 and len(objs) == len(got) and not notok,
                  "%s: roce-inspect says ok, icrc_ok and ipv4_csum_ok for all %d frames" % (port, len(got)),
                  "rc %d, %d objects, bad frames %s" % (r.returncode, len(objs), notok[:10]))

    print("%d passed, %d failed" % (results["pass"], results["fail"]))
    return 1 if results["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
