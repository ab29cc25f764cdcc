#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
The notification point for UD senders and for translated connections.

UD: a CE-marked UD frame from the fabric is
answered with a CNP to its sender, as an RNIC answers one (IBTA Annex
A17.9.2, rxe): DestQP the sending QP, which for UD is the DETH's source
QPN as the fabric carries it (the sender's pqpn), from the address the
frame came to, to the sender's host, with a valid ICRC; paced per sender QP.

Run 1, IPv4 (examples/two-tenants.json plus blue UD QPs: 40 here, pqpn
4200; 41 and 42 on host 10.0.0.2, pqpns 8300 and 8301), CNP window 0: three
CE-marked UD SEND Only frames from QP 41 (untagged, one 802.1Q tag, QinQ)
and one from QP 42 give four CNPs, each with the marked frame's tags, to
DestQP 8300 or 8301.  A frame that is not CE-marked gives none.

Run 2, IPv4, a 1 s window (suppress): three marked frames from QP 41 and
two from QP 42 give one CNP per sender, to each its own.

Run 3, IPv6 (examples/ipv6.json, green UD 40 pqpn 4098 and 41 pqpn 8194 on
fd00::2): one CNP over IPv6, fd00::1 -> fd00::2, DestQP 8194; its ICRC is
checked with the project's zlib ICRC (scapy 2.5 has none for IPv6).

Runs 4 and 5, translated connections: IPv4 vips on IPv6 hosts
(examples/pipeline-xlate-v4v6.json) and IPv6 vips on IPv4 hosts
(pipeline-xlate-v6v4.json), DCQCN on with ce_to_tenant "keep".  A CE-marked
RC SEND Only from the fabric, in the hosts' version, gets a CNP in the
hosts' version to the sender's host and pqpn 8193; the frame reaches the
tenant in the vips' version still marked CE (the mark crosses the
translation), and an unmarked ECT(0) one stays ECT(0).

The frames are built by scapy; the CNPs are decoded by scapy (opcode 0x81,
BECN, DestQP, addresses, tags) and their ICRC checked by scapy (IPv4) and by
tests/gen/roce_layers.py icrc_zlib (both versions); tshark decodes the
DestQP of every CNP too.

Usage: /usr/bin/python3 tests/cnp/test_cnp_np.py BUILD_DIR
Ends with "N passed, M failed".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from roce_checks import Checks  # noqa: E402
from roce_layers import BTH, DETH, icrc_found, icrc_scapy, icrc_zlib, with_icrc  # noqa: E402
from roce_switch import start_switch, stop_switch  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import rdpcap, wrpcap  # noqa: E402
from test_cnp_tags import TAGS, tags_of  # noqa: E402  (the tag sets and their reader, shared)

check = Checks()
UD_SEND_ONLY = 0x64


def ud_frame(tags, src, dst, dqpn, srcqp, psn, ce=True, v6=False):
    """A UD SEND Only from the fabric as an RNIC sends it (ECT(0), or CE when marked), ICRC computed."""
    p = Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")
    for i, (tpid, vid) in enumerate(tags):
        p.type = tpid if i == 0 else p.type
        p = p / (Dot1AD(vlan=vid) if tpid == 0x88a8 else Dot1Q(vlan=vid))
    ecn = 3 if ce else 2
    ip = IPv6(src=src, dst=dst, tc=ecn, hlim=64) if v6 else IP(src=src, dst=dst, tos=ecn, flags="DF", ttl=64)
    p = (p / ip / UDP(sport=0xc321, dport=4791, chksum=0) /
         BTH(opcode=UD_SEND_ONLY, dqpn=dqpn, psn=psn, pkey=0xffff) / DETH(qkey=0x1111, srcqp=srcqp) /
         Raw(b"ud" * 16) / Raw(b"\0\0\0\0"))
    return with_icrc(bytes(p))


def blue_ud(doc):
    doc["qps"] += [
        {"tenant": "blue", "vip": "192.168.1.10", "vqpn": 40, "pqpn": 4200, "type": "ud"},
        {"tenant": "blue", "vip": "192.168.1.20", "vqpn": 41, "pqpn": 8300, "type": "ud"},
        {"tenant": "blue", "vip": "192.168.1.20", "vqpn": 42, "pqpn": 8301, "type": "ud"},
    ]
    return doc


