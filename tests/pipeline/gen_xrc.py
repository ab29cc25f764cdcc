#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
XRC scenarios of the pipeline tests (gen_scenarios.py calls xrc_scenarios()).

The frames are laid out as rxe builds XRC frames (drivers/infiniband/sw/rxe/
rxe_opcode.c, IB_OPCODE_XRC_*): the BTH, then for a request the XRCETH (the
SRQ at the target), then the RETH, AtomicETH, ImmDt or IETH of the RC
operation; XRC responses (READ responses, ACKNOWLEDGE, ATOMIC ACKNOWLEDGE)
carry no XRCETH.  The model below adds to gen_scenarios.Model what the
README says of XRC: an XRC connection renames like RC, requests go only from
the initiator (xrc_ini) to the target (xrc_tgt), and a request's XRCETH SRQ
number is renamed from the target endpoint's vsrqn to its psrqn toward the
fabric and back from the fabric (a hairpin keeps it); an SRQ that is not the
target endpoint's is xrc_srq_unknown.  A request refused for an access reason
is answered as an RC one is (gen_scenarios.Scenario.nak_run()), with XRC's
ACKNOWLEDGE (0xb1).
"""

from gen_scenarios import (  # noqa: E402
    ACK, ATOMIC_ACK, CMP_SWAP, CNP, CNP_EXTS, FETCH_ADD, READ_REQ, RR_FIRST, RR_LAST, RR_ONLY,
    SEND_FIRST, SEND_LAST, SEND_MIDDLE, SEND_ONLY, SEND_ONLY_IMM, SEND_ONLY_INV, WRITE_FIRST, WRITE_LAST,
    WRITE_MIDDLE, WRITE_ONLY, WRITE_ONLY_IMM, Drop, Model, Scenario, Side, aeth, atomic, ieth, imm, ip_norm,
    num, reth)

XRC = 0xa0
# The RC responses by their low 5 bits: XRC's carry no XRCETH.
RESP_LOW = {0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12}


def x(op):
    """The XRC form of the RC operation @op."""
    return XRC | op


def xrceth(srqn):
    return ("XRCETH", {"xrcsrq": srqn})


class XrcModel(Model):
    """gen_scenarios.Model with XRC connections and SRQs."""

    def __init__(self, rel):
        super().__init__(rel)
        self.srq_v, self.srq_p = {}, {}
        for e in self.cfg["endpoints"]:
            for q in e.get("xrc_srqs", []):
                v, p = num(q["vsrqn"]), num(q["psrqn"])
                self.srq_v[(e["tenant"], ip_norm(e["vip"]), v)] = p
                self.srq_p[(ip_norm(e["host"]), p)] = (e["tenant"], ip_norm(e["vip"]), v)

    def ends(self, in_port, f):
        """(sender QP, receiver QP) of a frame of a connection."""
        if in_port != self.uplink["name"]:
            r = self.qps[(self.port_tenant(in_port), ip_norm(f.dst), f.dqpn)]
            return self.peer(r), r
        lq = self.fabric[(self.host, f.dqpn)]
        return self.peer(lq), lq

    def forward(self, in_port, f):
        if f.opcode == CNP:
            return super().forward(in_port, f)
        snd, rcv = self.ends(in_port, f)
        xrc_op = (f.opcode & 0xe0) == XRC
        if xrc_op != rcv["type"].startswith("xrc"):
            raise Drop("type_mismatch")
        if not xrc_op:
            return super().forward(in_port, f)
        req = (f.opcode & 0x1f) not in RESP_LOW
        if req != (snd["type"] == "xrc_ini"):
            raise Drop("type_mismatch")
        if not req:
            return super().forward(in_port, f)
        v = f.ext("XRCETH")["xrcsrq"]
        if in_port != self.uplink["name"]:
            key = (rcv["tenant"], rcv["vip"], v)
            if key not in self.srq_v:
                raise Drop("xrc_srq_unknown")
            new = v if self.local(self.ep(rcv["tenant"], rcv["vip"])) else self.srq_v[key]
        else:
            owner = self.srq_p.get((self.host, v))
            if owner is None or owner[:2] != (rcv["tenant"], rcv["vip"]):
                raise Drop("xrc_srq_unknown")
            new = owner[2]
        o, out, kind, done, t = super().forward(in_port, f)
        o.ext("XRCETH")["xrcsrq"] = new
        return o, out, kind, done, t


Q_VLAN = [(0x8100, 100, 3)]
QINQ = [(0x88a8, 300, 5), (0x8100, 100, 3)]
MR_VA, MR_RKEY = 0x10000, 0x1000


def xrc_scenarios():
    m = XrcModel("examples/pipeline-xrc.json")
    ini = Side(m, "blue", "192.168.1.10", 40)   # local initiator, remote target .20/41 (SRQ 7 -> 6000)
    tgt = Side(m, "blue", "192.168.1.10", 42)   # local target (SRQs 7 -> 5000, 8 -> 5001), remote initiator
    hp = Side(m, "blue", "192.168.1.11", 44)    # hairpin initiator to .10/45
    hpt = Side(m, "blue", "192.168.1.10", 45)   # ... its target
    red = Side(m, "red", "192.168.1.10", 40)    # red's local target (SRQ 7 -> 5002)
    rc = Side(m, "blue", "192.168.1.10", 17)
    out = []

    S = Scenario("xrc", m, "XRC: requests with their XRCETH SRQ renamed both ways (vsrqn to psrqn toward "
                 "the fabric, back from it), responses as RC's, RETH/AtomicETH/IETH translated at the "
                 "target, 802.1Q and QinQ, a hairpin, red reusing blue's numbers")
    # Toward the fabric: the local initiator's requests.
    S.send("vm-blue-1", ini.out(S, x(SEND_ONLY), [xrceth(7)], n=64), "XRC SEND Only, SRQ 7 -> 6000")
    S.send("vm-blue-1", ini.out(S, x(SEND_FIRST), [xrceth(7)], n=256), "XRC SEND First")
    S.send("vm-blue-1", ini.out(S, x(SEND_MIDDLE), [xrceth(7)], n=256), "XRC SEND Middle")
    S.send("vm-blue-1", ini.out(S, x(SEND_LAST), [xrceth(7)], n=100, pad=3, ackreq=1), "XRC SEND Last, pad 3")
    S.send("vm-blue-1", ini.out(S, x(SEND_ONLY_IMM), [xrceth(7), imm(0xfeedface)], n=32, vlans=Q_VLAN),
           "XRC SEND Only with Immediate, 802.1Q")
    S.send("vm-blue-1", ini.out(S, x(WRITE_ONLY), [xrceth(7), reth(0x7f0000005000, 0x5000, 64)], n=64,
                                vlans=QINQ), "XRC WRITE Only, QinQ: RETH untouched toward the fabric")
    S.send("vm-blue-1", ini.out(S, x(READ_REQ), [xrceth(7), reth(0x7f0000005000, 0x5000, 4096)]),
           "XRC READ request")
    S.send("vm-blue-1", ini.out(S, x(FETCH_ADD), [xrceth(7), atomic(0x7f0000005008, 0x5000, 1)]),
           "XRC FetchAdd")
    S.send("vm-blue-1", ini.out(S, x(SEND_ONLY), [xrceth(7)], n=48, udp_csum=True),
           "XRC SEND Only, non-zero UDP checksum")
    S.send("vm-blue-1", ini.out(S, x(SEND_ONLY), [xrceth(7)], n=48, ip_options=b"\x94\x04\x00\x00"),
           "XRC SEND Only, IPv4 options")
    # Their answers from the remote target: no XRCETH.
    S.send("fabric0", ini.inc(S, x(ACK), [aeth(0, 5)]), "XRC ACKNOWLEDGE")
    S.send("fabric0", ini.inc(S, x(RR_FIRST), [aeth(0, 6)], n=256), "XRC READ response First")
    S.send("fabric0", ini.inc(S, x(RR_LAST), [aeth(0, 6)], n=128, vlans=Q_VLAN), "XRC READ response Last, 802.1Q")
    S.send("fabric0", ini.inc(S, x(ATOMIC_ACK), [aeth(0, 7), ("AtomicAckETH", {"orig": 41})]),
           "XRC ATOMIC ACKNOWLEDGE")
    # From the fabric: the remote initiator's requests to the local target.
    S.send("fabric0", tgt.inc(S, x(SEND_ONLY), [xrceth(5000)], n=64), "XRC SEND Only, SRQ 5000 -> 7")
    S.send("fabric0", tgt.inc(S, x(SEND_ONLY), [xrceth(5001)], n=64, vlans=Q_VLAN),
           "XRC SEND Only, SRQ 5001 -> 8, 802.1Q")
    S.send("fabric0", tgt.inc(S, x(WRITE_FIRST), [xrceth(5000), reth(MR_VA + 0x100, MR_RKEY, 512)], n=256),
           "XRC WRITE First: SRQ and RETH translated")
    S.send("fabric0", tgt.inc(S, x(WRITE_MIDDLE), [xrceth(5000)], n=128), "XRC WRITE Middle")
    S.send("fabric0", tgt.inc(S, x(WRITE_LAST), [xrceth(5000)], n=128), "XRC WRITE Last")
    S.send("fabric0", tgt.inc(S, x(WRITE_ONLY_IMM), [xrceth(5001), reth(MR_VA, MR_RKEY, 32), imm(3)], n=32,
                              vlans=QINQ), "XRC WRITE Only with Immediate, QinQ: translated")
    S.send("fabric0", tgt.inc(S, x(READ_REQ), [xrceth(5000), reth(MR_VA + 0xff00, MR_RKEY, 0x100)]),
           "XRC READ request at the window's end: translated")
    S.send("fabric0", tgt.inc(S, x(SEND_ONLY_INV), [xrceth(5000), ieth(MR_RKEY)], n=16),
           "XRC SEND Only with Invalidate: IETH translated")
    S.send("fabric0", tgt.inc(S, x(SEND_ONLY), [xrceth(5000)], n=48, udp_csum=True),
           "XRC SEND Only, non-zero UDP checksum")
    # The local target's answers.
    S.send("vm-blue-1", tgt.out(S, x(ACK), [aeth(0, 9)]), "XRC ACKNOWLEDGE toward the fabric")
    S.send("vm-blue-1", tgt.out(S, x(RR_ONLY), [aeth(0, 10)], n=256, vlans=Q_VLAN),
           "XRC READ response Only, 802.1Q")
    # A hairpin: the SRQ number stays the tenant's (.10's vsrqn 7).
    S.send("vm-blue-1", hp.out(S, x(SEND_ONLY), [xrceth(7)], n=64), "hairpin XRC SEND Only: SRQ 7 kept")
    S.send("vm-blue-1", hp.out(S, x(WRITE_ONLY), [xrceth(8), reth(MR_VA + 8, MR_RKEY, 16)], n=16),
           "hairpin XRC WRITE Only: RETH translated, SRQ 8 kept")
    S.send("vm-blue-1", hpt.out(S, x(ACK), [aeth(0, 1)]), "hairpin XRC ACKNOWLEDGE back")
    # Red: the same vIPs and numbers, its own psrqn.
    S.send("fabric0", red.inc(S, x(SEND_ONLY), [xrceth(5002)], n=64), "red XRC SEND Only, SRQ 5002 -> 7")
    S.send("vm-red-1", red.out(S, x(ACK), [aeth(0, 2)]), "red XRC ACKNOWLEDGE")
    # CNPs fit every QP type.
    S.send("vm-blue-1", ini.out(S, CNP, CNP_EXTS, psn=0), "CNP to the XRC target")
    S.send("fabric0", tgt.inc(S, CNP, CNP_EXTS, psn=0), "CNP from the XRC initiator's host")
    out.append(S)

    S = Scenario("xrc_drops", m, "XRC drops: unknown SRQs (another endpoint's, another tenant's, on "
                 "either side), requests against the direction, opcodes of another transport, the "
                 "target's MR checks and ACL, answered with XRC NAKs")
    S.mdrop("vm-blue-1", ini.out(S, x(SEND_ONLY), [xrceth(8)], n=64), "xrc_srq_unknown",
            "vsrqn 8 is .10's, not the target .20's")
    S.mdrop("vm-blue-1", ini.out(S, x(WRITE_FIRST), [xrceth(6000), reth(0, 0x5000, 512)], n=256),
            "xrc_srq_unknown", "the psrqn itself sent from the tenant")
    S.send("vm-blue-1", ini.out(S, x(SEND_ONLY), [xrceth(7)], n=64), "the right SRQ still forwards")
    S.mdrop("fabric0", tgt.inc(S, x(SEND_ONLY), [xrceth(5002)], n=64), "xrc_srq_unknown",
            "red's psrqn 5002 sent to blue's target")
    S.mdrop("fabric0", tgt.inc(S, x(SEND_ONLY), [xrceth(5003)], n=64), "xrc_srq_unknown",
            "blue .11's psrqn sent to .10's target")
    S.mdrop("fabric0", tgt.inc(S, x(SEND_ONLY), [xrceth(7)], n=64), "xrc_srq_unknown",
            "a vsrqn from the fabric")
    S.mdrop("fabric0", red.inc(S, x(SEND_ONLY), [xrceth(5000)], n=64), "xrc_srq_unknown",
            "blue's psrqn 5000 sent to red's target")
    S.mdrop("vm-blue-1", hp.out(S, x(SEND_ONLY), [xrceth(9)], n=64), "xrc_srq_unknown",
            "hairpin: 9 is the initiator's own SRQ, not the target's")
    # Direction: requests from the initiator only, answers from the target only.
    S.mdrop("vm-blue-1", tgt.out(S, x(SEND_ONLY), [xrceth(7)], n=64), "type_mismatch",
            "a request from the target")
    S.mdrop("fabric0", ini.inc(S, x(SEND_ONLY), [xrceth(5000)], n=64), "type_mismatch",
            "a request to the initiator")
    S.mdrop("vm-blue-1", ini.out(S, x(ACK), [aeth(0, 1)]), "type_mismatch", "an answer from the initiator")
    S.mdrop("fabric0", tgt.inc(S, x(ACK), [aeth(0, 1)]), "type_mismatch", "an answer to the target")
    # Another transport's opcodes.
    S.mdrop("vm-blue-1", ini.out(S, SEND_ONLY, n=64), "type_mismatch", "an RC SEND to an XRC target")
    S.mdrop("fabric0", tgt.inc(S, SEND_ONLY, n=64), "type_mismatch", "an RC SEND to an XRC target, fabric")
    S.mdrop("vm-blue-1", rc.out(S, x(SEND_ONLY), [xrceth(7)], n=64), "type_mismatch",
            "an XRC SEND on an RC connection")
    # The target's memory (blue enforces) and ACL (no XRC atomics from .20 to .10).
    S.mdrop("fabric0", tgt.inc(S, x(WRITE_ONLY), [xrceth(5000), reth(MR_VA + 0xfff0, MR_RKEY, 32)], n=32),
            "mr_out_of_bounds", "XRC WRITE Only one past the window")
    S.mdrop("fabric0", tgt.inc(S, x(READ_REQ), [xrceth(5000), reth(MR_VA, 0x9999, 64)]), "mr_unknown",
            "XRC READ with an unknown rkey")
    S.mdrop("fabric0", tgt.inc(S, x(CMP_SWAP), [xrceth(5000), atomic(MR_VA, MR_RKEY, 1, 2)]), "acl_denied",
            "XRC CmpSwap: the ACL denies XRC atomics .20 -> .10")
    S.mdrop("fabric0", tgt.inc(S, x(WRITE_FIRST), [xrceth(5000), reth(MR_VA, 0x7777, 512)], n=256),
            "mr_unknown", "XRC WRITE First with an unknown rkey")
    S.drop("fabric0", tgt.inc(S, x(WRITE_LAST), [xrceth(5000)], n=128), "message_denied",
           "... and its Last")
    S.send("fabric0", tgt.inc(S, x(SEND_ONLY), [xrceth(5000)], n=64), "the next message forwards")
    # On the hairpin the owner .10 is local: the initiator .11 gets the NAK on its port.
    S.send("vm-blue-1", hpt.out(S, x(ACK), [aeth(0, 0x21)]), "hairpin XRC ACKNOWLEDGE, MSN 0x21")
    S.mdrop("vm-blue-1", hp.out(S, x(WRITE_ONLY), [xrceth(7), reth(MR_VA, 0x9999, 16)], n=16, vlans=Q_VLAN),
            "mr_unknown", "hairpin XRC WRITE Only with an unknown rkey, 802.1Q")
    out.append(S)

    m6 = XrcModel("examples/pipeline-xrc6.json")
    ini6 = Side(m6, "green", "fd00:1::10", 40)
    tgt6 = Side(m6, "green", "fd00:1::10", 42)
    S = Scenario("xrc_ipv6", m6, "XRC over IPv6: the SRQ renamed both ways, RETH translated at the "
                 "target, untagged and 802.1Q, an unknown SRQ")
    S.send("vm-green-1", ini6.out(S, x(SEND_ONLY), [xrceth(7)], n=64), "XRC SEND Only, SRQ 7 -> 0x20007")
    S.send("vm-green-1", ini6.out(S, x(WRITE_ONLY), [xrceth(7), reth(0x1000, 0x77, 64)], n=64, vlans=Q_VLAN),
           "XRC WRITE Only, 802.1Q")
    S.send("fabric0", ini6.inc(S, x(ACK), [aeth(0, 4)]), "XRC ACKNOWLEDGE")
    S.send("fabric0", tgt6.inc(S, x(SEND_ONLY), [xrceth(0x10007)], n=64, vlans=Q_VLAN),
           "XRC SEND Only, SRQ 0x10007 -> 7, 802.1Q")
    S.send("fabric0", tgt6.inc(S, x(WRITE_ONLY), [xrceth(0x10007), reth(0x7f0000100000, 0x2001, 128)], n=128),
           "XRC WRITE Only: SRQ and RETH translated")
    S.send("vm-green-1", tgt6.out(S, x(ACK), [aeth(0, 11)]), "XRC ACKNOWLEDGE toward the fabric")
    S.mdrop("fabric0", tgt6.inc(S, x(SEND_ONLY), [xrceth(0x20007)], n=64), "xrc_srq_unknown",
            "the remote endpoint's psrqn")
    S.mdrop("fabric0", tgt6.inc(S, x(WRITE_ONLY), [xrceth(0x10007), reth(0x7f0000200000, 0x2001, 8)], n=8,
                                vlans=Q_VLAN), "mr_out_of_bounds", "XRC WRITE Only past the window, 802.1Q")
    S.mdrop("vm-green-1", ini6.out(S, x(SEND_ONLY), [xrceth(8)], n=64), "xrc_srq_unknown", "no SRQ 8 at .20")
    out.append(S)
    return out
