#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Revocation NAKs under VLAN policies, through the real switch.

The configuration of tests/acl/test_acl.py with VLAN policies: the uplink
untagged, blue on the fabric its vni (VID 100, PCP = DSCP >> 3), blue's port
tagged VID 10 with the PCP kept.  infinite_rx streams: L (blue .10 qp 17)
sends SEND requests on VID 10 (PCP 2) with DSCP 26 and P_Key 0x8123; R (.20
on 10.0.0.2) sends requests to pqpn 4097 on VID 100 with DSCP 46 and P_Key
0x8456.  Nothing answers them, so both ends have requests outstanding when
/roce/revoke names L.  The two NAKs (RC ACKNOWLEDGE, AETH 0x62) take the
tags of their side and the DSCP and P_Key of the latest request they answer:
to L out of vm-blue-1 on VID 10 (PCP 0: under "pcp": "keep" the switch
keeps no PCP of a request), DSCP 26, P_Key 0x8123; to R out of the uplink
on VID 100 with PCP 46 >> 3 = 5, DSCP 46, P_Key 0x8456.  Checked by scapy
(fields, ICRC, IPv4 checksum) and tshark (VLAN ID and priority, BTH).

Usage: tests/acl/test_vlan_revoke.py BUILD_DIR [--keep]
Final line: "N passed, M failed".
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "pipeline"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from roce_checks import Checks  # noqa: E402
from roce_telemetry import telemetry  # noqa: E402
from roce_switch import start_switch, stop_switch, wait_socket  # noqa: E402
from pipeline_wire import BTH, read_pcap, write_pcap, fields_of, ipv4_header_ok, icrc_expected, icrc_found  # noqa: E402
from scapy.layers.l2 import Dot1Q, Ether  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.packet import Raw  # noqa: E402
import test_acl as base  # noqa: E402

check = Checks()
SEND_ONLY, ACK = 0x04, 0x11


def frame(src_mac, dst_mac, vid, prio, src, dst, dscp, pkey, dqpn, psn, sport):
    p = (Ether(src=src_mac, dst=dst_mac) / Dot1Q(vlan=vid, prio=prio) /
         IP(src=src, dst=dst, tos=dscp << 2, flags="DF", ttl=64) / UDP(sport=sport, dport=4791, chksum=0) /
         BTH(opcode=SEND_ONLY, pkey=pkey, dqpn=dqpn, psn=psn) / Raw(bytes(range(32))))
    return bytes(p)


def naks(paths):
    """The NAKs in the captures: ACKNOWLEDGE with AETH syndrome 0x62, one tag or none."""
    out = []
    for path in paths:
        if not os.path.exists(path):
            continue
        for fr in read_pcap(path):
            f = fields_of(fr)
            if f.get("bth.opcode") == ACK and f.get("aeth.syndrome") == 0x62:
                out.append((fr, f))
    return out


def tshark_vlans(path):
    """(vlan.id, vlan.priority, bth.pkey, bth.destqp) of each frame of @path, by tshark."""
    r = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "vlan.id", "-e", "vlan.priority",
                        "-e", "infiniband.bth.p_key", "-e", "infiniband.bth.destqp"],
                       capture_output=True, text=True)
    return [tuple(int(x, 0) for x in line.split("\t")) for line in r.stdout.splitlines() if line.strip()]