def run(build, work, name, doc, frames, tenant_ports):
    cfg = os.path.join(work, name + ".json")
    json.dump(doc, open(cfg, "w"))
    inp = os.path.join(work, name + ".in.pcap")
    wrpcap(inp, [Ether(f) for f in frames])
    empty = os.path.join(work, "empty.pcap")
    wrpcap(empty, [])
    out = os.path.join(work, name + ".out.pcap")
    prefix = "v46-cnp-ud-%s-%d" % (name, os.getpid())
    vdevs = ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, out)]
    vdevs += ["net_pcap%d,rx_pcap=%s,tx_pcap=%s" % (i + 1, empty, os.path.join(work, "%s.t%d.pcap" % (name, i)))
              for i in range(tenant_ports)]
    proc = start_switch(build, prefix, vdevs, cfg, "0", ["--exit-when-idle", "300"])
    proc.wait(timeout=60)
    rc, summary, err = stop_switch(proc, prefix)
    check(rc == 0 and summary is not None, "(%s) the switch runs and exits with a summary" % name, err[-400:])
    cnps = [Ether(bytes(f)) for f in rdpcap(out)] if os.path.exists(out) else []
    delivered = rdpcap(os.path.join(work, "%s.t0.pcap" % name))
    return summary, cnps, delivered, out


def tshark_dqps(pcap):
    if not shutil.which("tshark"):
        return None
    r = subprocess.run(["tshark", "-r", pcap, "-T", "fields", "-e", "infiniband.bth.destqp"],
                       capture_output=True, text=True, timeout=60)
    return [int(x, 16) if x.startswith("0x") else int(x) for x in r.stdout.split()]


def main():
    build = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="roce-cnp-ud-")
    base = json.load(open(os.path.join(ROOT, "examples", "two-tenants.json")))

    # Run 1: window 0, every mark answered; tags kept; per sender QP.
    doc = blue_ud(json.loads(json.dumps(base)))
    doc["dcqcn"]["params"] = {"min_time_between_cnps": 0}
    frames = [ud_frame(t, "10.0.0.2", "10.0.0.1", 4200, 8300, 100 + i) for i, t in enumerate(TAGS.values())]
    frames += [ud_frame([], "10.0.0.2", "10.0.0.1", 4200, 8301, 200),
               ud_frame([], "10.0.0.2", "10.0.0.1", 4200, 8300, 300, ce=False)]
    summary, cnps, delivered, out = run(build, work, "v4", doc, frames, 2)
    check(summary is not None and summary["cnp_sent"] == 4, "(v4) four CNPs sent by the notification point",
          summary and summary["cnp_sent"])
    check(len(cnps) == 4, "(v4) four CNPs on the fabric, none for the unmarked frame", len(cnps))
    want = [(n, [vid for _, vid in t], 8300) for n, t in TAGS.items()] + [("QP 42", [], 8301)]
    for (name, tags, dqpn), p in zip(want, cnps):
        raw = bytes(p)
        check(tags_of(p) == tags, "(v4 %s) the CNP carries the marked frame's tags" % name, tags_of(p))
        check(BTH in p and p[BTH].opcode == 0x81 and p[BTH].becn == 1 and p[BTH].dqpn == dqpn,
              "(v4 %s) BTH: CNP, BECN, DestQP %d (the sender's DETH source QP)" % (name, dqpn),
              BTH in p and p[BTH].summary())
        check(IP in p and (p[IP].src, p[IP].dst) == ("10.0.0.1", "10.0.0.2") and p[UDP].dport == 4791,
              "(v4 %s) from this host to the sender's host" % name, IP in p and p[IP].summary())
        check(icrc_scapy(raw) == icrc_found(raw) == icrc_zlib(raw), "(v4 %s) ICRC valid (scapy, zlib)" % name)
    check(tshark_dqps(out) in (None, [8300, 8300, 8300, 8301]), "(v4) tshark decodes the CNPs' DestQPs",
          tshark_dqps(out))
    check(len(delivered) == 5 and all(BTH in Ether(bytes(f)) and Ether(bytes(f))[BTH].dqpn == 40 and
                                      icrc_zlib(bytes(f)) == icrc_found(bytes(f)) for f in delivered),
          "(v4) the five UD frames reach blue's QP 40, ICRC valid", len(delivered))

    # Run 2: a 1 s window, suppress: one CNP per sender QP.
    doc = blue_ud(json.loads(json.dumps(base)))
    doc["dcqcn"]["params"] = {"min_time_between_cnps": 1000000, "cnp_mode": "suppress"}
    frames = [ud_frame([], "10.0.0.2", "10.0.0.1", 4200, 8300 + (i % 2), 400 + i) for i in range(5)]
    summary, cnps, _, _ = run(build, work, "window", doc, frames, 2)
    check(summary is not None and summary["cnp_sent"] == 2, "(window) one CNP per sender QP in the window",
          summary and summary["cnp_sent"])
    check(sorted(p[BTH].dqpn for p in cnps if BTH in p) == [8300, 8301],
          "(window) one CNP to each sender, 8300 and 8301", [p.summary() for p in cnps])

    # Run 3: IPv6 hosts.
    doc = json.load(open(os.path.join(ROOT, "examples", "ipv6.json")))
    doc["dcqcn"]["params"] = {"min_time_between_cnps": 0}
    frames = [ud_frame([], "fd00::2", "fd00::1", 4098, 8194, 500, v6=True)]
    summary, cnps, delivered, _ = run(build, work, "v6", doc, frames, 1)
    check(len(cnps) == 1, "(v6) one CNP on the fabric", len(cnps))
    for p in cnps:
        raw = bytes(p)
        check(IPv6 in p and (p[IPv6].src, p[IPv6].dst) == ("fd00::1", "fd00::2") and BTH in p and
              p[BTH].opcode == 0x81 and p[BTH].dqpn == 8194,
              "(v6) CNP over IPv6 from fd00::1 to fd00::2, DestQP 8194", p.summary())
        check(icrc_zlib(raw) == icrc_found(raw), "(v6) ICRC valid (zlib)")
    check(len(delivered) == 1, "(v6) the UD frame reaches green's QP 40", len(delivered))
    xlate(build, work)
    return check.finish(work, False)


