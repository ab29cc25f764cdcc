#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""ACLs, connection tracking and live revocation, through the real switch.

(a) ACLs.  A configuration whose blue tenant denies by prefix, by operation
    class, by QP type and by source host (and red, with the same vIPs, has no
    ACL).  One-shot net_pcap inputs on every port: every denied message is
    dropped as acl_denied and its Middle and Last as message_denied, every
    allowed frame leaves on the right port correctly renamed with a valid
    ICRC and IPv4 checksum (scapy), responses of a partly denied connection
    pass, an entirely denied (UC) connection drops everything, UD is checked
    per frame.  A refused RC request is answered with one NAK (AETH 0x62,
    the request's PSN and P_Key, the last MSN of the other direction) to its
    requester, in its own view: out of the uplink for a fabric request, out
    of the tenant port for a tenant's (also on a hairpin); no further NAK on
    that direction until one of its requests is forwarded; UC and UD
    refusals are silent (naks_refused).  /roce/connections shows each
    connection's verdict, rule, allowed classes and first/last seen.

(b) Revocation by /roce/revoke.  infinite_rx streams in both directions:
    L (blue 192.168.1.10 qp 17) sends requests with PSNs 0xfffffe .. 3 (a
    24-bit wrap) that R acknowledges up to 0xffffff (MSN 77); R (192.168.1.20
    qp 33) sends requests 100 .. 109 that L acknowledges up to 104 (MSN 5).
    A second connection (qp 18) and a hairpin pair (.11 qp 21 <-> .10 qp 22)
    stream too.  Large non-IP frames in the streams keep the forwarded rate
    (and the tx captures) small.  After the revocation the connection's
    counters stop while the others go on, and exactly one NAK per endpoint
    with requests outstanding leaves: to L on its tenant port (PSN 0, MSN
    77, from R's vIP to L's, DestQP 17) and to R on the uplink (PSN 105,
    MSN 5, from this host to R's, DestQP 8193), each RC ACKNOWLEDGE with AETH
    syndrome 0x62 and a valid ICRC.  /roce/unrevoke restores it.  The hairpin
    pair is revoked by one of its ends: a NAK to each local endpoint.  A
    request refused as acl_denied while a reload moves the connection
    between policies may get a refusal NAK (at most one per direction),
    exactly formed.

(c) Revocation by a reload whose ACL denies the connection entirely: the same
    two NAKs; a reload that allows it again restores it.  A /roce/revoke stays
    in force across a reload until /roce/unrevoke.

Usage: tests/acl/test_acl.py BUILD_DIR [--keep]
Final line: "N passed, M failed".
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "pipeline"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from roce_telemetry import telemetry  # noqa: E402
from roce_switch import start_switch, stop_switch, wait_socket  # noqa: E402

from pipeline_wire import (  # noqa: E402
    BTH, AETH, RETH, AtomicETH, DETH, read_pcap, write_pcap, fields_of, ipv4_header_ok,
    icrc_expected, icrc_found)
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.packet import Raw  # noqa: E402

UPLINK_MAC, PEER_MAC, GW_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:fe"
BLUE_PORT, RED_PORT = "02:00:00:00:01:01", "02:00:00:00:02:01"
VM = {("blue", "192.168.1.10"): "02:00:00:00:aa:10", ("blue", "192.168.1.11"): "02:00:00:00:aa:11",
      ("red", "192.168.1.10"): "02:00:00:00:bb:10"}
HOST, PEER = "10.0.0.1", "10.0.0.2"
B10, B11, B20, B30 = "192.168.1.10", "192.168.1.11", "192.168.1.20", "192.168.2.30"

passed = failed = 0


def check(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s%s" % (what, (": " + str(detail)) if detail != "" else ""))
    return cond


# ---------------------------------------------------------------------------
# The configuration: blue and red on one host, their peers on 10.0.0.2.

def qp(t, vip, vqpn, pqpn, typ, peer=None):
    q = {"tenant": t, "vip": vip, "vqpn": vqpn, "pqpn": pqpn, "type": typ}
    if peer:
        q["peer"] = {"vip": peer[0], "vqpn": peer[1]}
    return q


def config(devices, acls=None):
    c = {
        "version": 1,
        "ports": [
            {"name": "fabric0", "device": devices[0], "role": "uplink", "ip": HOST, "mac": UPLINK_MAC,
             "gateway_mac": GW_MAC},
            {"name": "vm-blue-1", "device": devices[1], "role": "tenant", "tenant": "blue", "mac": BLUE_PORT},
            {"name": "vm-red-1", "device": devices[2], "role": "tenant", "tenant": "red", "mac": RED_PORT},
        ],
        "tenants": [{"name": "blue", "vni": 100}, {"name": "red", "vni": 200}],
        "endpoints": [
            {"tenant": "blue", "vip": B10, "host": HOST, "port": "vm-blue-1", "mac": VM[("blue", B10)]},
            {"tenant": "blue", "vip": B11, "host": HOST, "port": "vm-blue-1", "mac": VM[("blue", B11)]},
            {"tenant": "blue", "vip": B20, "host": PEER},
            {"tenant": "blue", "vip": B30, "host": PEER},
            {"tenant": "red", "vip": B10, "host": HOST, "port": "vm-red-1", "mac": VM[("red", B10)]},
            {"tenant": "red", "vip": B20, "host": PEER},
            {"tenant": "red", "vip": B30, "host": PEER},
        ],
        "qps": [
            qp("blue", B10, 17, 4097, "rc", (B20, 33)), qp("blue", B20, 33, 8193, "rc", (B10, 17)),
            qp("blue", B10, 18, 4098, "rc", (B30, 34)), qp("blue", B30, 34, 8194, "rc", (B10, 18)),
            qp("blue", B10, 19, 4099, "uc", (B30, 35)), qp("blue", B30, 35, 8195, "uc", (B10, 19)),
            qp("blue", B11, 21, 4101, "rc", (B10, 22)), qp("blue", B10, 22, 4102, "rc", (B11, 21)),
            qp("blue", B10, 40, 4200, "ud"), qp("blue", B30, 50, 8300, "ud"), qp("blue", B20, 51, 8301, "ud"),
            qp("red", B10, 17, 4110, "rc", (B20, 33)), qp("red", B20, 33, 8210, "rc", (B10, 17)),
            qp("red", B10, 18, 4111, "rc", (B30, 34)), qp("red", B30, 34, 8211, "rc", (B10, 18)),
        ],
        "neighbors": [{"ip": PEER, "mac": PEER_MAC}],
    }
    if acls is not None:
        c["acls"] = acls
    return c


# Part (a)'s policy for blue.  Red, with the same vIPs, has none.
ACLS_A = [{"tenant": "blue", "default": "allow", "rules": [
    {"action": "deny", "dst": "192.168.2.0/24", "ops": ["write"]},
    {"action": "deny", "src": "192.168.2.0/24", "ops": ["read", "atomic"]},
    {"action": "deny", "dst": "192.168.2.30/32", "types": ["ud"]},
    {"action": "deny", "src": "192.168.1.11/32", "ops": ["send"]},
    {"action": "deny", "types": ["uc"]},
]}]

# Part (c): blue's 17 <-> 33 (192.168.1.10 <-> 192.168.1.20) denied both ways.
ACLS_DENY17 = [{"tenant": "blue", "rules": [
    {"action": "deny", "src": "192.168.1.20/32"},
    {"action": "deny", "dst": "192.168.1.20/32"},
]}]


# ---------------------------------------------------------------------------
# Frames.

SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY = 0x00, 0x01, 0x02, 0x04
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY = 0x06, 0x07, 0x08, 0x0a
READ_REQ, READ_RESP_ONLY, ACK, CMP_SWAP, FETCH_ADD = 0x0c, 0x10, 0x11, 0x13, 0x14
UC_SEND_ONLY, UD_SEND_ONLY = 0x24, 0x64


def roce(src_mac, dst_mac, src, dst, sport, opcode, dqpn, psn, ext=None, payload=64):
    """A RoCEv2 frame; @ext is the extension header layer(s) the opcode carries."""
    p = (Ether(src=src_mac, dst=dst_mac) / IP(src=src, dst=dst, flags="DF", ttl=64) /
         UDP(sport=sport, dport=4791, chksum=0) / BTH(opcode=opcode, dqpn=dqpn, psn=psn))
    if ext is not None:
        p = p / ext
    if payload:
        p = p / Raw(bytes((sport + i) & 0xff for i in range(payload)))
    return bytes(p)


def ext_of(opcode, sport):
    if opcode in (WRITE_FIRST, WRITE_ONLY, READ_REQ):
        return RETH(va=0x7f0000000000 + sport, rkey=0x1234, dmalen=64)
    if opcode in (CMP_SWAP, FETCH_ADD):
        return AtomicETH(va=0x7f0000000000, rkey=0x1234, swap=1, comp=2)
    if opcode in (ACK, READ_RESP_ONLY):
        return AETH(syndrome=0x1f, msn=sport & 0xffff)
    return None


def has_payload(opcode):
    return opcode not in (READ_REQ, ACK, CMP_SWAP, FETCH_ADD)


def from_vm(tenant, vip, dst, sport, opcode, dqpn, psn, ext=None):
    port_mac = BLUE_PORT if tenant == "blue" else RED_PORT
    if ext is None:
        ext = ext_of(opcode, sport)
    return roce(VM[(tenant, vip)], port_mac, vip, dst, sport, opcode, dqpn, psn, ext,
                64 if has_payload(opcode) else 0)


def from_fabric(sport, opcode, dqpn, psn, ext=None):
    if ext is None:
        ext = ext_of(opcode, sport)
    return roce(PEER_MAC, UPLINK_MAC, PEER, HOST, sport, opcode, dqpn, psn, ext, 64 if has_payload(opcode) else 0)


def junk(n, size):
    """Non-IP frames the switch drops at once (not_ip); they pace infinite_rx."""
    return [bytes(Ether(src="02:00:00:00:99:99", dst=BLUE_PORT, type=0x88b5) / Raw(bytes(size - 14)))
            for _ in range(n)]


# ---------------------------------------------------------------------------
# Talking to the switch.


def connections(prefix):
    """(tenant, local vqpn) -> the /roce/connections record, over every page."""
    out, start = {}, 0
    while True:
        doc = telemetry(prefix, "/roce/connections,,%d" % start if start else "/roce/connections")
        for k, v in doc.items():
            if isinstance(v, dict):
                out[(v["tenant"], v["local_vip"], v["local_vqpn"])] = v
        if not doc.get("next"):
            return out
        start = doc["next"]


# ---------------------------------------------------------------------------
# (a) ACLs.

def part_a(build, work):
    prefix = "acl-a-%d" % os.getpid()
    blue, fab, red = [], [], []
    expect = {}   # sport -> (port, fields) for frames that must leave; denied ones map to None

    def out_fab(sport, dqpn, src=HOST, dst=PEER, **kw):
        f = {"eth.src": UPLINK_MAC, "eth.dst": PEER_MAC, "ip.src": src, "ip.dst": dst, "bth.dqpn": dqpn}
        f.update(kw)
        expect[sport] = ("fabric0", f)

    def out_vm(sport, port, port_mac, vm_mac, src, dst, dqpn, **kw):
        f = {"eth.src": port_mac, "eth.dst": vm_mac, "ip.src": src, "ip.dst": dst, "bth.dqpn": dqpn}
        f.update(kw)
        expect[sport] = (port, f)

    drop = {}     # sport -> reason
    naks = []     # (port, fields) of the refusal NAKs, in no particular order

    def nak(port, eth_src, eth_dst, src, dst, dqpn, psn, msn):
        """The NAK of a refused RC request: RC ACKNOWLEDGE, AETH 0x62, as the switch builds it."""
        naks.append((port, {"len": 62, "eth.src": eth_src, "eth.dst": eth_dst, "vlans": [], "ip.version": 4,
                            "ip.src": src, "ip.dst": dst, "ip.tos": 0, "ip.ttl": 64, "ip.id": 0, "ip.flags": 2,
                            "ip.ihl": 5, "ip.options": "", "udp.sport": 0xc000 | (dqpn & 0x3fff),
                            "udp.dport": 4791, "udp.chksum": 0, "bth.opcode": ACK, "bth.se": 0, "bth.m": 0,
                            "bth.pad": 0, "bth.pkey": 0xffff, "bth.fecn": 0, "bth.becn": 0, "bth.dqpn": dqpn,
                            "bth.ackreq": 0, "bth.psn": psn, "aeth.syndrome": 0x62, "aeth.msn": msn,
                            "payload.len": 0}))

    # From blue's tenant port (L = 192.168.1.10 unless said otherwise).
    blue.append(from_vm("blue", B10, B20, 1001, SEND_ONLY, 33, 1))
    out_fab(1001, 8193)
    blue.append(from_vm("blue", B10, B30, 1002, WRITE_ONLY, 34, 2))
    drop[1002] = "acl_denied"                               # rule 0: writes into 192.168.2.0/24
    # Its NAK, as if .30 had answered, with the MSN of .30's last answer to .10 (2006, from the
    # fabric, whose burst the lcore takes before the tenant port's).
    nak("vm-blue-1", BLUE_PORT, VM[("blue", B10)], B30, B10, 18, 2, 2006)
    blue.append(from_vm("blue", B10, B30, 1003, WRITE_FIRST, 34, 3))
    drop[1003] = "acl_denied"                               # refused again: no NAK
    blue.append(from_vm("blue", B10, B30, 1004, WRITE_MIDDLE, 34, 4))
    drop[1004] = "message_denied"
    blue.append(from_vm("blue", B10, B30, 1005, WRITE_LAST, 34, 5))
    drop[1005] = "message_denied"
    blue.append(from_vm("blue", B10, B30, 1006, SEND_ONLY, 34, 6))
    out_fab(1006, 8194)
    blue.append(from_vm("blue", B10, B30, 1007, READ_REQ, 34, 7))
    out_fab(1007, 8194)
    blue.append(from_vm("blue", B10, B30, 1008, CMP_SWAP, 34, 8))
    out_fab(1008, 8194)
    blue.append(from_vm("blue", B10, B30, 1009, ACK, 34, 50))   # a response: passes
    out_fab(1009, 8194)
    blue.append(from_vm("blue", B10, B30, 1010, UC_SEND_ONLY, 35, 9))
    drop[1010] = "acl_denied"                               # rule 4: UC denied entirely; no NAK (UC)
    blue.append(from_vm("blue", B10, B30, 1011, UD_SEND_ONLY, 50, 1, DETH(qkey=0x11111111, srcqp=40)))
    drop[1011] = "acl_denied"                               # rule 2: UD to 192.168.2.30
    blue.append(from_vm("blue", B10, B20, 1012, UD_SEND_ONLY, 51, 1, DETH(qkey=0x11111111, srcqp=40)))
    out_fab(1012, 8301, **{"deth.srcqp": 4200})
    blue.append(from_vm("blue", B11, B10, 1013, SEND_ONLY, 22, 10))
    drop[1013] = "acl_denied"                               # rule 3: sends from .11
    nak("vm-blue-1", BLUE_PORT, VM[("blue", B11)], B10, B11, 21, 10, 0)   # hairpin: from .10, no MSN yet
    blue.append(from_vm("blue", B11, B10, 1014, WRITE_ONLY, 22, 11))
    out_vm(1014, "vm-blue-1", BLUE_PORT, VM[("blue", B10)], B11, B10, 22)
    blue.append(from_vm("blue", B10, B11, 1015, SEND_ONLY, 21, 12))
    out_vm(1015, "vm-blue-1", BLUE_PORT, VM[("blue", B11)], B10, B11, 21)
    for i, op in enumerate((WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST)):
        blue.append(from_vm("blue", B10, B20, 1016 + i, op, 33, 13 + i))
        out_fab(1016 + i, 8193)
    # From the fabric (R = 192.168.2.30 or .20 on 10.0.0.2).
    fab.append(from_fabric(2001, READ_REQ, 4098, 100))
    drop[2001] = "acl_denied"                               # rule 1: reads from 192.168.2.0/24
    # To .30's host as if .10 had answered; .10's ACK (1009) comes in the tenant port's burst, later.
    nak("fabric0", UPLINK_MAC, PEER_MAC, HOST, PEER, 8194, 100, 0)
    fab.append(from_fabric(2002, FETCH_ADD, 4098, 101))
    drop[2002] = "acl_denied"                               # rule 1: atomics from there; no second NAK
    fab.append(from_fabric(2003, SEND_ONLY, 4098, 102))
    out_vm(2003, "vm-blue-1", BLUE_PORT, VM[("blue", B10)], B30, B10, 18)
    fab.append(from_fabric(2004, WRITE_ONLY, 4098, 103))
    out_vm(2004, "vm-blue-1", BLUE_PORT, VM[("blue", B10)], B30, B10, 18)
    fab.append(from_fabric(2005, ACK, 4098, 6))
    out_vm(2005, "vm-blue-1", BLUE_PORT, VM[("blue", B10)], B30, B10, 18)
    fab.append(from_fabric(2006, READ_RESP_ONLY, 4098, 7))
    out_vm(2006, "vm-blue-1", BLUE_PORT, VM[("blue", B10)], B30, B10, 18)
    fab.append(from_fabric(2007, UC_SEND_ONLY, 4099, 104))
    drop[2007] = "acl_denied"
    fab.append(from_fabric(2008, UD_SEND_ONLY, 4200, 5, DETH(qkey=0x11111111, srcqp=8300)))
    out_vm(2008, "vm-blue-1", BLUE_PORT, VM[("blue", B10)], B30, B10, 40, **{"deth.srcqp": 50})
    for i, op in enumerate((SEND_FIRST, SEND_MIDDLE, SEND_LAST)):
        fab.append(from_fabric(2009 + i, op, 4097, 110 + i))
        out_vm(2009 + i, "vm-blue-1", BLUE_PORT, VM[("blue", B10)], B20, B10, 17)
    fab.append(from_fabric(2012, READ_REQ, 4097, 113))
    out_vm(2012, "vm-blue-1", BLUE_PORT, VM[("blue", B10)], B20, B10, 17)
    fab.append(from_fabric(2013, READ_REQ, 4111, 5))        # red: no ACL
    out_vm(2013, "vm-red-1", RED_PORT, VM[("red", B10)], B30, B10, 18)
    # Red reuses blue's vIPs: blue's ACL does not apply to it.
    red.append(from_vm("red", B10, B30, 3001, WRITE_ONLY, 34, 1))
    out_fab(3001, 8211)
    red.append(from_vm("red", B10, B20, 3002, SEND_ONLY, 33, 2))
    out_fab(3002, 8210)

    ins = {"fabric0": fab, "vm-blue-1": blue, "vm-red-1": red}
    devs = {"fabric0": "net_pcap0", "vm-blue-1": "net_pcap1", "vm-red-1": "net_pcap2"}
    vdevs, outs = [], {}
    for port, frames in ins.items():
        rx = os.path.join(work, "a-%s-in.pcap" % port)
        outs[port] = os.path.join(work, "a-%s-out.pcap" % port)
        write_pcap(rx, frames)
        vdevs.append("%s,rx_pcap=%s,tx_pcap=%s" % (devs[port], rx, outs[port]))
    cfg_path = os.path.join(work, "a.json")
    with open(cfg_path, "w") as f:
        json.dump(config([devs["fabric0"], devs["vm-blue-1"], devs["vm-red-1"]], ACLS_A), f)
    total = sum(len(v) for v in ins.values())

    t0 = time.time_ns()
    sw = start_switch(build, prefix, vdevs, cfg_path, "0@0,1@1")
    conns = {}
    try:
        if not check(wait_socket(prefix, sw), "(a) the switch answers telemetry"):
            return
        end = time.time() + 20
        while time.time() < end and telemetry(prefix, "/roce/stats")["rx_packets"] < total:
            time.sleep(0.05)
        time.sleep(0.2)
        conns = connections(prefix)
        t1 = time.time_ns()
    finally:
        rc, summ, err = stop_switch(sw, prefix)
    check(rc == 0 and summ is not None, "(a) the switch exits cleanly with a summary", err[-400:])
    if summ is None:
        return

    # Drops, by reason, exactly.
    want = {}
    for r in drop.values():
        want[r] = want.get(r, 0) + 1
    got = {k: v for k, v in summ["drops"].items() if v}
    check(got == want, "(a) drops by reason", "got %s, want %s" % (got, want))
    check("acl_denied" in summ["drops"] and "revoked" in summ["drops"], "(a) acl_denied and revoked are named reasons")
    check(summ["rx_packets"] == total and summ["tx_packets"] == len(expect) + len(naks),
          "(a) rx %d = %d sent, tx %d = %d allowed + %d NAKs" % (summ["rx_packets"], total, summ["tx_packets"],
                                                                 len(expect), len(naks)))
    check(summ.get("revocations") == 0 and summ.get("naks_sent") == 0, "(a) no revocation, no revocation NAK",
          "%s %s" % (summ.get("revocations"), summ.get("naks_sent")))
    check(summ.get("naks_refused") == len(naks), "(a) naks_refused: one per refused RC request and direction",
          "%s, want %d" % (summ.get("naks_refused"), len(naks)))
    fwd = summ["forwarded"]["egress"] + summ["forwarded"]["ingress"] + summ["forwarded"]["hairpin"]
    check(fwd == len(expect), "(a) forwarded = allowed (NAKs are sent, not forwarded)", "%d, %d" % (fwd, len(expect)))

    # Every allowed frame leaves where it should, renamed, with a valid ICRC.
    seen = set()
    nak_left = list(naks)
    for port, path in outs.items():
        for fr in read_pcap(path):
            f = fields_of(fr)
            sport = f.get("udp.sport")
            if f.get("bth.opcode") == ACK and f.get("aeth.syndrome") == 0x62:
                m = next((n for n in nak_left if n[0] == port and all(f.get(k) == v for k, v in n[1].items())),
                         None)
                if check(m is not None, "(a) a NAK on %s matches an expected one" % port, f):
                    nak_left.remove(m)
                check(icrc_found(fr) == icrc_expected(fr), "(a) NAK psn %s: ICRC valid (scapy)" % f.get("bth.psn"))
                check(ipv4_header_ok(fr), "(a) NAK psn %s: IPv4 checksum valid" % f.get("bth.psn"))
                continue
            if sport in drop:
                check(False, "(a) denied frame %d left on %s" % (sport, port))
                continue
            if sport not in expect:
                check(False, "(a) unexpected frame on %s" % port, f)
                continue
            seen.add(sport)
            wport, wf = expect[sport]
            bad = {k: (f.get(k), v) for k, v in wf.items() if f.get(k) != v}
            check(port == wport and not bad, "(a) frame %d on %s (want %s)" % (sport, port, wport), bad)
            check(icrc_found(fr) == icrc_expected(fr), "(a) frame %d: ICRC valid" % sport)
            check(ipv4_header_ok(fr), "(a) frame %d: IPv4 checksum valid" % sport)
    check(seen == set(expect), "(a) every allowed frame left", sorted(set(expect) - seen))
    check(not nak_left, "(a) every expected NAK left", nak_left)

    # Verdicts, rules and tracking in /roce/connections.
    want_conns = {
        ("blue", B10, 17): ("allow", "default", "send,write,read,atomic", "send,write,read,atomic"),
        ("blue", B10, 18): ("partial", "default,acls[0].rules[0],acls[0].rules[1]", "send,read,atomic",
                            "send,write"),
        ("blue", B10, 19): ("deny", "acls[0].rules[4],acls[0].rules[0]", "", ""),
        ("blue", B11, 21): ("partial", "acls[0].rules[3],default", "write,read,atomic", "send,write,read,atomic"),
        ("blue", B10, 22): ("partial", "default,acls[0].rules[3]", "send,write,read,atomic", "write,read,atomic"),
        ("red", B10, 17): ("allow", "default", "send,write,read,atomic", "send,write,read,atomic"),
        ("red", B10, 18): ("allow", "default", "send,write,read,atomic", "send,write,read,atomic"),
    }
    check(set(conns) == set(want_conns), "(a) /roce/connections lists every connection", sorted(conns))
    for key, (verdict, rule, l2r, r2l) in want_conns.items():
        c = conns.get(key, {})
        got = (c.get("verdict"), c.get("rule"), c.get("allowed_l_to_r"), c.get("allowed_r_to_l"))
        check(got == (verdict, rule, l2r, r2l), "(a) connection %s: verdict, rule, classes" % (key,),
              "got %s, want %s" % (got, (verdict, rule, l2r, r2l)))
    # Seen: every connection with a frame, denied or not; packets: forwarded ones.
    # Every connection had a frame in this run (blue 19's were all denied).
    for key, c in conns.items():
        fs, ls = c.get("first_seen_ns", -1), c.get("last_seen_ns", -1)
        check(t0 - 10**9 <= fs <= ls <= t1 + 10**9, "(a) connection %s: first/last seen in the run" % (key,),
              "%s %s (run %d .. %d)" % (fs, ls, t0, t1))
    c19 = conns.get(("blue", B10, 19), {})
    check(c19.get("egress_packets") == 0 and c19.get("ingress_packets") == 0,
          "(a) the denied UC connection forwarded nothing", c19)
    c18 = conns.get(("blue", B10, 18), {})
    check((c18.get("egress_packets"), c18.get("ingress_packets")) == (4, 4),
          "(a) blue 18 forwarded 4 frames each way", c18)


# ---------------------------------------------------------------------------
# (b) and (c): revocation.

# The NAKs each revocation must produce: (port, fields).
NAK_L17 = ("vm-blue-1", {"eth.src": BLUE_PORT, "eth.dst": VM[("blue", B10)], "ip.src": B20, "ip.dst": B10,
                         "bth.dqpn": 17, "bth.psn": 0, "aeth.msn": 77})
NAK_R33 = ("fabric0", {"eth.src": UPLINK_MAC, "eth.dst": PEER_MAC, "ip.src": HOST, "ip.dst": PEER,
                       "bth.dqpn": 8193, "bth.psn": 105, "aeth.msn": 5})
NAK_H11 = ("vm-blue-1", {"eth.src": BLUE_PORT, "eth.dst": VM[("blue", B11)], "ip.src": B10, "ip.dst": B11,
                         "bth.dqpn": 21, "bth.psn": 302, "aeth.msn": 9})
NAK_H10 = ("vm-blue-1", {"eth.src": BLUE_PORT, "eth.dst": VM[("blue", B10)], "ip.src": B11, "ip.dst": B10,
                         "bth.dqpn": 22, "bth.psn": 900, "aeth.msn": 0})


# Refusal NAKs part (b) may see (see part_bc()): (port, fields, the PSNs they may carry).
REFUSAL_NAKS = {
    "R33": ("fabric0", dict(NAK_R33[1], **{"bth.pkey": 0xffff, "udp.sport": 0xc000 | 8193, "len": 62}),
            set(range(100, 110))),
    "L17": ("vm-blue-1", dict(NAK_L17[1], **{"bth.pkey": 0xffff, "udp.sport": 0xc000 | 17, "len": 62}),
            {(0xfffffe + i) & 0xffffff for i in range(6)}),
}
for _k, (_p, _f, _s) in REFUSAL_NAKS.items():
    del _f["bth.psn"]


def streams(work):
    """The infinite_rx inputs of the tenant port and the uplink."""
    blue, fab = [], []
    # L (.10 qp 17) to R (.20 qp 33): requests 0xfffffe .. 3, and L's ACK of R's 100 .. 104 (MSN 5).
    for i in range(6):
        blue.append(from_vm("blue", B10, B20, 5000 + i, SEND_ONLY, 33, (0xfffffe + i) & 0xffffff))
    blue.append(from_vm("blue", B10, B20, 5010, ACK, 33, 104, AETH(syndrome=0x1f, msn=5)))
    # Blue 18 <-> 34, which must keep forwarding: requests both ways, never answered.
    for i in range(4):
        blue.append(from_vm("blue", B10, B30, 5100 + i, SEND_ONLY, 34, 500 + i))
        fab.append(from_fabric(6100 + i, SEND_ONLY, 4098, 700 + i))
    # The hairpin pair: .11 sends 300 .. 303, .10 acknowledges up to 301 (MSN 9);
    # .10 sends 900 and 901, never acknowledged.
    for i in range(4):
        blue.append(from_vm("blue", B11, B10, 5200 + i, SEND_ONLY, 22, 300 + i))
    blue.append(from_vm("blue", B10, B11, 5210, ACK, 21, 301, AETH(syndrome=0x1f, msn=9)))
    for i in range(2):
        blue.append(from_vm("blue", B10, B11, 5220 + i, SEND_ONLY, 21, 900 + i))
    # R (.20 on 10.0.0.2) to L: requests 100 .. 109, and R's ACK of L's up to 0xffffff (MSN 77).
    for i in range(10):
        fab.append(from_fabric(6000 + i, SEND_ONLY, 4097, 100 + i))
    fab.append(from_fabric(6010, ACK, 4097, 0xffffff, AETH(syndrome=0x1f, msn=77)))
    # Large frames the switch drops at once keep the replay (and the tx captures) slow.
    blue += junk(300, 8000)
    fab += junk(300, 8000)
    paths = (os.path.join(work, "b-blue-in.pcap"), os.path.join(work, "b-fab-in.pcap"))
    write_pcap(paths[0], blue)
    write_pcap(paths[1], fab)
    return paths


def conn_pkts(prefix, key):
    c = connections(prefix).get(key, {})
    return c.get("egress_packets", 0) + c.get("ingress_packets", 0), c


def forwarding(prefix, key, wait=0.4):
    """Does connection @key forward? Two samples @wait apart."""
    a, _ = conn_pkts(prefix, key)
    time.sleep(wait)
    b, c = conn_pkts(prefix, key)
    return b > a, c


def naks_in(path):
    """The NAKs (ACKNOWLEDGE with AETH syndrome 0x62) in a capture, found without scapy first."""
    out = []
    for fr in read_pcap(path):
        if len(fr) >= 62 and fr[12:14] == b"\x08\x00" and fr[42] == ACK and fr[54] == 0x62:
            out.append(fr)
    return out


def nak_frame_check(fr, f, opcode, tag=""):
    """A revocation's NAK @fr (scapy fields @f): @opcode, AETH 0x62, 62 bytes, valid ICRC and checksums."""
    check(f.get("bth.opcode") == opcode and f.get("aeth.syndrome") == 0x62 and f.get("bth.pkey") == 0xffff,
          tag + "NAK: ACKNOWLEDGE, AETH Remote Access Error, default P_Key", f)
    check(f.get("udp.dport") == 4791 and f.get("udp.chksum") == 0 and f.get("len") == 62,
          tag + "NAK: 62 bytes to UDP 4791, checksum 0", f)
    check(icrc_found(fr) == icrc_expected(fr), tag + "NAK: ICRC valid (scapy)", f)
    check(ipv4_header_ok(fr), tag + "NAK: IPv4 checksum valid", f)


def part_bc(build, work):
    prefix = "acl-b-%d" % os.getpid()
    blue_in, fab_in = streams(work)
    # One tx queue per forwarding lcore, and net_pcap has one file per tx queue.
    outs = {"fabric0": [os.path.join(work, "b-fab-out%d.pcap" % q) for q in range(2)],
            "vm-blue-1": [os.path.join(work, "b-blue-out%d.pcap" % q) for q in range(2)]}
    vdevs = ["net_pcap0,rx_pcap=%s,infinite_rx=1,%s" % (fab_in, ",".join("tx_pcap=" + p for p in outs["fabric0"])),
             "net_pcap1,rx_pcap=%s,infinite_rx=1,%s" % (blue_in, ",".join("tx_pcap=" + p for p in outs["vm-blue-1"])),
             "net_null0,no-rx=1"]
    devs = ["net_pcap0", "net_pcap1", "net_null0"]
    paths = {}
    for name, acls in (("allow", None), ("deny17", ACLS_DENY17)):
        paths[name] = os.path.join(work, "b-%s.json" % name)
        with open(paths[name], "w") as f:
            json.dump(config(devs, acls), f)
    k17, k18, k21 = ("blue", B10, 17), ("blue", B10, 18), ("blue", B11, 21)
    # Two forwarding lcores on one CPU: the tenant port's and the uplink's state are written by
    # different lcores, and each sends the NAKs of the requests it forwarded.
    sw = start_switch(build, prefix, vdevs, paths["allow"], "0@0,1@1,2@1")
    naks_expected = {}

    def expect_naks(*kinds):
        for k in kinds:
            naks_expected[k] = naks_expected.get(k, 0) + 1

    def stats():
        return telemetry(prefix, "/roce/stats")

    try:
        if not check(wait_socket(prefix, sw), "(b) the switch answers telemetry"):
            return
        time.sleep(1.0)
        on, c = forwarding(prefix, k17)
        check(on and c.get("verdict") == "allow", "(b) 17 <-> 33 forwards before the revocation", c)

        # (b) /roce/revoke by L's end.
        r = telemetry(prefix, "/roce/revoke,blue,%s,17" % B10)
        check(r.get("revoked") == 1 and r.get("naks_requested") == 2 and r.get("naks_sent") == 2,
              "(b) revoke: one connection, two NAKs", r)
        expect_naks("L17", "R33")
        a, c = conn_pkts(prefix, k17)
        time.sleep(0.5)
        b, c = conn_pkts(prefix, k17)
        check(a == b, "(b) the revoked connection's counters stop", "%d then %d" % (a, b))
        check(c.get("verdict") == "revoked" and c.get("rule") == "/roce/revoke", "(b) verdict revoked",
              (c.get("verdict"), c.get("rule")))
        on, _ = forwarding(prefix, k18)
        check(on, "(b) the other connection keeps forwarding")
        on, _ = forwarding(prefix, k21)
        check(on, "(b) the hairpin keeps forwarding")
        s = stats()
        check(s.get("revocations") == 1 and s.get("naks_sent") == 2, "(b) stats: revocations 1, naks_sent 2",
              (s.get("revocations"), s.get("naks_sent")))
        d1 = telemetry(prefix, "/roce/drops")["revoked"]
        time.sleep(0.3)
        d2 = telemetry(prefix, "/roce/drops")["revoked"]
        check(d2 > d1 > 0, "(b) its frames are dropped as revoked", "%d then %d" % (d1, d2))
        # Revoking again changes nothing and sends nothing.
        r = telemetry(prefix, "/roce/revoke,blue,%s,33" % B20)
        check(r.get("revoked") == 0 and r.get("naks_requested") == 0, "(b) revoking by R's end again: no-op", r)
        check(telemetry(prefix, "/roce/revoked") == ["blue,%s,17" % B10, "blue,%s,33" % B20],
              "(b) the revoked set holds both keys", telemetry(prefix, "/roce/revoked"))
        r = telemetry(prefix, "/roce/unrevoke,blue,%s,17" % B10)
        check(r.get("restored") == 0, "(b) unrevoke of one key while the other holds: still revoked", r)
        r = telemetry(prefix, "/roce/unrevoke,blue,%s,33" % B20)
        check(r.get("restored") == 1, "(b) unrevoke: restored", r)
        time.sleep(0.3)
        on, c = forwarding(prefix, k17)
        check(on and c.get("verdict") == "allow", "(b) forwarding resumes after unrevoke", c)
        r = telemetry(prefix, "/roce/revoke,blue,%s,99" % B10)
        check("error" in r, "(b) revoking an end no connection has is an error", r)
        r = telemetry(prefix, "/roce/revoke,green,%s,17" % B10)
        check("error" in r, "(b) revoking in an unknown tenant is an error", r)

        # (b) the hairpin pair, revoked by .11's end: both its connections, a NAK to each end.
        time.sleep(0.3)
        r = telemetry(prefix, "/roce/revoke,blue,%s,21" % B11)
        check(r.get("connections") == 2 and r.get("revoked") == 2 and r.get("naks_sent") == 2,
              "(b) hairpin revoke: two connections, two NAKs", r)
        expect_naks("H11", "H10")
        on, _ = forwarding(prefix, k21)
        check(not on, "(b) the hairpin stops")
        telemetry(prefix, "/roce/unrevoke,blue,%s,21" % B11)
        on, _ = forwarding(prefix, k21)
        check(on, "(b) the hairpin resumes")
        time.sleep(0.5)

        # (c) a reload whose ACL denies 17 <-> 33 both ways.
        r = telemetry(prefix, "/roce/reload," + paths["deny17"])
        check(r.get("result") == "applied", "(c) reload to the denying policy applied", r)
        a, c = conn_pkts(prefix, k17)
        time.sleep(0.5)
        b, c = conn_pkts(prefix, k17)
        check(a == b, "(c) the denied connection's counters stop", "%d then %d" % (a, b))
        check(c.get("verdict") == "revoked" and c.get("rule") == "acls[0].rules[1],acls[0].rules[0]",
              "(c) verdict revoked, by the rules", (c.get("verdict"), c.get("rule")))
        on, _ = forwarding(prefix, k18)
        check(on, "(c) the other connection keeps forwarding")
        expect_naks("L17", "R33")
        s = stats()
        check(s.get("revocations") == 4 and s.get("naks_sent") == 6, "(c) stats: revocations 4, naks_sent 6",
              (s.get("revocations"), s.get("naks_sent")))
        # The same policy again: still revoked, no new NAK.
        r = telemetry(prefix, "/roce/reload," + paths["deny17"])
        _, c = conn_pkts(prefix, k17)
        check(c.get("verdict") == "revoked" and stats().get("naks_sent") == 6,
              "(c) a reload that still denies: still revoked, no NAK", c.get("verdict"))
        # Policy allows again.
        r = telemetry(prefix, "/roce/reload," + paths["allow"])
        check(r.get("result") == "applied", "(c) reload to the allowing policy applied", r)
        time.sleep(0.3)
        on, c = forwarding(prefix, k17)
        check(on and c.get("verdict") == "allow", "(c) forwarding resumes when policy allows", c)
        time.sleep(0.5)

        # A /roce/revoke holds across a reload until /roce/unrevoke.
        r = telemetry(prefix, "/roce/revoke,blue,%s,33" % B20)
        check(r.get("revoked") == 1 and r.get("naks_sent") == 2, "(c) revoke by R's end", r)
        expect_naks("L17", "R33")
        r = telemetry(prefix, "/roce/reload," + paths["allow"])
        on, c = forwarding(prefix, k17)
        check(not on and c.get("verdict") == "revoked", "(c) the revocation holds across a reload", c)
        r = telemetry(prefix, "/roce/unrevoke,blue,%s,33" % B20)
        check(r.get("restored") == 1, "(c) unrevoke after the reload", r)
        time.sleep(0.3)
        on, c = forwarding(prefix, k17)
        check(on, "(c) forwarding resumes", c)
        s = stats()
        check(s.get("revocations") == 5 and s.get("naks_sent") == 8, "(c) stats: revocations 5, naks_sent 8",
              (s.get("revocations"), s.get("naks_sent")))
    finally:
        rc, summ, err = stop_switch(sw, prefix)
    check(rc == 0 and summ is not None, "(b) the switch exits cleanly", err[-400:])
    if summ is None:
        return
    check(summ.get("revocations") == 5 and summ.get("naks_sent") == 8, "(b) exit summary: revocations, naks_sent",
          (summ.get("revocations"), summ.get("naks_sent")))
    m = summ["mbufs"]
    check(m["in_use_end"] == m["in_use_start"] and m["in_use_after_close"] == 0, "(b) mbuf pool back to baseline", m)
    fwd = summ["forwarded"]["egress"] + summ["forwarded"]["ingress"] + summ["forwarded"]["hairpin"]
    check(summ["tx_packets"] == fwd + summ["naks_sent"] + summ.get("naks_refused", -1000),
          "(b) tx = forwarded + revocation NAKs + refusal NAKs",
          "%d, %d + %d + %s" % (summ["tx_packets"], fwd, summ["naks_sent"], summ.get("naks_refused")))
    unexpected = {k: v for k, v in summ["drops"].items() if v and k not in ("not_ip", "revoked", "acl_denied")}
    check(not unexpected, "(b) drops only for the pacing frames and the revoked connections", unexpected)

    # Exactly the NAKs expected, on the right ports, well formed.  A refusal NAK (a request refused as
    # acl_denied while a reload moves 17 <-> 33 between policies: the old overlay's ACL still in use
    # while its revocation is lifted, or the new one's before it is set) has the addresses and MSN of
    # that direction's revocation NAK and the PSN of one of its stream's requests, as the revocation
    # NAK has the PSN of the oldest request outstanding when it is revoked: the two are told apart by
    # their number (naks_refused), not frame by frame.
    kinds = {"L17": NAK_L17, "R33": NAK_R33, "H11": NAK_H11, "H10": NAK_H10}
    stream_psns = {k: psns for k, (_, _, psns) in REFUSAL_NAKS.items()}
    found = {}
    for port, paths in outs.items():
        for fr in [fr for path in paths for fr in naks_in(path)]:
            f = fields_of(fr)
            kind = None
            for name, (kport, kf) in kinds.items():
                if kport != port or not all(f.get(k) == v for k, v in kf.items() if k != "bth.psn"):
                    continue
                if f.get("bth.psn") == kf["bth.psn"] or f.get("bth.psn") in stream_psns.get(name, ()):
                    kind = name
            check(kind is not None, "(b) a NAK on %s matches an expected one" % port, f)
            found[kind] = found.get(kind, 0) + 1
            nak_frame_check(fr, f, ACK, "(b) ")
    extra = {k: found.get(k, 0) - naks_expected.get(k, 0) for k in set(found) | set(naks_expected)}
    check(all(v == 0 for k, v in extra.items() if k not in REFUSAL_NAKS) and
          all(0 <= v <= 1 for k, v in extra.items() if k in REFUSAL_NAKS),
          "(b) one NAK per endpoint with outstanding requests, per revocation, and at most one refusal NAK per "
          "direction of 17 <-> 33", "got %s, want %s" % (found, naks_expected))
    check(sum(max(v, 0) for v in extra.values()) == summ.get("naks_refused"),
          "(b) the NAKs beyond the revocations' are as many as naks_refused",
          "%s, naks_refused %s" % (extra, summ.get("naks_refused")))


def main(parts=None, tmp_prefix="roce-acl-"):
    """Run @parts (functions of the build and a work directory; this file's by default)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--keep", action="store_true", help="keep the working directory")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    work = tempfile.mkdtemp(prefix=tmp_prefix)
    t0 = time.time()
    try:
        for part in parts or (part_a, part_bc):
            part(build, work)
    finally:
        if a.keep:
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("run time %.1f s" % (time.time() - t0))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
