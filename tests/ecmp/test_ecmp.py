#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
ECMP entropy: "ecmp": {"udp_sport": "qpn"} gives every connection toward the
fabric a UDP source port (and an IPv6 flow label) of its own, derived from
both physical QPNs, so that two tenants that reuse the same vIPs and vQPNs
between the same two hosts hash onto different fabric paths.

examples/two-tenants.json (blue and red both use 192.168.1.10 qp 17 ->
192.168.1.20 qp 33; pqpns 4097 -> 8193 and 4098 -> 8194) runs twice on
net_pcap: as it is ("keep": the tenant's port passes) and with "ecmp".  Each
tenant sends the same RC SEND Only and WRITE Only with the same UDP source
port.  The frames on the fabric are checked with scapy (ICRC recomputed by
scapy itself, IPv4 checksum) and tshark (UDP ports, DestQP).  What the
README promises is checked on its own: each connection's port is in
0xC000-0xFFFF, the two tenants' ports differ and neither is the sender's.
The exact port is also compared with the switch's derivation (overlay/ovl.c
ecmp_init(), copied here, so that a change of it is a visible change of the
wire): h = (lp * 0x9e3779b1) ^ (rp * 0x85ebca6b) mod 2^32, h ^= h >> 15,
h *= 0xc2b2ae35, h ^= h >> 13, sport = 0xC000 | (h & 0x3FFF).

Usage: /usr/bin/python3 tests/ecmp/test_ecmp.py BUILD_DIR
Ends with "N passed, M failed".
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))

from roce_checks import Checks  # noqa: E402
from roce_layers import BTH, RETH, icrc_found, icrc_scapy  # noqa: E402
from roce_switch import start_switch, stop_switch, wait_socket  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import rdpcap, wrpcap  # noqa: E402

check = Checks()
SPORT_IN = 0xD00D
M32 = 0xffffffff


def sport_of(lp, rp):
    h = ((lp * 0x9e3779b1) & M32) ^ ((rp * 0x85ebca6b) & M32)
    h ^= h >> 15
    h = (h * 0xc2b2ae35) & M32
    h ^= h >> 13
    return 0xC000 | (h & 0x3FFF)


def frames(vm_mac, port_mac):
    """SEND Only and WRITE Only from 192.168.1.10 qp 17 to .20 qp 33, UDP source port SPORT_IN."""
    out = []
    for i, (op, ext, n) in enumerate(((0x04, None, 64), (0x0a, RETH(va=0x7f0000000000, rkey=0x1234, dmalen=32), 32))):
        p = (Ether(src=vm_mac, dst=port_mac) / IP(src="192.168.1.10", dst="192.168.1.20", flags="DF", ttl=64) /
             UDP(sport=SPORT_IN, dport=4791, chksum=0) / BTH(opcode=op, dqpn=33, psn=100 + i, pkey=0xffff))
        if ext is not None:
            p = p / ext
        p = p / Raw(bytes(range(n)))
        out.append(Ether(bytes(p)))    # scapy fills the ICRC (IPv4)
    return out


def run(build, work, name, ecmp):
    doc = json.load(open(os.path.join(ROOT, "examples", "two-tenants.json")))
    if ecmp:
        doc["ecmp"] = {"udp_sport": "qpn"}
    cfg = os.path.join(work, name + ".json")
    json.dump(doc, open(cfg, "w"))
    blue, red = os.path.join(work, name + "-blue.pcap"), os.path.join(work, name + "-red.pcap")
    wrpcap(blue, frames("02:00:00:00:aa:10", "02:00:00:00:01:01"))
    wrpcap(red, frames("02:00:00:00:bb:10", "02:00:00:00:02:01"))
    empty = os.path.join(work, "empty.pcap")
    wrpcap(empty, [])
    fabric_out = os.path.join(work, name + "-fabric.pcap")
    prefix = "ecmp-%s-%d" % (name, os.getpid())
    vdevs = ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (empty, fabric_out),
             "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (blue, os.path.join(work, name + "-b.out.pcap")),
             "net_pcap2,rx_pcap=%s,tx_pcap=%s" % (red, os.path.join(work, name + "-r.out.pcap"))]
    proc = start_switch(build, prefix, vdevs, cfg, "0", ["--exit-when-idle", "300"])
    proc.wait(timeout=60)
    rc, summary, err = stop_switch(proc, prefix)
    check(rc == 0 and summary is not None, "(%s) the switch runs and exits with a summary" % name, err[-400:])
    return rdpcap(fabric_out) if os.path.exists(fabric_out) else []


def tshark_fields(path):
    out = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "udp.srcport", "-e", "udp.dstport",
                          "-e", "infiniband.bth.destqp"], capture_output=True, text=True, check=False).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def main():
    build = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="roce-ecmp-")
    want = {8193: sport_of(4097, 8193), 8194: sport_of(4098, 8194)}
    check(want[8193] != want[8194], "the two connections derive different ports: %#x, %#x" % (want[8193], want[8194]))
    for name, ecmp in (("keep", False), ("qpn", True)):
        out = run(build, work, name, ecmp)
        check(len(out) == 4, "(%s) four frames on the fabric" % name, len(out))
        by_qp = {}
        for f in out:
            p = Ether(bytes(f))
            q = p[BTH].dqpn
            by_qp.setdefault(q, set()).add(p[UDP].sport)
            check(icrc_scapy(bytes(f)) == icrc_found(bytes(f)),
                  "(%s) ICRC valid (scapy) on DestQP %d" % (name, q))
            ip = p[IP]
            chk = ip.chksum
            ip.chksum = None
            check(IP(bytes(ip))[IP].chksum == chk, "(%s) IPv4 checksum valid on DestQP %d" % (name, q))
        check(sorted(by_qp) == [8193, 8194], "(%s) blue's and red's frames go to pqpns 8193 and 8194" % name,
              sorted(by_qp))
        if ecmp and sorted(by_qp) == [8193, 8194]:
            ports = [p for q in sorted(by_qp) for p in by_qp[q]]
            check(len(ports) == 2 and all(0xC000 <= p <= 0xFFFF and p != SPORT_IN for p in ports) and
                  ports[0] != ports[1], "(qpn) one port per connection, in 0xC000-0xFFFF, the tenants' apart, "
                  "not the sender's", sorted(by_qp.items()))
        for q in by_qp:
            exp = {want[q]} if ecmp else {SPORT_IN}
            check(by_qp[q] == exp, "(%s) DestQP %d leaves with UDP source port %s" % (
                name, q, sorted("%#x" % x for x in exp)), sorted("%#x" % x for x in by_qp[q]))
        fields = tshark_fields(os.path.join(work, name + "-fabric.pcap"))
        check(len(fields) == 4 and all(f[1] == "4791" for f in fields),
              "(%s) tshark decodes four RoCEv2 frames to UDP 4791" % name, fields)
        tports = {int(f[2], 0): int(f[0]) for f in fields if len(f) == 3 and f[2]}
        if ecmp:
            check(tports == want, "(qpn) tshark reads each connection's own port", tports)
    return check.finish(work, False)


if __name__ == "__main__":
    sys.exit(main())