def rc_frame(src, dst, dqpn, psn, ce, v6):
    """An RC SEND Only from the fabric (ECT(0), or CE), ICRC computed."""
    ecn = 3 if ce else 2
    ip = IPv6(src=src, dst=dst, tc=ecn, hlim=64) if v6 else IP(src=src, dst=dst, tos=ecn, flags="DF", ttl=64)
    p = (Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01") / ip / UDP(sport=0xc456, dport=4791, chksum=0) /
         BTH(opcode=0x04, dqpn=dqpn, psn=psn, pkey=0xffff) / Raw(b"xl" * 16) / Raw(b"\0\0\0\0"))
    return with_icrc(bytes(p))


def xlate(build, work):
    """CE marks and CNPs across IPv4 <-> IPv6 translation (runs 4 and 5)."""
    cases = [("v4-over-v6", "pipeline-xlate-v4v6.json", True, ("fd00::2", "fd00::1"), ("192.168.1.20", "192.168.1.10")),
             ("v6-over-v4", "pipeline-xlate-v6v4.json", False, ("10.0.0.2", "10.0.0.1"), ("fd00:1::20", "fd00:1::10"))]
    for name, cfg, v6_hosts, (rhost, lhost), (rvip, lvip) in cases:
        doc = json.load(open(os.path.join(ROOT, "examples", cfg)))
        doc["dcqcn"] = {"enabled": True, "profile": "nvidia", "ce_to_tenant": "keep",
                        "params": {"min_time_between_cnps": 0}}
        frames = [rc_frame(rhost, lhost, 4097, 700, True, v6_hosts), rc_frame(rhost, lhost, 4097, 701, False, v6_hosts)]
        summary, cnps, delivered, _ = run(build, work, name, doc, frames, 1)
        check(summary is not None and summary["cnp_sent"] == 1, "(%s) one CNP for the CE mark" % name,
              summary and summary["cnp_sent"])
        L3 = IPv6 if v6_hosts else IP
        for p in cnps:
            raw = bytes(p)
            check(L3 in p and (p[L3].src, p[L3].dst) == (lhost, rhost) and BTH in p and p[BTH].opcode == 0x81 and
                  p[BTH].dqpn == 8193, "(%s) the CNP in the hosts' version, %s -> %s, DestQP 8193" % (name, lhost, rhost),
                  p.summary())
            check(icrc_zlib(raw) == icrc_found(raw) and (v6_hosts or icrc_scapy(raw) == icrc_found(raw)),
                  "(%s) CNP ICRC valid" % name)
        check(len(cnps) == 1, "(%s) one CNP on the fabric" % name, len(cnps))
        V3 = IP if v6_hosts else IPv6
        got = [Ether(bytes(f)) for f in delivered]
        ecn = [(p[IP].tos & 3) if IP in p else (p[IPv6].tc & 3) for p in got if V3 in p]
        check(len(got) == 2 and all(V3 in p and (p[V3].src, p[V3].dst) == (rvip, lvip) and p[BTH].dqpn == 17
                                    for p in got),
              "(%s) both frames reach the tenant in the vips' version, %s -> %s, qp 17" % (name, rvip, lvip),
              [p.summary() for p in got])
        check(ecn == [3, 2], "(%s) the CE mark crosses the translation, ECT(0) stays ECT(0)" % name, ecn)
        check(all(icrc_zlib(bytes(f)) == icrc_found(bytes(f)) for f in delivered) and
              all(icrc_scapy(bytes(f)) == icrc_found(bytes(f)) for f in delivered if v6_hosts),
              "(%s) delivered frames' ICRC valid" % name)


if __name__ == "__main__":
    sys.exit(main())