def run(build, work):
    devs = ["net_pcap0", "net_pcap1", "net_null0"]
    cfg = base.config(devs)
    cfg["ports"][0]["vlan"] = {"mode": "untagged"}
    cfg["ports"][1]["vlan"] = {"mode": "tagged", "vid": 10, "pcp": "keep"}
    cfg["tenants"][0]["vlan"] = {"mode": "vni"}
    cfg_path = os.path.join(work, "vlan-revoke.json")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    blue = [frame(base.VM[("blue", base.B10)], base.BLUE_PORT, 10, 2, base.B10, base.B20, 26, 0x8123, 33,
                  1000 + i, 0xc000 + i) for i in range(4)] + base.junk(300, 8000)
    fab = [frame(base.PEER_MAC, base.UPLINK_MAC, 100, 1, base.PEER, base.HOST, 46, 0x8456, 4097,
                 2000 + i, 0xd000 + i) for i in range(4)] + base.junk(300, 8000)
    ins = (os.path.join(work, "blue-in.pcap"), os.path.join(work, "fab-in.pcap"))
    write_pcap(ins[0], blue)
    write_pcap(ins[1], fab)
    outs = {"fabric0": [os.path.join(work, "fab-out%d.pcap" % q) for q in range(2)],
            "vm-blue-1": [os.path.join(work, "blue-out%d.pcap" % q) for q in range(2)]}
    vdevs = ["net_pcap0,rx_pcap=%s,infinite_rx=1,%s" % (ins[1], ",".join("tx_pcap=" + p for p in outs["fabric0"])),
             "net_pcap1,rx_pcap=%s,infinite_rx=1,%s" % (ins[0], ",".join("tx_pcap=" + p for p in outs["vm-blue-1"])),
             "net_null0,no-rx=1"]
    prefix = "acl-vlan-%d" % os.getpid()
    sw = start_switch(build, prefix, vdevs, cfg_path, "0@0,1@1,2@1")
    try:
        if not check(wait_socket(prefix, sw), "the switch answers telemetry"):
            return
        time.sleep(1.0)
        d = telemetry(prefix, "/roce/drops")
        check(d.get("vlan_mismatch") == 0, "the streams carry the tags their sides accept", d.get("vlan_mismatch"))
        r = telemetry(prefix, "/roce/revoke,blue,%s,17" % base.B10)
        check(r.get("revoked") == 1 and r.get("naks_sent") == 2, "revoke: one connection, two NAKs", r)
        time.sleep(0.3)
    finally:
        rc, summ, err = stop_switch(sw, prefix)
    check(rc == 0 and summ is not None, "the switch exits cleanly", err[-400:])
    want = {
        "vm-blue-1": {"vlan.vid": 10, "vlan.prio": 0, "ip.dscp": 26, "bth.pkey": 0x8123, "bth.dqpn": 17,
                      "ip.src": base.B20, "ip.dst": base.B10},
        "fabric0": {"vlan.vid": 100, "vlan.prio": 5, "ip.dscp": 46, "bth.pkey": 0x8456, "bth.dqpn": 8193,
                    "ip.src": base.HOST, "ip.dst": base.PEER},
    }
    for port, kf in want.items():
        got = naks(outs[port])
        check(len(got) == 1, "%s: one revocation NAK" % port, len(got))
        for fr, f in got:
            p = Ether(fr)
            vl = p[Dot1Q] if Dot1Q in p else None
            seen = {"vlan.vid": vl.vlan if vl else None, "vlan.prio": vl.prio if vl else None,
                    "ip.dscp": p[IP].tos >> 2, "bth.pkey": p[BTH].pkey, "bth.dqpn": p[BTH].dqpn,
                    "ip.src": p[IP].src, "ip.dst": p[IP].dst}
            check(seen == kf, "%s: the NAK's tag, DSCP, P_Key and addresses (scapy)" % port,
                  "got %s, want %s" % (seen, kf))
            check(sum(1 for x in p.layers() if x is Dot1Q) == 1, "%s: exactly one tag" % port)
            check(icrc_found(fr) == icrc_expected(fr), "%s: ICRC valid (scapy)" % port)
            check(ipv4_header_ok(fr), "%s: IPv4 checksum valid" % port)
            one = os.path.join(work, "nak-%s.pcap" % port)
            write_pcap(one, [fr])
            t = tshark_vlans(one)
            check(t == [(kf["vlan.vid"], kf["vlan.prio"], kf["bth.pkey"], kf["bth.dqpn"])],
                  "%s: tshark decodes the NAK's VLAN ID, priority, P_Key and DestQP" % port, t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--keep", action="store_true", help="keep the working directory")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="roce-acl-vlan-")
    t0 = time.time()
    run(os.path.abspath(a.build), work)
    print("run time %.1f s" % (time.time() - t0))
    return check.finish(work, a.keep)


if __name__ == "__main__":
    sys.exit(main())
