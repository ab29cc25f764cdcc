#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Revocation of XRC connections, through the real switch.

The configuration of test_acl.py plus two XRC connections of blue: the local
initiator 192.168.1.10 qp 60 (pqpn 4160) toward the target 192.168.1.20 qp
61 (pqpn 8161), and the remote initiator .20 qp 63 (pqpn 8163) toward the
local target .10 qp 62 (pqpn 4162); .10's SRQ 7 is 5000 on the fabric, .20's
SRQ 7 is 6000.  infinite_rx streams: qp 60 sends XRC SEND Only requests
(XRCETH SRQ 7) with PSNs 200 .. 205 that .20 acknowledges up to 202 (XRC
ACKNOWLEDGE, MSN 3); .20's qp 63 sends requests 400 .. 409 (XRCETH 5000) that
qp 62 acknowledges up to 404 (MSN 5).  The RC connection 17 <-> 33 streams
too and must keep forwarding.

/roce/revoke of qp 60 sends one NAK, to the initiator on its tenant port: XRC
ACKNOWLEDGE (0xb1), AETH 0x62, PSN 203, MSN 3, from .20 to .10, DestQP 60 (the
target has no requests, so nothing goes to the fabric).  /roce/revoke of qp
62 sends one NAK, to the remote initiator out of the uplink: PSN 405, MSN 5,
from this host to 10.0.0.2, DestQP 8163.  Each NAK is 62 bytes with a valid
ICRC and IPv4 checksum (scapy), and decodes in scapy with the expected fields.
/roce/unrevoke restores forwarding.

Usage: tests/acl/test_acl_xrc.py BUILD_DIR [--keep]
Final line: "N passed, M failed".
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_acl as A  # noqa: E402
from test_acl import (  # noqa: E402
    B10, B20, BLUE_PORT, HOST, PEER, PEER_MAC, UPLINK_MAC, VM, check, conn_pkts, forwarding, junk, roce,
    telemetry, start_switch, stop_switch, wait_socket, read_pcap, write_pcap, fields_of, AETH, from_vm,
    from_fabric, SEND_ONLY)
from pipeline_wire import XRCETH  # noqa: E402

XRC_SEND_ONLY, XRC_ACK = 0xa4, 0xb1


def config(devs):
    c = A.config(devs)
    for e in c["endpoints"]:
        if e["tenant"] == "blue" and e["vip"] == B10:
            e["xrc_srqs"] = [{"vsrqn": 7, "psrqn": 5000}]
        if e["tenant"] == "blue" and e["vip"] == B20:
            e["xrc_srqs"] = [{"vsrqn": 7, "psrqn": 6000}]
    c["qps"] += [A.qp("blue", B10, 60, 4160, "xrc_ini", (B20, 61)), A.qp("blue", B20, 61, 8161, "xrc_tgt", (B10, 60)),
                 A.qp("blue", B10, 62, 4162, "xrc_tgt", (B20, 63)), A.qp("blue", B20, 63, 8163, "xrc_ini", (B10, 62))]
    return c


def xrc_vm(sport, opcode, dqpn, psn, ext):
    return roce(VM[("blue", B10)], BLUE_PORT, B10, B20, sport, opcode, dqpn, psn, ext,
                64 if opcode == XRC_SEND_ONLY else 0)


def xrc_fab(sport, opcode, dqpn, psn, ext):
    return roce(PEER_MAC, UPLINK_MAC, PEER, HOST, sport, opcode, dqpn, psn, ext, 64 if opcode == XRC_SEND_ONLY else 0)


def streams(work):
    blue, fab = [], []
    for i in range(6):
        blue.append(xrc_vm(7000 + i, XRC_SEND_ONLY, 61, 200 + i, XRCETH(xrcsrq=7)))
    fab.append(xrc_fab(8010, XRC_ACK, 4160, 202, AETH(syndrome=0x1f, msn=3)))
    for i in range(10):
        fab.append(xrc_fab(8000 + i, XRC_SEND_ONLY, 4162, 400 + i, XRCETH(xrcsrq=5000)))
    blue.append(xrc_vm(7010, XRC_ACK, 63, 404, AETH(syndrome=0x1f, msn=5)))
    # RC 17 <-> 33, which must keep forwarding.
    for i in range(3):
        blue.append(from_vm("blue", B10, B20, 7100 + i, SEND_ONLY, 33, 10 + i))
        fab.append(from_fabric(8100 + i, SEND_ONLY, 4097, 20 + i))
    blue += junk(300, 8000)
    fab += junk(300, 8000)
    paths = (os.path.join(work, "x-blue-in.pcap"), os.path.join(work, "x-fab-in.pcap"))
    write_pcap(paths[0], blue)
    write_pcap(paths[1], fab)
    return paths


# The NAK each revocation must send: (port, fields).
NAKS = {
    "ini60": ("vm-blue-1", {"eth.src": BLUE_PORT, "eth.dst": VM[("blue", B10)], "ip.src": B20, "ip.dst": B10,
                            "bth.dqpn": 60, "bth.psn": 203, "aeth.msn": 3}),
    "ini63": ("fabric0", {"eth.src": UPLINK_MAC, "eth.dst": PEER_MAC, "ip.src": HOST, "ip.dst": PEER,
                          "bth.dqpn": 8163, "bth.psn": 405, "aeth.msn": 5}),
}


def xrc_naks(path):
    """The XRC NAKs (XRC ACKNOWLEDGE with AETH syndrome 0x62) in a capture."""
    return [fr for fr in read_pcap(path)
            if len(fr) >= 62 and fr[12:14] == b"\x08\x00" and fr[42] == XRC_ACK and fr[54] == 0x62]


def run(build, work):
    prefix = "acl-xrc-%d" % os.getpid()
    blue_in, fab_in = streams(work)
    outs = {"fabric0": [os.path.join(work, "x-fab-out%d.pcap" % q) for q in range(2)],
            "vm-blue-1": [os.path.join(work, "x-blue-out%d.pcap" % q) for q in range(2)]}
    vdevs = ["net_pcap0,rx_pcap=%s,infinite_rx=1,%s" % (fab_in, ",".join("tx_pcap=" + p for p in outs["fabric0"])),
             "net_pcap1,rx_pcap=%s,infinite_rx=1,%s" % (blue_in, ",".join("tx_pcap=" + p for p in outs["vm-blue-1"])),
             "net_null0,no-rx=1"]
    path = os.path.join(work, "x.json")
    with open(path, "w") as f:
        json.dump(config(["net_pcap0", "net_pcap1", "net_null0"]), f)
    k60, k62, k17 = ("blue", B10, 60), ("blue", B10, 62), ("blue", B10, 17)
    sw = start_switch(build, prefix, vdevs, path, "0@0,1@1,2@1")
    summ = None
    try:
        if not check(wait_socket(prefix, sw), "the switch answers telemetry"):
            return
        time.sleep(1.0)
        for k in (k60, k62):
            on, c = forwarding(prefix, k)
            check(on and c.get("type") == ("xrc_ini" if k == k60 else "xrc_tgt"),
                  "%s forwards before the revocation, type %s" % (k, c.get("type")), c)
        r = telemetry(prefix, "/roce/revoke,blue,%s,60" % B10)
        # A NAK is asked of both ends; only an end with requests outstanding sends one.
        check(r.get("revoked") == 1 and r.get("naks_requested") == 2 and r.get("naks_sent") == 1,
              "revoke the initiator's connection: one NAK, to the initiator", r)
        a, c = conn_pkts(prefix, k60)
        time.sleep(0.5)
        b, c = conn_pkts(prefix, k60)
        check(a == b and c.get("verdict") == "revoked", "its counters stop, verdict revoked", (a, b, c.get("verdict")))
        on, _ = forwarding(prefix, k62)
        check(on, "the other XRC connection keeps forwarding")
        on, _ = forwarding(prefix, k17)
        check(on, "the RC connection keeps forwarding")
        r = telemetry(prefix, "/roce/revoke,blue,%s,62" % B10)
        check(r.get("revoked") == 1 and r.get("naks_requested") == 2 and r.get("naks_sent") == 1,
              "revoke the target's connection: one NAK, to the remote initiator", r)
        for key in (60, 62):
            r = telemetry(prefix, "/roce/unrevoke,blue,%s,%d" % (B10, key))
            check(r.get("restored") == 1, "unrevoke %d: restored" % key, r)
        time.sleep(0.3)
        for k in (k60, k62):
            on, _ = forwarding(prefix, k)
            check(on, "%s forwards again after unrevoke" % (k,))
    finally:
        rc, summ, err = stop_switch(sw, prefix)
        check(rc == 0, "the switch exits 0", err[-2000:] if err else "")
    found = {}
    for port, paths in outs.items():
        for fr in [fr for p in paths for fr in xrc_naks(p)]:
            f = fields_of(fr)
            kind = [n for n, (kp, kf) in NAKS.items() if kp == port and all(f.get(k) == v for k, v in kf.items())]
            check(len(kind) == 1, "a NAK on %s matches an expected one" % port, f)
            for n in kind:
                found[n] = found.get(n, 0) + 1
            A.nak_frame_check(fr, f, XRC_ACK, "XRC ")
            check("xrceth.xrcsrq" not in f, "NAK: no XRCETH (an XRC answer)", f)
    check(found == {"ini60": 1, "ini63": 1}, "exactly one NAK per revocation", found)
    if check(summ is not None, "the exit summary"):
        check(summ.get("revocations") == 2 and summ.get("naks_sent") == 2, "summary: revocations 2, naks_sent 2",
              (summ.get("revocations"), summ.get("naks_sent")))
        check(summ["drops"].get("xrc_srq_unknown") == 0 and summ["drops"].get("type_mismatch") == 0,
              "no XRC frame of the streams is refused", summ["drops"])


if __name__ == "__main__":
    sys.exit(A.main((run,), "roce-acl-xrc-"))
