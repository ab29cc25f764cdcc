#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Pipeline scenarios for dpdk-roce-vswitch, made by scapy.

For each scenario this writes, under tests/pipeline/data/:

  <name>.<port>.pcap   the frames fed to that port (only ports that get any)
  <name>.json          what must come out: every output frame (bytes and
                       decoded fields) per port, and every counter of the
                       exit summary (drops by reason, per port, per tenant)
  index.json           the scenario names, in run order

The expected output of a forwarded frame is computed by a small model of
DESIGN.md "Packet paths" and "Addresses on the wire" written here from the
configuration file (not from the C code), and built by scapy: the ICRC by
scapy for IPv4 (checked against icrc_zlib()) and by icrc_zlib() for IPv6.
Drops are written out by hand, reason by reason.

Deterministic: fixed field values and pcap timestamps.  Run with the Debian
Python (scapy 2.5):  /usr/bin/python3 tests/pipeline/gen_scenarios.py
"""

import copy
import ipaddress
import json
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from pipeline_wire import (  # noqa: E402
    ROOT, BTH, AETH, CNPPadding, DETH, XRCETH, FETH, RETH, AtomicETH, AtomicAckETH, ImmDt, IETH,
    Ether, Dot1Q, Dot1AD, IP, UDP, IPv6, Raw, icrc_zlib, icrc_found,
    fields_of, write_pcap)
from scapy.layers.inet import IPOption  # noqa: E402
from scapy.compat import raw  # noqa: E402

DATA = os.path.join(HERE, "data")

# Opcodes (IBTA Vol 1 table 38, Annex A17).
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY, SEND_ONLY_IMM = 0, 1, 2, 3, 4, 5
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM, WRITE_ONLY, WRITE_ONLY_IMM = 6, 7, 8, 9, 10, 11
READ_REQ, RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY = 0x0c, 0x0d, 0x0e, 0x0f, 0x10
ACK, ATOMIC_ACK, CMP_SWAP, FETCH_ADD = 0x11, 0x12, 0x13, 0x14
SEND_LAST_INV, SEND_ONLY_INV = 0x16, 0x17
FLUSH, ATOMIC_WRITE = 0x1c, 0x1d  # IBTA 1.5, RC only
UC_SEND_ONLY, UC_WRITE_ONLY = 0x24, 0x2a
UD_SEND_ONLY, UD_SEND_ONLY_IMM = 0x64, 0x65
CNP = 0x81

# The message-opening requests (First or Only) of RC and UC, by low 5 bits.
OPENING = {0x00, 0x04, 0x05, 0x06, 0x0a, 0x0b, 0x0c, 0x13, 0x14, 0x17, 0x1c, 0x1d}
# The operation class of an opening request, for ACLs (README "ACLs and
# revocation"); a FLUSH is policed as a write, an ATOMIC WRITE is a write.
OP_CLASS = {0x00: "send", 0x04: "send", 0x05: "send", 0x17: "send",
            0x06: "write", 0x0a: "write", 0x0b: "write", 0x1d: "write", 0x1c: "write",
            0x0c: "read", 0x13: "atomic", 0x14: "atomic"}
# C9-88: a zero-length RDMA WRITE or READ is not checked and not translated.
ZERO_LEN_EXEMPT = {0x06, 0x0a, 0x0b, 0x0c}

# RC request opcodes (the request role): everything of the RC transport but
# the READ responses, ACKNOWLEDGE and ATOMIC ACKNOWLEDGE (0x0d to 0x12).
RC_RESPONSES = {0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12}
# Responses with an AETH, whose MSN a refusal's NAK repeats.
AETH_RESPONSES = {0x0d, 0x0f, 0x10, 0x11, 0x12}
# Drops answered with a NAK when the frame is an RC request on an RC
# connection (README "NAKs of refused requests").
NAK_REASONS = {"mr_unknown", "mr_out_of_bounds", "mr_access_denied", "acl_denied"}
NAK_SYNDROME = 0x62   # remote access error
# The switch takes at most this many frames of a port at once (DP_BURST).
RX_BURST = 32
ETH_MIN = 60          # Ethernet's shortest frame without FCS


def rc_request(opcode):
    """An RC request, or an XRC one (the same operations at 0xa0)."""
    return (opcode & 0xe0) in (0x00, 0xa0) and (opcode & 0x1f) not in RC_RESPONSES


SWITCH_DROPS = ["no_connection", "wrong_tenant", "spoofed_source", "not_our_host", "gsi",
                "type_mismatch", "mr_unknown", "mr_out_of_bounds", "mr_access_denied",
                "message_denied", "acl_denied", "revoked", "nonlinear", "tx_failed",
                "shaping_watchdog", "shaping_overflow", "shaping_nobufs", "shaping_detached",
                "conn_removed", "shutdown", "privileged_qkey", "xdp_denied", "xrc_srq_unknown",
                "vlan_mismatch", "unresolved"]


def parse_error_names():
    """The error names of ROCE_PARSE_ERRORS in rocev2/roce_parse.h, in order."""
    with open(os.path.join(ROOT, "rocev2", "roce_parse.h")) as f:
        text = f.read()
    body = re.search(r"#define ROCE_PARSE_ERRORS\(X\)((?:.*\\\n)*.*\n)", text).group(1)
    names = re.findall(r'X\(\s*[A-Z_0-9]+\s*,\s*"([a-z_0-9]+)"', body)
    assert len(names) == 20, names
    return names


PARSE_DROPS = parse_error_names()
# Drops on the fabric side that come after the (host, pqpn) lookup.
FABRIC_ATTRIBUTED = {"spoofed_source", "type_mismatch", "mr_unknown", "mr_out_of_bounds",
                     "mr_access_denied", "message_denied", "acl_denied", "revoked", "xrc_srq_unknown",
                     "vlan_mismatch"}
ALL_DROPS = PARSE_DROPS + SWITCH_DROPS


def ip_norm(s):
    return str(ipaddress.ip_address(s))


def num(v):
    return int(v, 0) if isinstance(v, str) else int(v)


# ---------------------------------------------------------------------------
# Frames.

EXT_CLASSES = {"DETH": DETH, "XRCETH": XRCETH, "FETH": FETH, "RETH": RETH, "AtomicETH": AtomicETH, "AETH": AETH,
               "AtomicAckETH": AtomicAckETH, "ImmDt": ImmDt, "IETH": IETH,
               "CNPPadding": CNPPadding}


class F:
    """
    A well-formed RoCEv2 frame, described by its fields.  @l2pad: Ethernet
    padding after the ICRC (outside the IP length, so outside every length,
    checksum and the ICRC), as a NIC adds to a frame under 60 bytes.
    """

    DEFAULTS = dict(eth_dst=None, eth_src=None, vlans=(), src=None, dst=None,
                    tos=0x68, ttl=64, ip_id=0, ip_flags="DF", ip_options=None,
                    fl=0, sport=0xc000, udp_csum=False, opcode=SEND_ONLY, se=0, m=1, pad=0,
                    pkey=0xffff, fecn=0, becn=0, dqpn=0, ackreq=0, psn=0, exts=(),
                    payload=b"", l2pad=b"")

    def __init__(self, **kw):
        for k, v in self.DEFAULTS.items():
            setattr(self, k, copy.deepcopy(v))
        for k, v in kw.items():
            assert k in self.DEFAULTS, k
            setattr(self, k, v)
        self.exts = [(n, dict(a)) for n, a in self.exts]

    def copy(self, **kw):
        c = copy.deepcopy(self)
        for k, v in kw.items():
            assert k in self.DEFAULTS, k
            setattr(c, k, v)
        return c

    @property
    def ver(self):
        return ipaddress.ip_address(self.src).version

    def ext(self, name):
        for n, a in self.exts:
            if n == name:
                return a
        return None

    def scapy(self):
        p = Ether(dst=self.eth_dst, src=self.eth_src)
        for tpid, vid, prio in self.vlans:
            p = p / (Dot1AD(vlan=vid, prio=prio) if tpid == 0x88a8 else Dot1Q(vlan=vid, prio=prio))
        if self.ver == 4:
            kw = dict(src=self.src, dst=self.dst, tos=self.tos, ttl=self.ttl, id=self.ip_id,
                      flags=self.ip_flags)
            if self.ip_options:
                kw["options"] = [IPOption(self.ip_options)]
            p = p / IP(**kw)
        else:
            p = p / IPv6(src=self.src, dst=self.dst, tc=self.tos, fl=self.fl, hlim=self.ttl)
        p = p / UDP(sport=self.sport, dport=4791, chksum=None if self.udp_csum else 0)
        p = p / BTH(opcode=self.opcode, solicited=self.se, migreq=self.m, padcount=self.pad,
                    pkey=self.pkey, fecn=self.fecn, becn=self.becn, dqpn=self.dqpn,
                    ackreq=self.ackreq, psn=self.psn)
        for n, a in self.exts:
            p = p / EXT_CLASSES[n](**a)
        if self.payload:
            p = p / Raw(self.payload)
        return p

    def build(self):
        """(frame bytes with the ICRC sealed, the scapy expression)."""
        p = self.scapy()
        fr = bytes(p)
        src = p.command()
        if self.l2pad:
            src = "raw(%s) + %r  # Ethernet padding" % (src, bytes(self.l2pad))
        if self.ver == 6:
            assert icrc_found(fr) == 0
            fr = fr[:-4] + struct.pack("<I", icrc_zlib(fr))
            src += "  # ICRC: icrc_zlib() (scapy 2.5 leaves IPv6 ICRCs zero)"
            if self.udp_csum:
                # scapy summed the UDP datagram with the ICRC still zero.
                fr = udp6_csum(fr, len(self.vlans))
                src += ", then the UDP checksum (RFC 8200 8.1)"
        else:
            assert icrc_zlib(fr) == icrc_found(fr), "scapy and zlib ICRCs differ: " + src
            src += "  # ICRC: scapy"
        if self.l2pad:
            fr += bytes(self.l2pad)
            # The ICRC ignores the padding: the helpers take the frame's extent
            # from the IP length.
            assert icrc_zlib(fr) == icrc_found(fr)
        return fr, src


def udp6_csum(fr, n_vlans):
    """@fr (IPv6, no extension headers) with its UDP checksum computed again (RFC 8200 8.1)."""
    l3 = 14 + 4 * n_vlans
    l4 = l3 + 40
    ulen = struct.unpack("!H", fr[l4 + 4:l4 + 6])[0]
    dgram = fr[l4:l4 + 6] + b"\0\0" + fr[l4 + 8:l4 + ulen]
    data = fr[l3 + 8:l3 + 40] + struct.pack("!IxxxB", ulen, 17) + dgram
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    c = ~s & 0xffff or 0xffff
    return fr[:l4 + 6] + struct.pack("!H", c) + fr[l4 + 8:]


# ---------------------------------------------------------------------------
# The model: DESIGN.md "Packet paths" over one configuration file.

class Drop(Exception):
    """The model drops the frame, for reason .reason."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class Model:
    def __init__(self, rel):
        self.rel = rel
        with open(os.path.join(ROOT, rel)) as f:
            c = json.load(f)
        self.cfg = c
        self.ports = {p["name"]: p for p in c["ports"]}
        self.port_order = [p["name"] for p in c["ports"]]
        ups = [p for p in c["ports"] if p["role"] == "uplink"]
        assert len(ups) == 1, "the model knows one uplink"
        self.uplink = ups[0]
        self.host = ip_norm(self.uplink["ip"])
        self.eps = {(e["tenant"], ip_norm(e["vip"])): e for e in c["endpoints"]}
        self.qps = {}
        self.fabric = {}
        for q in c["qps"]:
            q = dict(q)
            q["vip"] = ip_norm(q["vip"])
            q["vqpn"], q["pqpn"] = num(q["vqpn"]), num(q["pqpn"])
            q["host"] = ip_norm(self.eps[(q["tenant"], q["vip"])]["host"])
            self.qps[(q["tenant"], q["vip"], q["vqpn"])] = q
            self.fabric[(q["host"], q["pqpn"])] = q
        self.mrs = {(m["tenant"], ip_norm(m["vip"]), num(m["rkey"])): m for m in c.get("mrs", [])}
        self.neigh = {ip_norm(n["ip"]): n["mac"] for n in c.get("neighbors", [])}
        self.tenants = {t["name"]: t for t in c["tenants"]}
        self.acls = {a["tenant"]: a for a in c.get("acls", [])}

    def port_tenant(self, port):
        return self.ports[port].get("tenant")

    def ep(self, tenant, vip):
        return self.eps[(tenant, ip_norm(vip))]

    def local(self, ep):
        return ip_norm(ep["host"]) == self.host

    def peer(self, q):
        return self.qps[(q["tenant"], ip_norm(q["peer"]["vip"]), num(q["peer"]["vqpn"]))]

    def host_mac(self, host):
        return self.neigh.get(ip_norm(host), self.uplink.get("gateway_mac"))

    def to_endpoint(self, ep):
        """(eth dst, eth src, out port) of a frame addressed to @ep."""
        if self.local(ep):
            return ep["mac"], self.ports[ep["port"]]["mac"], ep["port"]
        return self.host_mac(ep["host"]), self.uplink["mac"], self.uplink["name"]

    def translate(self, tenant, owner_vip, f):
        """
        At the memory's owner: translate the RETH or AtomicETH of an opening
        request and the IETH of a SEND with Invalidate in @f, in place.
        True if anything was translated.  A check that fails raises Drop
        under mr_check "enforce"; otherwise the frame goes untranslated.
        """
        enforce = self.tenants[tenant].get("mr_check", "off") == "enforce"
        # XRC requests carry the RC operations' headers (after their XRCETH).
        low, rcuc = f.opcode & 0x1f, (f.opcode & 0xe0) in (0x00, 0x20, 0xa0)
        done = False
        for name in ("RETH", "AtomicETH"):
            h = f.ext(name)
            if h is None or not rcuc or low not in OPENING:
                continue
            if name == "RETH":
                n = h["dmalen"]
                if n == 0 and low in ZERO_LEN_EXEMPT:
                    break  # C9-88: names no memory
                need = {READ_REQ: "remote_read", FLUSH: "flush"}.get(low, "remote_write")
            else:
                n, need = 8, "remote_atomic"
            mr = self.mrs.get((tenant, ip_norm(owner_vip), h["rkey"]))
            reason = None
            if mr is None:
                reason = "mr_unknown"
            elif not (num(mr["addr"]) <= h["va"] and h["va"] + n <= num(mr["addr"]) + num(mr["length"])):
                reason = "mr_out_of_bounds"
            elif need not in mr["access"]:
                reason = "mr_access_denied"
            if reason:
                if enforce:
                    raise Drop(reason)
                break
            h["va"] = num(mr["target_addr"]) + (h["va"] - num(mr["addr"]))
            h["rkey"] = num(mr["target_rkey"])
            done = True
            break
        h = f.ext("IETH")
        if h is not None:
            # The R_Key to invalidate: looked up among the owner's MRs, no
            # bounds or access to check.
            mr = self.mrs.get((tenant, ip_norm(owner_vip), h["rkey"]))
            if mr is None:
                if enforce:
                    raise Drop("mr_unknown")
            else:
                h["rkey"] = num(mr["target_rkey"])
                done = True
        return done

    def acl_check(self, tenant, qtype, requester, responder, f):
        """Raise Drop("acl_denied") for an opening request the tenant's ACL denies."""
        low = f.opcode & 0x1f
        if (f.opcode & 0xe0) not in (0x00, 0x20, 0xa0) or low not in OPENING:
            return
        # Both ends of an XRC connection are of the ACL type "xrc".
        qtype = "xrc" if qtype.startswith("xrc") else qtype
        acl = self.acls.get(tenant)
        if acl is None:
            return
        op = OP_CLASS[low]
        verdict = acl.get("default", "allow")
        for r in acl.get("rules", []):
            if "src" in r and ipaddress.ip_address(requester) not in ipaddress.ip_network(r["src"]):
                continue
            if "dst" in r and ipaddress.ip_address(responder) not in ipaddress.ip_network(r["dst"]):
                continue
            if "types" in r and qtype not in r["types"]:
                continue
            if "ops" in r and op not in r["ops"]:
                continue
            verdict = r["action"]
            break
        if verdict == "deny":
            raise Drop("acl_denied")

    def conn_of(self, in_port, f):
        """
        The RC connection of an RC frame @f entering @in_port, for the NAK
        rules: (tenant, sender QP, receiver QP), or None (not RC, or not a
        connection).  Sender and receiver are the two ends as the frame
        travels; one direction of a connection is one (sender, receiver).
        """
        if (f.opcode & 0xe0) not in (0x00, 0xa0):  # RC, or XRC (answered with XRC's ACK)
            return None
        try:
            if in_port != self.uplink["name"]:
                t = self.port_tenant(in_port)
                r = self.qps[(t, ip_norm(f.dst), f.dqpn)]
                lq = self.peer(r)
                snd, rcv = lq, r
            else:
                lq = self.fabric[(ip_norm(f.dst), f.dqpn)]
                t = lq["tenant"]
                snd, rcv = self.peer(lq), lq
        except KeyError:
            return None
        if {snd["type"], rcv["type"]} not in ({"rc"}, {"xrc_ini", "xrc_tgt"}):
            return None
        return t, snd, rcv

    def nak(self, in_port, f, snd, rcv, msn):
        """
        (frame, out port) of the NAK that answers the refused request @f
        (from @snd to @rcv): as if @rcv had answered, in the requester's
        view.  From the fabric: out of the uplink with the template of the
        local end's frames toward the remote host; from a tenant port: out
        of that port, in the tenant's virtual view.
        """
        if in_port == self.uplink["name"]:
            eth_dst, eth_src, out = self.host_mac(snd["host"]), self.uplink["mac"], self.uplink["name"]
            src, dst, dqpn = self.host, snd["host"], snd["pqpn"]
        else:
            le = self.ep(snd["tenant"], snd["vip"])
            eth_dst, eth_src, out = le["mac"], self.ports[le["port"]]["mac"], le["port"]
            src, dst, dqpn = rcv["vip"], snd["vip"], snd["vqpn"]
        # The tags of the requester's side (vlan_tags()): under "keep" the request's,
        # by TCI; the builder writes 0x88a8 outside when there are two.
        vl = [(0x8100, vid, prio) for _, vid, prio in
              self.vlan_tags(self.vlan_policy(snd["tenant"], out), f.vlans, f.tos >> 2)]
        if len(vl) == 2:
            vl[0] = (0x88a8,) + vl[0][1:]
        n = F(eth_dst=eth_dst, eth_src=eth_src, vlans=vl, src=src, dst=dst,
              tos=f.tos & 0xfc, ttl=64, ip_id=0, ip_flags="DF", fl=0,
              sport=0xc000 | (dqpn & 0x3fff), opcode=(f.opcode & 0xe0) | ACK, m=0, pkey=f.pkey, dqpn=dqpn,
              psn=f.psn, exts=[aeth(NAK_SYNDROME, msn)])
        return n, out

    def verdict(self, in_port, f):
        """The drop reason the model gives @f, or None if it forwards."""
        try:
            self.forward(in_port, f)
        except Drop as e:
            return e.reason
        return None

    def vlan_policy(self, tenant, port):
        """
        The "vlan" policy of @tenant's frames on @port: on an uplink the
        tenant's own if it has one, else the port's ("keep" when absent);
        "vni" as "tagged" with the tenant's vni.
        """
        p = self.ports[port]
        pol = self.tenants[tenant].get("vlan") if p["role"] == "uplink" else None
        pol = dict(pol or p.get("vlan") or {"mode": "keep"})
        if pol["mode"] == "vni":
            pol.update(mode="tagged", vid=self.tenants[tenant]["vni"])
        return pol

    @staticmethod
    def vlan_accepts(pol, vlans):
        """Whether a side of policy @pol takes a frame with @vlans [(tpid, vid, prio)]."""
        if pol["mode"] == "untagged":
            return not vlans or (len(vlans) == 1 and vlans[0][0] == 0x8100 and vlans[0][1] == 0)
        if pol["mode"] == "tagged":
            return len(vlans) == 1 and vlans[0][0] == 0x8100 and vlans[0][1] == pol["vid"]
        return True

    @staticmethod
    def vlan_tags(pol, vlans, dscp):
        """The tags a frame that arrived with @vlans leaves a side of policy @pol with."""
        if pol["mode"] == "untagged":
            return []
        if pol["mode"] == "tagged":
            prio = dscp >> 3 if pol.get("pcp", "dscp") == "dscp" else (vlans[0][2] if vlans else 0)
            return [(0x8100, pol["vid"], prio)]
        return list(vlans)

    @staticmethod
    def xlate(f, o, lq, rq):
        """
        An RC/UC frame between vips of one IP version over hosts of the other
        (docs/wire.md "IPv4 vips over IPv6 hosts"): @o, already readdressed,
        gets the other version's IP header.  DSCP, ECN and TTL/hop limit carry
        over; toward IPv6 the flow label is the connection's (the ECMP mix of
        the local and the remote pqpn, tests/ecmp/test_ecmp.py), toward IPv4
        id 0 with DF and no options; a zero UDP checksum stays zero (a
        non-zero one is scapy's over the new pseudo-header); Ethernet padding
        is what the new length needs to reach 60 bytes, zeros.
        """
        if o.ver == f.ver:
            return
        if o.ver == 6:
            h = ((lq["pqpn"] * 0x9e3779b1) & 0xffffffff) ^ ((rq["pqpn"] * 0x85ebca6b) & 0xffffffff)
            h ^= h >> 15
            h = (h * 0xc2b2ae35) & 0xffffffff
            h ^= h >> 13
            o.fl = (h >> 12) & 0xfffff
        else:
            o.ip_id, o.ip_flags, o.fl = 0, "DF", 0
        o.ip_options = None
        o.l2pad = b""
        o.l2pad = bytes(max(0, 60 - len(o.build()[0])))

    def forward(self, in_port, f):
        """
        _forward() with the VLAN policies: the frame must carry the tags of
        the side it arrives on (a fabric frame once its QP is known), and
        leaves with those of the side it goes to.  A frame a removed tag
        leaves under 60 bytes is padded with zeros.
        """
        if in_port != self.uplink["name"]:
            t = self.port_tenant(in_port)
        else:
            q = self.fabric.get((ip_norm(f.dst), f.dqpn))
            t = q["tenant"] if q else None
        if t and not self.vlan_accepts(self.vlan_policy(t, in_port), f.vlans):
            raise Drop("vlan_mismatch")
        o, out, kind, done, tenant = self._forward(in_port, f)
        pol = self.vlan_policy(tenant, out)
        if pol["mode"] != "keep":
            o.vlans = self.vlan_tags(pol, f.vlans, f.tos >> 2)
            n = len(f.build()[0]) - len(f.l2pad) + 4 * (len(o.vlans) - len(f.vlans))
            if n + len(o.l2pad) < ETH_MIN:
                o.l2pad = bytes(o.l2pad) + bytes(ETH_MIN - n - len(o.l2pad))
        return o, out, kind, done, tenant

    def _forward(self, in_port, f):
        """
        The frame @f (arriving on @in_port) as it must leave, tags aside:
        returns (frame, out port, kind, translated, tenant) where kind is
        egress, ingress or hairpin.
        """
        o = f.copy()
        ud = (f.opcode & 0xe0) == 0x60
        if in_port != self.uplink["name"]:
            t = self.port_tenant(in_port)
            r = self.qps[(t, ip_norm(f.dst), f.dqpn)]
            if f.opcode == CNP and r["type"] == "ud":
                # A CNP to a UD QP: no DETH, its sender is the endpoint of its source vIP.
                le, re_ = self.ep(t, f.src), self.ep(t, r["vip"])
                assert le["port"] == in_port and le["mac"] == f.eth_src
                o.eth_dst, o.eth_src, out = self.to_endpoint(re_)
                if self.local(re_):
                    return o, out, "hairpin", False, t
                o.src, o.dst, o.dqpn = self.host, ip_norm(re_["host"]), r["pqpn"]
                return o, out, "egress", False, t
            if ud:
                lq = self.qps[(t, ip_norm(f.src), f.ext("DETH")["srcqp"])]
            else:
                lq = self.peer(r)
            le, re_ = self.ep(t, lq["vip"]), self.ep(t, r["vip"])
            assert le["port"] == in_port and le["mac"] == f.eth_src and ip_norm(f.src) == lq["vip"]
            if not ud:
                self.acl_check(t, lq["type"], lq["vip"], r["vip"], f)
            o.eth_dst, o.eth_src, out = self.to_endpoint(re_)
            if self.local(re_):
                kind = "hairpin"
                done = False if ud else self.translate(t, r["vip"], o)
            else:
                kind = "egress"
                o.src, o.dst, o.dqpn = self.host, ip_norm(re_["host"]), r["pqpn"]
                if ud:
                    o.ext("DETH")["srcqp"] = lq["pqpn"]
                else:
                    self.xlate(f, o, lq, r)
                done = False
            return o, out, kind, done, t
        # Fabric to tenant.
        assert ip_norm(f.dst) == self.host
        lq = self.fabric[(self.host, f.dqpn)]
        t = lq["tenant"]
        if f.opcode == CNP and lq["type"] == "ud":
            # From the tenant's first endpoint (configuration order) on the sending host.
            snd = next(e for (et, _), e in self.eps.items() if et == t and ip_norm(e["host"]) == ip_norm(f.src))
            le = self.ep(t, lq["vip"])
            o.eth_dst, o.eth_src, out = self.to_endpoint(le)
            o.src, o.dst, o.dqpn = ip_norm(snd["vip"]), lq["vip"], lq["vqpn"]
            return o, out, "ingress", False, t
        if ud:
            r = self.fabric[(ip_norm(f.src), f.ext("DETH")["srcqp"])]
            assert r["tenant"] == t
        else:
            r = self.peer(lq)
            assert r["host"] == ip_norm(f.src)
            self.acl_check(t, lq["type"], r["vip"], lq["vip"], f)
        le = self.ep(t, lq["vip"])
        o.eth_dst, o.eth_src, out = self.to_endpoint(le)
        o.src, o.dst, o.dqpn = r["vip"], lq["vip"], lq["vqpn"]
        if ud:
            o.ext("DETH")["srcqp"] = r["vqpn"]
            done = False
        else:
            done = self.translate(t, lq["vip"], o)
            self.xlate(f, o, lq, r)
        return o, out, "ingress", done, t


# ---------------------------------------------------------------------------
# Scenarios.

MARKERS = {"blue": b"blue", "red": b"red!", "green": b"grn!"}


class Scenario:
    def __init__(self, name, model, title, switch_args=()):
        self.name, self.m, self.title = name, model, title
        self.switch_args = list(switch_args)
        self.inputs = {p: [] for p in model.port_order}
        self.outputs = {p: [] for p in model.port_order}
        self.drops = {r: 0 for r in ALL_DROPS}
        self.fwd = {"egress": 0, "ingress": 0, "hairpin": 0}
        self.cnp = 0
        self.translated = 0
        self.ports = {p: {"device": model.ports[p]["device"], "rx_packets": 0, "rx_bytes": 0,
                          "tx_packets": 0, "tx_bytes": 0} for p in model.port_order}
        self.tenants = {t: {"egress_packets": 0, "egress_bytes": 0, "ingress_packets": 0,
                            "ingress_bytes": 0, "dropped": 0} for t in model.tenants}
        self.isolation = None
        self._psn = 0x100
        # Every input in order, for the NAKs (naks()): (port, frame, note,
        # input index, drop reason or None).
        self.events = []
        self.naks = 0
        # The NAKs the rule gives in arrival order that the switch, which
        # applies a burst's re-arms before its refusals, does not (and the
        # other way round); the "nak" scenario has none.
        self.nak_deviations = []

    def psn(self, n=1):
        p = self._psn
        self._psn += n
        return p

    def _input(self, port, fr, src, expect, note):
        rec = {"index": len(self.inputs[port]), "len": len(fr), "expect": expect, "note": note,
               "source": src}
        self.inputs[port].append((fr, rec))
        self.ports[port]["rx_packets"] += 1
        self.ports[port]["rx_bytes"] += len(fr)
        return rec["index"]

    def send(self, port, f, note):
        """@f enters @port and must be forwarded as the model says."""
        fr, src = f.build()
        o, out, kind, done, tenant = self.m.forward(port, f)
        ofr, _ = o.build()
        # Only VLAN policies (4 bytes a tag, padding to 60) and a translation between IPv4 and IPv6
        # change the length (docs/wire.md).
        assert (len(ofr) == len(fr) + 4 * (len(o.vlans) - len(f.vlans)) + len(o.l2pad) - len(f.l2pad)
                or o.ver != f.ver)
        idx = self._input(port, fr, src, "forward to %s (%s)" % (out, kind), note)
        self.events.append((port, f, note, idx, None))
        self.outputs[out].append({
            "from": port, "in_index": idx, "note": note, "kind": kind, "tenant": tenant,
            # Order is kept within a flow (one QP's frames), not across flows.
            "flow": "%s %s>%s qp %d" % (tenant, ip_norm(f.src), ip_norm(f.dst), f.dqpn),
            "translated": done, "psn": f.psn, "len": len(ofr),
            "icrc_in": "0x%08x" % icrc_found(fr),
            # A hairpin that translates nothing changes only MACs: same ICRC.
            "icrc_unchanged": kind == "hairpin" and not done,
            "fields": fields_of(ofr), "hex": ofr.hex()})
        self.fwd[kind] += 1
        self.cnp += f.opcode == CNP
        self.translated += done
        self.ports[out]["tx_packets"] += 1
        self.ports[out]["tx_bytes"] += len(ofr)
        # egress: sent by the tenant and forwarded; ingress: delivered to
        # the tenant.  A hairpin is both.  Port bytes count Ethernet padding,
        # tenant bytes do not (the frame up to its ICRC).
        ts = self.tenants[tenant]
        n = len(fr) - len(f.l2pad)
        if kind in ("ingress", "hairpin"):
            ts["ingress_packets"] += 1
            ts["ingress_bytes"] += n
        if kind in ("egress", "hairpin"):
            ts["egress_packets"] += 1
            ts["egress_bytes"] += n

    def mdrop(self, port, f, reason, note):
        """drop(), with the model's agreement that @f is dropped for @reason."""
        got = self.m.verdict(port, f)
        assert got == reason, "%s: the model says %s, the scenario %s" % (note, got, reason)
        self.drop(port, f, reason, note)

    def drop(self, port, f, reason, note):
        """@f (an F, or (bytes, source)) enters @port and must be dropped for @reason."""
        assert reason in ALL_DROPS, reason
        fr, src = f.build() if isinstance(f, F) else f
        idx = self._input(port, fr, src, "drop: " + reason, note)
        self.events.append((port, f if isinstance(f, F) else None, note, idx, reason))
        self.drops[reason] += 1
        # A drop is the tenant's when it can be said: the tenant of the
        # port, or on the fabric the tenant of the QP the frame was
        # addressed to, for reasons found after that lookup.
        t = self.m.port_tenant(port)
        if not t and reason in FABRIC_ATTRIBUTED:
            f_ = fields_of(fr)
            t = self.m.fabric[(ip_norm(f_["ip.dst"]), f_["bth.dqpn"])]["tenant"]
        if t:
            self.tenants[t]["dropped"] += 1

    def schedule(self):
        """
        The inputs as the switch meets them, in rx bursts: each loop
        iteration polls the ports in configuration order and takes up to
        RX_BURST frames of each (net_pcap reads its file that far).
        """
        per = {p: [e for e in self.events if e[0] == p] for p in self.m.port_order}
        bursts = []
        while any(per.values()):
            for p in self.m.port_order:
                if per[p]:
                    bursts.append(per[p][:RX_BURST])
                    per[p] = per[p][RX_BURST:]
        return bursts

    def nak_run(self, bursts):
        """
        The NAKs of refused RC requests, over @bursts: [(event, frame, out
        port)].  Per direction of a connection (sender, receiver): after a
        NAK no further NAK until a request of that direction is forwarded.
        The NAK's MSN is the last one the receiver sent the sender in a
        forwarded answer (0 if none).  Within a burst, the switch forwards
        (re-arms, notes MSNs) in stage 4 before it counts drops and sends
        NAKs in stage 5.
        """
        def key(q):
            return (q["tenant"], q["vip"], q["vqpn"])

        armed_off, msn, res = set(), {}, []
        for b in bursts:
            for port, f, note, idx, reason in b:
                if reason is not None or f is None:
                    continue
                c = self.m.conn_of(port, f)
                if c is None:
                    continue
                _, snd, rcv = c
                if rc_request(f.opcode):
                    armed_off.discard((key(snd), key(rcv)))
                elif (f.opcode & 0x1f) in AETH_RESPONSES and (f.opcode & 0xe0) in (0x00, 0xa0):
                    msn[(key(snd), key(rcv))] = f.ext("AETH")["msn"] & 0xffffff
            for ev in b:
                port, f, note, idx, reason = ev
                if reason not in NAK_REASONS or f is None or not rc_request(f.opcode):
                    continue
                c = self.m.conn_of(port, f)
                if c is None:
                    continue
                _, snd, rcv = c
                half = (key(snd), key(rcv))
                if half in armed_off:
                    continue
                armed_off.add(half)
                n, out = self.m.nak(port, f, snd, rcv, msn.get((key(rcv), key(snd)), 0))
                res.append((ev, n, out))
        return res

    def naks_by_rule_differ(self):
        """
        Where the switch's NAKs (nak_run() over rx bursts) and the rule's
        (the same arrival order, frame by frame) differ, as notes.
        """
        bursts = self.schedule()
        sig = lambda r: [(e[0], e[3], n.build()[0]) for e, n, _ in r]  # noqa: E731
        a = sig(self.nak_run(bursts))
        b = sig(self.nak_run([[e] for bu in bursts for e in bu]))
        res = []
        for p, i, fr in a:
            if (p, i, fr) not in b:
                alt = [x for x in b if x[:2] == (p, i)]
                res.append("%s input #%d: the switch's burst gives %s, the rule %s" % (
                    p, i + 1, nak_desc(fr), nak_desc(alt[0][2]) if alt else "no NAK"))
        for p, i, fr in b:
            if not any(x[:2] == (p, i) for x in a):
                res.append("%s input #%d: the rule gives %s, the switch's burst no NAK" % (
                    p, i + 1, nak_desc(fr)))
        return res

    def add_naks(self):
        got = self.nak_run(self.schedule())
        self.nak_deviations = self.naks_by_rule_differ()
        for (port, f, note, idx, reason), n, out in got:
            fr, _ = n.build()
            t, snd, rcv = self.m.conn_of(port, f)
            self.outputs[out].append({
                "from": port, "in_index": idx, "note": "NAK of the refused request (%s): %s" % (reason, note),
                "kind": "nak", "tenant": t,
                "flow": "NAK %s %s/%d>%s/%d" % (t, snd["vip"], snd["vqpn"], rcv["vip"], rcv["vqpn"]),
                "translated": False, "psn": n.psn, "len": len(fr),
                "icrc_in": "0x%08x" % icrc_found(fr), "icrc_unchanged": False,
                "fields": fields_of(fr), "hex": fr.hex()})
            self.naks += 1
            self.ports[out]["tx_packets"] += 1
            self.ports[out]["tx_bytes"] += len(fr)

    def write(self):
        self.add_naks()
        files = {}
        for port, lst in self.inputs.items():
            if not lst:
                continue
            fn = "%s.%s.pcap" % (self.name, port)
            write_pcap(os.path.join(DATA, fn), [fr for fr, _ in lst])
            files[port] = {"pcap": fn, "frames": [rec for _, rec in lst]}
        n_rx = sum(len(v) for v in self.inputs.values())
        n_tx = sum(len(v) for v in self.outputs.values())
        n_drop = sum(self.drops.values())
        assert n_rx + self.naks == n_tx + n_drop
        doc = {
            "name": self.name, "title": self.title, "config": self.m.rel,
            "switch_args": self.switch_args,
            "ports": {p: self.m.ports[p]["device"] for p in self.m.port_order},
            "inputs": files,
            "outputs": self.outputs,
            "counters": {
                "rx_packets": n_rx, "tx_packets": n_tx, "dropped": n_drop,
                "forwarded": self.fwd, "cnp_forwarded": self.cnp, "mr_translated": self.translated,
                "naks_refused": self.naks, "naks_sent": 0,
                "drops": self.drops, "ports": self.ports, "tenants": self.tenants},
        }
        if self.isolation:
            doc["isolation"] = self.isolation
        if self.nak_deviations:
            doc["nak_rule_deviations"] = self.nak_deviations
        with open(os.path.join(DATA, self.name + ".json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=False)
            f.write("\n")
        return n_rx, n_tx, n_drop, self.naks, len(self.nak_deviations)


def nak_desc(fr):
    f = fields_of(fr)
    return "a NAK psn %d msn %d" % (f["bth.psn"], f["aeth.msn"])


def payload(tenant, n, psn, pad=0):
    """@n bytes: the tenant's marker, a pattern, then @pad zero pad bytes."""
    body = MARKERS[tenant] + bytes(((psn * 13) + 7 * i) & 0xff for i in range(n - 4 - pad))
    return body[:n - pad] + bytes(pad)


def vary(psn, ver=4):
    """Per-frame values of the fields that must pass unchanged."""
    dscp = [26, 0, 46, 10, 34][psn % 5]
    ecn = [2, 1, 0, 2, 1][psn % 5]  # never CE: CE would wake the NP
    kw = dict(sport=0xc000 | ((psn * 37) & 0x3fff), ttl=64 - psn % 9, tos=dscp << 2 | ecn)
    if ver == 4:
        kw.update(ip_id=(psn * 257) & 0xffff, ip_flags="DF" if psn % 3 else 0)
    else:
        kw.update(fl=(psn * 4099) & 0xfffff)
    return kw


class Side:
    """One RC connection seen from its local end L on this host."""

    def __init__(self, m, tenant, vip, vqpn):
        self.m, self.t = m, tenant
        self.lq = m.qps[(tenant, ip_norm(vip), vqpn)]
        self.rq = m.peer(self.lq)
        self.le = m.ep(tenant, vip)
        self.re = m.ep(tenant, self.rq["vip"])

    def out(self, S, op, exts=(), n=0, pad=0, psn=None, **kw):
        """A frame L sends toward R, as it arrives on L's tenant port."""
        psn = S.psn() if psn is None else psn
        a = dict(eth_src=self.le["mac"], eth_dst=self.m.ports[self.le["port"]]["mac"],
                 src=self.lq["vip"], dst=self.rq["vip"], opcode=op, dqpn=self.rq["vqpn"],
                 psn=psn, exts=exts, pad=pad, payload=payload(self.t, n, psn, pad) if n else b"")
        a.update(vary(psn, ipaddress.ip_address(self.lq["vip"]).version))
        a.update(kw)
        return F(**a)

    def inc(self, S, op, exts=(), n=0, pad=0, psn=None, **kw):
        """A frame R's host sends to L's pqpn, as it arrives on the uplink."""
        psn = S.psn() if psn is None else psn
        a = dict(eth_src=self.m.host_mac(self.rq["host"]), eth_dst=self.m.uplink["mac"],
                 src=self.rq["host"], dst=self.m.host, opcode=op, dqpn=self.lq["pqpn"], psn=psn,
                 exts=exts, pad=pad, payload=payload(self.t, n, psn, pad) if n else b"")
        a.update(vary(psn, ipaddress.ip_address(self.m.host).version))
        a.update(kw)
        return F(**a)


def reth(va, rkey, dmalen):
    return ("RETH", {"va": va, "rkey": rkey, "dmalen": dmalen})


def atomic(va, rkey, swap=0, comp=0):
    return ("AtomicETH", {"va": va, "rkey": rkey, "swap": swap, "comp": comp})


def aeth(syndrome, msn):
    return ("AETH", {"syndrome": syndrome, "msn": msn})


def imm(v):
    return ("ImmDt", {"imm": v})


def deth(qkey, srcqp):
    return ("DETH", {"qkey": qkey, "srcqp": srcqp})


CNP_EXTS = [("CNPPadding", {})]

MR_VA = 0x7f0000000000  # blue and red advertise rkey 0x1234 at this address
MR_RKEY = 0x1234


def two_tenant_scenarios():
    m = Model("examples/two-tenants.json")
    blue = Side(m, "blue", "192.168.1.10", 17)
    red = Side(m, "red", "192.168.1.10", 17)
    out = []

    # -- SEND
    S = Scenario("rc_send", m, "RC SEND Only, First/Middle/Last, with Immediate, both "
                 "directions; IPv4 options, a non-zero UDP checksum, FECN/BECN and pad counts")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=64), "SEND Only")
    S.send("vm-blue-1", blue.out(S, SEND_FIRST, n=256), "SEND First")
    S.send("vm-blue-1", blue.out(S, SEND_MIDDLE, n=256), "SEND Middle")
    S.send("vm-blue-1", blue.out(S, SEND_LAST, n=100, pad=3, ackreq=1), "SEND Last, pad 3")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY_IMM, [imm(0xdeadbeef)], n=32, se=1),
           "SEND Only with Immediate")
    S.send("vm-blue-1", blue.out(S, SEND_FIRST, n=256), "SEND First")
    S.send("vm-blue-1", blue.out(S, SEND_LAST_IMM, [imm(7)], n=40), "SEND Last with Immediate")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=48, udp_csum=True), "non-zero UDP checksum")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=48, ip_options=b"\x94\x04\x00\x00"),
           "IPv4 options (router alert, IHL 6)")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=16, fecn=1, becn=1, pkey=0x8001, m=0),
           "FECN and BECN set, P_Key 0x8001")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=64), "SEND Only")
    S.send("fabric0", blue.inc(S, SEND_FIRST, n=256), "SEND First")
    S.send("fabric0", blue.inc(S, SEND_MIDDLE, n=256), "SEND Middle")
    S.send("fabric0", blue.inc(S, SEND_LAST, n=52, pad=2), "SEND Last, pad 2")
    S.send("fabric0", blue.inc(S, SEND_ONLY_IMM, [imm(1)], n=4), "SEND Only with Immediate")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=48, udp_csum=True), "non-zero UDP checksum")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=48, ip_options=b"\x94\x04\x00\x00"),
           "IPv4 options (router alert, IHL 6)")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=16, fecn=1, becn=1), "FECN and BECN set")
    S.send("vm-red-1", red.out(S, SEND_ONLY, n=64), "red SEND Only")
    S.send("fabric0", red.inc(S, SEND_ONLY, n=64), "red SEND Only")
    out.append(S)

    # -- WRITE
    S = Scenario("rc_write", m, "RDMA WRITE First/Middle/Last and Only with Immediate; the "
                 "RETH is translated on the fabric-to-tenant side only, per the owner's MR")
    S.send("fabric0", blue.inc(S, WRITE_FIRST, [reth(MR_VA + 0x1000, MR_RKEY, 768)], n=256),
           "WRITE First: va, rkey translated")
    S.send("fabric0", blue.inc(S, WRITE_MIDDLE, n=256), "WRITE Middle")
    S.send("fabric0", blue.inc(S, WRITE_LAST, n=256, ackreq=1), "WRITE Last")
    S.send("fabric0", blue.inc(S, WRITE_ONLY_IMM, [reth(MR_VA + 0x20000, MR_RKEY, 60), imm(99)],
                                n=60), "WRITE Only with Immediate: translated")
    S.send("fabric0", blue.inc(S, WRITE_FIRST, [reth(MR_VA + 0x30000, MR_RKEY, 300)], n=256),
           "WRITE First")
    S.send("fabric0", blue.inc(S, WRITE_LAST_IMM, [imm(5)], n=44), "WRITE Last with Immediate")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA, MR_RKEY, 32)], n=32),
           "WRITE Only at the window's start")
    S.send("vm-blue-1", blue.out(S, WRITE_FIRST, [reth(0x7fab00001000, 0x4444, 600)], n=256),
           "WRITE First to the remote: RETH untouched here")
    S.send("vm-blue-1", blue.out(S, WRITE_MIDDLE, n=256), "WRITE Middle")
    S.send("vm-blue-1", blue.out(S, WRITE_LAST, n=88), "WRITE Last")
    S.send("vm-blue-1", blue.out(S, WRITE_ONLY, [reth(0x1000, 0x4444, 16)], n=16), "WRITE Only")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA + 0x100, MR_RKEY, 64)], n=64,
                               ip_options=b"\x94\x04\x00\x00"),
           "WRITE Only with IPv4 options (IHL 6): translated")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA + 0x200, MR_RKEY, 64)], n=64,
                               udp_csum=True), "WRITE Only, non-zero UDP checksum: translated")
    S.send("fabric0", blue.inc(S, WRITE_FIRST, [reth(MR_VA + 0x40000, MR_RKEY, 3 * 4096)],
                               n=4096), "4 KiB WRITE First: translated")
    S.send("fabric0", blue.inc(S, WRITE_MIDDLE, n=4096), "4 KiB WRITE Middle")
    S.send("fabric0", blue.inc(S, WRITE_LAST, n=4096), "4 KiB WRITE Last")
    S.send("vm-blue-1", blue.out(S, WRITE_MIDDLE, n=4096, psn=S.psn() | 0xff0000),
           "4 KiB WRITE Middle, PSN 0xffxxxx")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=64, psn=0xffffff), "PSN 0xffffff")
    out.append(S)

    # -- READ
    S = Scenario("rc_read", m, "RDMA READ request (translated, fabric to tenant) and READ "
                 "responses First/Middle/Last/Only (tenant to fabric); and the other way round")
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(MR_VA + 0x4000, MR_RKEY, 1000)]),
           "READ request: translated")
    S.send("vm-blue-1", blue.out(S, RR_FIRST, [aeth(0x1f, 1)], n=256), "READ response First")
    S.send("vm-blue-1", blue.out(S, RR_MIDDLE, n=256), "READ response Middle")
    S.send("vm-blue-1", blue.out(S, RR_MIDDLE, n=256), "READ response Middle")
    S.send("vm-blue-1", blue.out(S, RR_LAST, [aeth(0x1f, 1)], n=232), "READ response Last")
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(MR_VA + 0xfff00, MR_RKEY, 256)]),
           "READ request at the window's end")
    S.send("vm-blue-1", blue.out(S, RR_ONLY, [aeth(0x1f, 2)], n=256), "READ response Only")
    S.send("vm-blue-1", blue.out(S, READ_REQ, [reth(0x7fab00002000, 0x4444, 512)]),
           "READ request to the remote: RETH untouched here")
    S.send("fabric0", blue.inc(S, RR_FIRST, [aeth(0x1f, 3)], n=256), "READ response First")
    S.send("fabric0", blue.inc(S, RR_LAST, [aeth(0x1f, 3)], n=256), "READ response Last")
    S.send("fabric0", blue.inc(S, RR_ONLY, [aeth(0x1f, 4)], n=8), "READ response Only")
    out.append(S)

    # -- atomics
    S = Scenario("rc_atomic", m, "CmpSwap and FetchAdd into red's window (remote_atomic; "
                 "translated), Atomic ACKs back; and red's atomics to the remote")
    S.send("fabric0", red.inc(S, CMP_SWAP, [atomic(MR_VA + 0x100, MR_RKEY, 0x1111, 0x2222)]),
           "CmpSwap: translated")
    S.send("vm-red-1", red.out(S, ATOMIC_ACK, [aeth(0x1f, 5), ("AtomicAckETH", {"orig": 0x2222})]),
           "Atomic ACK")
    S.send("fabric0", red.inc(S, FETCH_ADD, [atomic(MR_VA + 0xfff8, MR_RKEY, 1)]),
           "FetchAdd on the window's last 8 bytes: translated")
    S.send("vm-red-1", red.out(S, ATOMIC_ACK, [aeth(0x1f, 6), ("AtomicAckETH", {"orig": 41})]),
           "Atomic ACK")
    S.send("vm-red-1", red.out(S, FETCH_ADD, [atomic(0x7f1100000008, 0x9999, 3)]),
           "FetchAdd to the remote: AtomicETH untouched here")
    S.send("fabric0", red.inc(S, ATOMIC_ACK, [aeth(0x1f, 7), ("AtomicAckETH", {"orig": 0x77})]),
           "Atomic ACK")
    S.send("vm-red-1", red.out(S, CMP_SWAP, [atomic(0x7f1100000010, 0x9999, 5, 6)]),
           "CmpSwap to the remote")
    out.append(S)

    # -- ACK, NAK
    S = Scenario("rc_ack", m, "ACK, NAKs (PSN sequence error, RNR, remote access error) "
                 "both directions, both tenants")
    for side, port in ((blue, "vm-blue-1"), (red, "vm-red-1")):
        S.send(port, side.out(S, ACK, [aeth(0x1f, 10)]), "ACK")
        S.send(port, side.out(S, ACK, [aeth(0x60, 11)]), "NAK: PSN sequence error")
        S.send(port, side.out(S, ACK, [aeth(0x2e, 12)]), "RNR NAK")
        S.send("fabric0", side.inc(S, ACK, [aeth(0x1f, 13)]), "ACK")
        S.send("fabric0", side.inc(S, ACK, [aeth(0x62, 14)]), "NAK: remote access error")
        S.send("fabric0", side.inc(S, ACK, [aeth(0x00, 15)]), "ACK, credit 0")
    out.append(S)

    # -- CNP
    S = Scenario("cnp", m, "CNPs both directions pass, renamed (a CNP's DestQP is the "
                 "sender's QPN)")
    S.send("vm-blue-1", blue.out(S, CNP, CNP_EXTS, psn=0, becn=1), "CNP to the remote QP")
    S.send("fabric0", blue.inc(S, CNP, CNP_EXTS, psn=0, becn=1), "CNP to blue .10 qp 17")
    S.send("vm-red-1", red.out(S, CNP, CNP_EXTS, psn=0, becn=1), "red CNP to the remote QP")
    S.send("fabric0", red.inc(S, CNP, CNP_EXTS, psn=0, becn=1), "CNP to red .10 qp 17")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=32), "SEND after the CNP")
    out.append(S)

    # -- go-back-N retransmission from the middle
    S = Scenario("retransmit_mid", m, "retransmissions that start mid-message (Middle/Last "
                 "with no First) forward under the connection's rename")
    S.send("vm-blue-1", blue.out(S, SEND_MIDDLE, n=256), "SEND Middle, no First")
    S.send("vm-blue-1", blue.out(S, SEND_MIDDLE, n=256), "SEND Middle")
    S.send("vm-blue-1", blue.out(S, SEND_LAST, n=128), "SEND Last")
    S.send("vm-blue-1", blue.out(S, WRITE_MIDDLE, n=256), "WRITE Middle, no First")
    S.send("vm-blue-1", blue.out(S, WRITE_LAST_IMM, [imm(3)], n=64), "WRITE Last with Immediate")
    S.send("fabric0", blue.inc(S, WRITE_MIDDLE, n=256), "WRITE Middle, no First")
    S.send("fabric0", blue.inc(S, WRITE_LAST, n=256), "WRITE Last")
    S.send("fabric0", blue.inc(S, SEND_LAST, n=16), "SEND Last, no First")
    S.send("fabric0", blue.inc(S, RR_MIDDLE, n=256), "READ response Middle, no First")
    S.send("fabric0", red.inc(S, SEND_MIDDLE, n=64), "red SEND Middle, no First")
    S.send("fabric0", red.inc(S, SEND_LAST, n=64), "red SEND Last")
    out.append(S)

    # -- VLAN
    q = lambda vid, prio=0: (0x8100, vid, prio)  # noqa: E731
    S = Scenario("vlan", m, "802.1Q and QinQ tagged frames both directions: tags preserved, "
                 "renames and RETH translation still exact")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=64, vlans=[q(100, 5)]), "802.1Q vid 100 pcp 5")
    S.send("vm-blue-1", blue.out(S, WRITE_FIRST, [reth(0x1000, 0x4444, 512)], n=256,
                                 vlans=[q(100, 5)]), "802.1Q WRITE First")
    S.send("vm-blue-1", blue.out(S, WRITE_LAST, n=256, vlans=[q(100, 5)]), "802.1Q WRITE Last")
    S.send("vm-blue-1", blue.out(S, ACK, [aeth(0x1f, 1)], vlans=[(0x88a8, 10, 1), q(20, 3)]),
           "QinQ 0x88a8/0x8100 ACK")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=64, vlans=[q(200, 3)]), "802.1Q vid 200")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA + 0x800, MR_RKEY, 64)], n=64,
                               vlans=[q(200, 3)]), "802.1Q WRITE Only: translated")
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(MR_VA + 0x800, MR_RKEY, 64)],
                               vlans=[(0x88a8, 11, 0), q(21, 7)]), "QinQ READ: translated")
    S.send("fabric0", red.inc(S, CNP, CNP_EXTS, psn=0, becn=1, vlans=[q(300)]), "802.1Q CNP")
    S.send("vm-red-1", red.out(S, SEND_ONLY, n=64, vlans=[q(4094, 7)]), "802.1Q vid 4094")
    b11 = Side(m, "blue", "192.168.1.11", 18)
    S.send("vm-blue-1", b11.out(S, SEND_ONLY, n=64, vlans=[q(100, 5)]), "802.1Q hairpin SEND")
    S.send("vm-blue-1", b11.out(S, WRITE_ONLY, [reth(MR_VA + 0x100, MR_RKEY, 64)], n=64,
                                vlans=[q(100, 5)]), "802.1Q hairpin WRITE: translated")
    out.append(S)

    # -- isolation
    S = Scenario("isolation", m, "blue and red reuse vIPs 192.168.1.10/.20 and vQPNs 17/33: "
                 "nothing crosses tenants; the same rkey translates per tenant")
    for i in range(4):
        psn = S.psn()
        S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=64 + 4 * i, psn=psn), "blue SEND Only")
        S.send("vm-red-1", red.out(S, SEND_ONLY, n=64 + 4 * i, psn=psn),
               "red SEND Only: same vIPs, vQPNs and PSN as blue's")
    for i in range(3):
        psn = S.psn()
        S.send("fabric0", blue.inc(S, SEND_ONLY, n=64, psn=psn), "to blue's pqpn 4097")
        S.send("fabric0", red.inc(S, SEND_ONLY, n=64, psn=psn), "to red's pqpn 4098")
    psn = S.psn()
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA + 0x10, MR_RKEY, 64)], n=64, psn=psn),
           "blue WRITE, rkey 0x1234: blue's target")
    S.send("fabric0", red.inc(S, RR_ONLY, [aeth(0x1f, 1)], n=64, psn=psn), "red READ response")
    psn = S.psn()
    S.send("vm-blue-1", blue.out(S, WRITE_FIRST, [reth(0x5000, 0x77, 512)], n=256, psn=psn),
           "blue WRITE First")
    S.send("vm-red-1", red.out(S, WRITE_FIRST, [reth(0x5000, 0x77, 512)], n=256, psn=psn),
           "red WRITE First, same everything")
    S.isolation = {
        "tenant_ports": {"vm-blue-1": "blue", "vm-red-1": "red"},
        "markers": {t: MARKERS[t].decode() for t in ("blue", "red")},
        "fabric_dqpns": {"blue": [blue.rq["pqpn"]], "red": [red.rq["pqpn"]]},
        "uplink": "fabric0"}
    out.append(S)

    # -- hairpin
    b11 = Side(m, "blue", "192.168.1.11", 18)
    b10h = Side(m, "blue", "192.168.1.10", 19)
    S = Scenario("hairpin", m, "blue .11 qp 18 <-> .10 qp 19 on one host: delivered to "
                 "vm-blue-1 with only MACs changed (ICRC unchanged); WRITE/READ into .10's "
                 "window translated on the way")
    S.send("vm-blue-1", b11.out(S, SEND_ONLY, n=64), ".11 -> .10 SEND Only")
    S.send("vm-blue-1", b11.out(S, SEND_FIRST, n=256), ".11 -> .10 SEND First")
    S.send("vm-blue-1", b11.out(S, SEND_LAST, n=256), ".11 -> .10 SEND Last")
    S.send("vm-blue-1", b10h.out(S, ACK, [aeth(0x1f, 2)]), ".10 -> .11 ACK")
    S.send("vm-blue-1", b10h.out(S, SEND_ONLY, n=32), ".10 -> .11 SEND Only")
    S.send("vm-blue-1", b11.out(S, WRITE_ONLY, [reth(MR_VA + 0x40, MR_RKEY, 64)], n=64),
           ".11 -> .10 WRITE Only: translated (.10's memory is on this host)")
    S.send("vm-blue-1", b11.out(S, READ_REQ, [reth(MR_VA + 0x80, MR_RKEY, 128)]),
           ".11 -> .10 READ: translated")
    S.send("vm-blue-1", b10h.out(S, RR_ONLY, [aeth(0x1f, 3)], n=128), ".10 -> .11 READ response")
    S.send("vm-blue-1", b11.out(S, CNP, CNP_EXTS, psn=0, becn=1), ".11 -> .10 CNP")
    out.append(S)

    # -- drops: the parser
    S = Scenario("drop_parse", m, "every roce_parse() error, from a tenant port and from the "
                 "fabric; each frame is a forwardable frame broken one way")
    for port, fr, src, reason in malformed(m, blue, S):
        S.drop(port, (fr, src), reason, "malformed: " + reason)
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=32), "control: forwards")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=32), "control: forwards")
    out.append(S)

    # -- drops: the switch's own reasons
    S = Scenario("drop_no_connection", m, "no_connection: a known vIP with no such QP; an "
                 "unknown pqpn on our host")
    S.drop("vm-blue-1", blue.out(S, SEND_ONLY, n=32, dqpn=99), "no_connection",
           ".20 is blue's, qp 99 is not")
    S.drop("vm-red-1", red.out(S, SEND_ONLY, n=32, dqpn=34), "no_connection", "red .20 qp 34")
    S.drop("fabric0", blue.inc(S, SEND_ONLY, n=32, dqpn=5000), "no_connection", "pqpn 5000")
    S.drop("fabric0", blue.inc(S, SEND_ONLY, n=32, dqpn=8193), "no_connection",
           "pqpn 8193 is the remote host's, not ours")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=32), "control")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=32), "control")
    out.append(S)

    S = Scenario("drop_wrong_tenant", m, "wrong_tenant: the destination vIP is not an endpoint "
                 "of the port's tenant")
    S.drop("vm-red-1", red.out(S, SEND_ONLY, n=32, dst="192.168.1.11", dqpn=18), "wrong_tenant",
           "red to 192.168.1.11, which only blue has")
    S.drop("vm-blue-1", blue.out(S, SEND_ONLY, n=32, dst="192.168.1.99"), "wrong_tenant",
           "blue to 192.168.1.99, nobody's")
    S.drop("vm-blue-1", blue.out(S, SEND_ONLY, n=32, dst="10.0.0.2", dqpn=8193), "wrong_tenant",
           "blue straight to the remote host's IP and pqpn")
    S.send("vm-red-1", red.out(S, SEND_ONLY, n=32), "control")
    out.append(S)

    S = Scenario("drop_spoofed_source", m, "spoofed_source: wrong source vIP, wrong source MAC, "
                 "another tenant's MAC, and a fabric frame from a host that is not the peer's")
    S.drop("vm-blue-1", blue.out(S, SEND_ONLY, n=32, src="192.168.1.11"), "spoofed_source",
           "src vIP .11 (blue's, but not this connection's local end)")
    S.drop("vm-blue-1", blue.out(S, SEND_ONLY, n=32, eth_src="02:00:00:00:aa:11"),
           "spoofed_source", "src MAC of .11 with src vIP .10")
    S.drop("vm-blue-1", blue.out(S, SEND_ONLY, n=32, eth_src="02:00:00:00:bb:10"),
           "spoofed_source", "red .10's MAC on blue's port")
    S.drop("vm-blue-1", blue.out(S, SEND_ONLY, n=32, src="192.168.1.20"), "spoofed_source",
           "src vIP of the remote peer itself")
    S.drop("fabric0", blue.inc(S, SEND_ONLY, n=32, src="10.0.0.3"), "spoofed_source",
           "from host 10.0.0.3; blue .20 lives on 10.0.0.2")
    S.drop("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA, MR_RKEY, 16)], n=16, src="10.0.0.9"),
           "spoofed_source", "WRITE from host 10.0.0.9")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=32), "control")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=32), "control")
    out.append(S)

    b10h = Side(m, "blue", "192.168.1.10", 19)
    S = Scenario("drop_spoofed_own_host", m, "spoofed_source: fabric frames that claim to come "
                 "from this host itself, to the pqpn of a QP whose peer is local (hairpin): "
                 "only the switch speaks for a local peer, never the fabric")
    S.drop("fabric0", b10h.inc(S, SEND_ONLY, n=32), "spoofed_source",
           "src 10.0.0.1 (ours) to pqpn 4100 (.10 qp 19, peer .11 qp 18 is local)")
    S.drop("fabric0", b10h.inc(S, WRITE_ONLY, [reth(MR_VA, MR_RKEY, 32)], n=32), "spoofed_source",
           "WRITE from src 10.0.0.1 into .10's window via pqpn 4100")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=32), "control")
    out.append(S)

    S = Scenario("drop_not_our_host", m, "not_our_host: fabric frames for other hosts")
    S.drop("fabric0", blue.inc(S, SEND_ONLY, n=32, dst="10.0.0.3"), "not_our_host", "to 10.0.0.3")
    S.drop("fabric0", blue.inc(S, SEND_ONLY, n=32, dst="10.0.0.2", dqpn=8193), "not_our_host",
           "to the remote host itself")
    S.drop("fabric0", blue.inc(S, ACK, [aeth(0x1f, 1)], dst="192.168.1.10", dqpn=17),
           "not_our_host", "a virtual address on the fabric")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=32), "control")
    out.append(S)

    S = Scenario("drop_gsi", m, "gsi: DestQP 1 from a tenant and from the fabric")
    S.drop("vm-blue-1", blue.out(S, UD_SEND_ONLY, [deth(0x80010000, 1)], n=256, dqpn=1), "gsi",
           "a MAD to QP1 of .20")
    S.drop("fabric0", blue.inc(S, UD_SEND_ONLY, [deth(0x80010000, 1)], n=256, dqpn=1), "gsi",
           "a MAD to QP1 of our host")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=32), "control")
    out.append(S)

    S = Scenario("drop_type_mismatch", m, "type_mismatch: UC and UD opcodes to RC QPs")
    S.drop("vm-blue-1", blue.out(S, UC_SEND_ONLY, n=32), "type_mismatch", "UC SEND Only to RC qp 33")
    S.drop("vm-blue-1", blue.out(S, UC_WRITE_ONLY, [reth(0x1000, 0x4444, 16)], n=16),
           "type_mismatch", "UC WRITE Only to RC qp 33")
    S.drop("fabric0", blue.inc(S, UC_SEND_ONLY, n=32), "type_mismatch", "UC SEND Only to RC 4097")
    S.drop("fabric0", blue.inc(S, UD_SEND_ONLY, [deth(0x1111, 8193)], n=32), "type_mismatch",
           "UD SEND Only to RC 4097")
    S.drop("vm-red-1", red.out(S, UD_SEND_ONLY, [deth(0x1111, 17)], n=32), "type_mismatch",
           "red UD SEND Only to RC qp 33")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=32), "control")
    out.append(S)

    S = Scenario("drop_mr_unknown", m, "mr_unknown: rkeys the owner never advertised")
    S.drop("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA, 0x9999, 16)], n=16), "mr_unknown",
           "WRITE rkey 0x9999")
    S.drop("fabric0", blue.inc(S, READ_REQ, [reth(0x200000000, 0xabcdef, 16)]), "mr_unknown",
           "READ with the target rkey (not the advertised one)")
    S.drop("fabric0", red.inc(S, CMP_SWAP, [atomic(MR_VA, 0x1235, 1, 2)]), "mr_unknown",
           "red CmpSwap rkey 0x1235")
    S.drop("vm-blue-1", b11.out(S, WRITE_ONLY, [reth(MR_VA, 0x5555, 16)], n=16), "mr_unknown",
           "hairpin WRITE with an unknown rkey")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA, MR_RKEY, 16)], n=16), "control")
    out.append(S)

    blen = 1048576
    rlen = 65536
    S = Scenario("drop_mr_out_of_bounds", m, "mr_out_of_bounds off by one at both ends of the "
                 "window; the exact boundaries forward")
    S.drop("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA - 1, MR_RKEY, 1)], n=4, pad=3),
           "mr_out_of_bounds", "WRITE 1 byte at addr - 1")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA, MR_RKEY, 1)], n=4, pad=3),
           "WRITE 1 byte at addr: in bounds")
    S.drop("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA + blen - 15, MR_RKEY, 16)], n=16),
           "mr_out_of_bounds", "WRITE 16 bytes ending one past the end")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA + blen - 16, MR_RKEY, 16)], n=16),
           "WRITE 16 bytes ending at the end: in bounds")
    S.drop("fabric0", blue.inc(S, READ_REQ, [reth(MR_VA, MR_RKEY, blen + 1)]),
           "mr_out_of_bounds", "READ length + 1")
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(MR_VA, MR_RKEY, blen)]),
           "READ the whole window: in bounds")
    S.drop("fabric0", blue.inc(S, READ_REQ, [reth(MR_VA + blen, MR_RKEY, 1)]),
           "mr_out_of_bounds", "READ 1 byte at addr + length")
    S.drop("fabric0", red.inc(S, FETCH_ADD, [atomic(MR_VA + rlen - 7, MR_RKEY, 1)]),
           "mr_out_of_bounds", "red FetchAdd 8 bytes one past the end")
    S.send("fabric0", red.inc(S, FETCH_ADD, [atomic(MR_VA + rlen - 8, MR_RKEY, 1)]),
           "red FetchAdd on the last 8 bytes: in bounds")
    S.drop("fabric0", red.inc(S, CMP_SWAP, [atomic(MR_VA - 1, MR_RKEY, 1, 2)]),
           "mr_out_of_bounds", "red CmpSwap at addr - 1")
    S.drop("fabric0", blue.inc(S, WRITE_ONLY, [reth(0xffffffffffffff00, MR_RKEY, 0x200)], n=16),
           "mr_out_of_bounds", "WRITE whose va + length wraps around 2^64")
    S.drop("vm-blue-1", b11.out(S, WRITE_ONLY, [reth(MR_VA + blen - 15, MR_RKEY, 16)], n=16),
           "mr_out_of_bounds", "hairpin WRITE one past the end")
    out.append(S)

    S = Scenario("drop_mr_access_denied", m, "mr_access_denied: READ into blue's window is "
                 "allowed, atomics are not (remote_read/write only); WRITE into red's window "
                 "is not (remote_read/atomic only)")
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(MR_VA + 0x100, MR_RKEY, 64)]),
           "READ into blue's window: allowed")
    S.drop("fabric0", blue.inc(S, CMP_SWAP, [atomic(MR_VA + 0x100, MR_RKEY, 1, 2)]),
           "mr_access_denied", "CmpSwap into blue's window")
    S.drop("fabric0", blue.inc(S, FETCH_ADD, [atomic(MR_VA + 0x108, MR_RKEY, 1)]),
           "mr_access_denied", "FetchAdd into blue's window")
    S.drop("fabric0", red.inc(S, WRITE_ONLY, [reth(MR_VA + 0x100, MR_RKEY, 16)], n=16),
           "mr_access_denied", "WRITE into red's window")
    S.send("fabric0", red.inc(S, READ_REQ, [reth(MR_VA + 0x100, MR_RKEY, 16)]),
           "READ into red's window: allowed")
    S.drop("vm-blue-1", b11.out(S, CMP_SWAP, [atomic(MR_VA + 0x100, MR_RKEY, 1, 2)]),
           "mr_access_denied", "hairpin CmpSwap into blue .10's window")
    out.append(S)

    S = Scenario("drop_message_denied", m, "message_denied: the Middle and Last of a message "
                 "whose First was dropped; the next message forwards")
    S.drop("fabric0", blue.inc(S, WRITE_FIRST, [reth(MR_VA + blen - 256, MR_RKEY, 1024)], n=256),
           "mr_out_of_bounds", "WRITE First beyond the window")
    S.drop("fabric0", blue.inc(S, WRITE_MIDDLE, n=256), "message_denied", "its Middle")
    S.send("vm-blue-1", blue.out(S, SEND_MIDDLE, n=256),
           "meanwhile blue's own SEND Middle the other way: forwards (state is per direction)")
    S.send("fabric0", red.inc(S, SEND_MIDDLE, n=256),
           "meanwhile red's SEND Middle on red's connection: forwards (state is per connection)")
    S.drop("fabric0", blue.inc(S, WRITE_MIDDLE, n=256), "message_denied", "its Middle")
    S.drop("fabric0", blue.inc(S, WRITE_LAST, n=256), "message_denied", "its Last")
    S.send("fabric0", blue.inc(S, WRITE_FIRST, [reth(MR_VA, MR_RKEY, 512)], n=256),
           "the next WRITE First: allowed")
    S.send("fabric0", blue.inc(S, WRITE_LAST, n=256), "its Last")
    S.drop("vm-blue-1", b11.out(S, WRITE_FIRST, [reth(MR_VA, 0x5555, 512)], n=256),
           "mr_unknown", "hairpin WRITE First, unknown rkey")
    S.drop("vm-blue-1", b11.out(S, WRITE_LAST, n=256), "message_denied", "its Last")
    S.send("vm-blue-1", b11.out(S, SEND_ONLY, n=32), "the next message on that connection")
    out.append(S)

    S = Scenario("drop_nonlinear", m, "nonlinear: with --mbuf-size 1024 a 2 KiB frame arrives "
                 "as a chain of mbufs", switch_args=["--mbuf-size", "1024"])
    S.drop("vm-blue-1", blue.out(S, SEND_MIDDLE, n=2048), "nonlinear", "2 KiB SEND Middle")
    S.drop("fabric0", blue.inc(S, WRITE_MIDDLE, n=2048), "nonlinear", "2 KiB WRITE Middle")
    S.send("vm-blue-1", blue.out(S, SEND_LAST, n=512), "512 B: one mbuf")
    S.send("fabric0", blue.inc(S, WRITE_LAST, n=512), "512 B: one mbuf")
    out.append(S)
    return out


def malformed(m, blue, S):
    """(port, frame, source, reason): every parser error, from broken blue frames."""
    res = []
    ETH = "Ether(dst='%s', src='%s')" % (m.ports["vm-blue-1"]["mac"], blue.le["mac"])
    IP4 = "IP(src='192.168.1.10', dst='192.168.1.20', id=7, flags='DF')"
    IP6 = "IPv6(src='fd00:1::10', dst='fd00:1::20')"
    UDPR = "UDP(sport=0xc001, dport=4791, chksum=0)"
    SEND = "BTH(opcode=4, dqpn=33, psn=%d)/Raw(b'blue' + bytes(28))"
    ACK_ = "BTH(opcode=0x11, dqpn=33, psn=%d)/AETH(syndrome=0x1f, msn=1)"
    FETH = "Ether(dst='%s', src='%s')" % (m.uplink["mac"], m.neigh["10.0.0.2"])
    FIP4 = "IP(src='10.0.0.2', dst='10.0.0.1', id=9, flags='DF')"
    T = [
        ("vm-blue-1", "truncated_eth", "raw(%s/%s/%s/%s)[:13]" % (ETH, IP4, UDPR, SEND)),
        ("vm-blue-1", "truncated_eth", "raw(%s)[:6]" % ETH),
        ("vm-blue-1", "truncated_vlan", "raw(%s/Dot1Q(vlan=5)/%s/%s/%s)[:16]" % (ETH, IP4, UDPR, SEND)),
        ("vm-blue-1", "truncated_vlan",
         "raw(%s/Dot1AD(vlan=5)/Dot1Q(vlan=6)/%s/%s/%s)[:20]" % (ETH, IP4, UDPR, SEND)),
        ("vm-blue-1", "too_many_vlans",
         "%s/Dot1AD(vlan=1)/Dot1Q(vlan=2)/Dot1Q(vlan=3)/%s/%s/%s" % (ETH, IP4, UDPR, SEND)),
        ("vm-blue-1", "not_ip", "%s/ARP(hwsrc='02:00:00:00:aa:10', psrc='192.168.1.10', "
         "pdst='192.168.1.1')" % ETH),
        ("vm-blue-1", "not_ip", "%s/Dot1Q(vlan=9, type=0x88b5)/Raw(bytes(range(46)))" % ETH),
        ("vm-blue-1", "truncated_ip", "raw(%s/%s/%s/%s)[:24]" % (ETH, IP4, UDPR, SEND)),
        ("vm-blue-1", "truncated_ip", "raw(%s/%s/%s/%s)[:40]" % (ETH, IP6, UDPR, SEND)),
        ("vm-blue-1", "bad_ip_version",
         "%s/Raw(raw(%s/%s/%s))" % (ETH.replace(")", ", type=0x0800)"), IP6, UDPR, SEND)),
        ("vm-blue-1", "bad_ip_version",
         "%s/Raw(raw(%s/%s/%s) + bytes(20))" % (ETH.replace(")", ", type=0x86dd)"), IP4, UDPR, SEND)),
        ("vm-blue-1", "bad_ip_ihl", "%s/%s/%s/%s" % (ETH, IP4.replace(")", ", ihl=4)"), UDPR, SEND)),
        ("vm-blue-1", "ip_fragment",
         "%s/%s/%s/%s" % (ETH, IP4.replace("flags='DF'", "flags='MF'"), UDPR, SEND)),
        ("vm-blue-1", "ip_fragment", "%s/%s/%s/%s" % (ETH, IP4.replace(")", ", frag=100)"), UDPR, SEND)),
        ("vm-blue-1", "bad_ip_length", "%s/%s/%s/%s" % (ETH, IP4.replace(")", ", len=200)"), UDPR, SEND)),
        # Shorter IP lengths than the frame: what follows is Ethernet padding, so the
        # UDP length (which still counts it) runs past the IP payload.
        ("vm-blue-1", "bad_udp_length",
         "%s/%s/%s/%s/Raw(bytes(4))" % (ETH, IP4.replace(")", ", len=76)"), UDPR, SEND)),
        ("vm-blue-1", "bad_udp_length", "%s/%s/%s/%s" % (ETH, IP6.replace(")", ", plen=30)"), UDPR, SEND)),
        ("vm-blue-1", "not_udp", "%s/%s/%s/%s" % (ETH, IP4.replace(")", ", proto=6)"), UDPR, SEND)),
        ("vm-blue-1", "not_udp", "%s/%s/%s/%s" % (ETH, IP6.replace(")", ", nh=6)"), UDPR, SEND)),
        ("vm-blue-1", "truncated_udp",
         "%s/%s/Raw(bytes([0xc0, 0x01, 0x12, 0xb7]))" % (ETH, IP4.replace(")", ", proto=17)"))),
        ("vm-blue-1", "bad_udp_length", "%s/%s/%s/%s" % (ETH, IP4, UDPR.replace(")", ", len=100)"), SEND)),
        ("vm-blue-1", "not_roce_port", "%s/%s/%s/%s" % (ETH, IP4, UDPR.replace("4791", "4792"), SEND)),
        ("vm-blue-1", "not_roce_port",
         "%s/%s/UDP(sport=5353, dport=53)/Raw(b'\\x12\\x34' + bytes(30))" % (ETH, IP4)),
        ("vm-blue-1", "truncated_bth",
         "%s/%s/%s/Raw(bytes([4, 0, 0xff, 0xff, 0, 0, 0, 33]))" % (ETH, IP4, UDPR)),
        ("vm-blue-1", "bad_tver",
         "%s/%s/%s/%s" % (ETH, IP4, UDPR, SEND.replace("opcode=4,", "opcode=4, version=1,"))),
        ("vm-blue-1", "bad_opcode",
         "%s/%s/%s/BTH(opcode=0x15, dqpn=33, psn=%%d)/Raw(bytes(8))" % (ETH, IP4, UDPR)),
        ("vm-blue-1", "bad_opcode",
         "%s/%s/%s/BTH(opcode=0x44, dqpn=33, psn=%%d)/Raw(bytes(32))" % (ETH, IP4, UDPR)),
        ("vm-blue-1", "truncated_ext",
         "%s/%s/%s/BTH(opcode=0x06, dqpn=33, psn=%%d)/Raw(bytes(8))" % (ETH, IP4, UDPR)),
        ("vm-blue-1", "bad_payload", "%s/%s/%s/%s/Raw(bytes(4))" % (ETH, IP4, UDPR, ACK_)),
        ("vm-blue-1", "bad_payload",
         "%s/%s/%s/BTH(opcode=0x81, becn=1, dqpn=33)/Raw(bytes(12))" % (ETH, IP4, UDPR)),
        ("vm-blue-1", "bad_pad",
         "%s/%s/%s/%s" % (ETH, IP4, UDPR, ACK_.replace("opcode=0x11,", "opcode=0x11, padcount=1,"))),
        ("vm-blue-1", "bad_pad",
         "%s/%s/%s/BTH(opcode=4, padcount=3, dqpn=33, psn=%%d)/Raw(b'bl')" % (ETH, IP4, UDPR)),
        ("vm-blue-1", "truncated_icrc",
         "%s/%s/%s/Raw(raw(%s)[:-4] + bytes(2))" % (ETH, IP4, UDPR, ACK_)),
        ("fabric0", "ip_fragment",
         "%s/%s/%s/%s" % (FETH, FIP4.replace("flags='DF'", "flags='MF'"), UDPR, SEND.replace("33", "4097"))),
        ("fabric0", "bad_udp_length",
         "%s/%s/%s/%s" % (FETH, FIP4, UDPR.replace(")", ", len=9)"), SEND.replace("33", "4097"))),
        ("fabric0", "not_roce_port",
         "%s/%s/%s/%s" % (FETH, FIP4, UDPR.replace("4791", "4790"), SEND.replace("33", "4097"))),
        ("fabric0", "truncated_bth", "%s/%s/%s/Raw(bytes(11))" % (FETH, FIP4, UDPR)),
        ("fabric0", "bad_opcode",
         "%s/%s/%s/BTH(opcode=0x80, becn=1, dqpn=4097)/CNPPadding()" % (FETH, FIP4, UDPR)),
        ("fabric0", "truncated_icrc",
         "%s/%s/%s/Raw(raw(BTH(opcode=0x81, becn=1, dqpn=4097))[:-4])" % (FETH, FIP4, UDPR)),
    ]
    ns = {"Ether": Ether, "Dot1Q": Dot1Q, "Dot1AD": Dot1AD, "IP": IP, "IPv6": IPv6, "UDP": UDP,
          "BTH": BTH, "AETH": AETH, "CNPPadding": CNPPadding, "Raw": Raw, "raw": raw}
    from scapy.layers.l2 import ARP
    ns["ARP"] = ARP
    for port, reason, expr in T:
        if "%d" in expr:
            expr = expr % S.psn()
        fr = bytes(eval(expr, dict(ns)))  # noqa: S307 (our own expressions)
        res.append((port, fr, expr, reason))
    missing = set(PARSE_DROPS) - {r for _, _, _, r in res}
    assert not missing, "no malformed frame for %s" % sorted(missing)
    return res


def ipv6_scenarios():
    m = Model("examples/pipeline-ipv6.json")
    g = Side(m, "green", "fd00:1::10", 17)
    VA = 0x7f0000100000
    S = Scenario("ipv6", m, "IPv6 vIPs over an IPv6 fabric: RC, READ/WRITE/atomic "
                 "translation, ACK, CNP, VLAN and UD; traffic class, flow label and hop limit "
                 "unchanged; ICRC by icrc_zlib()")
    S.send("vm-green-1", g.out(S, SEND_ONLY, n=64), "SEND Only")
    S.send("vm-green-1", g.out(S, WRITE_FIRST, [reth(0x1000, 0x4444, 700)], n=256), "WRITE First")
    S.send("vm-green-1", g.out(S, WRITE_MIDDLE, n=256), "WRITE Middle")
    S.send("vm-green-1", g.out(S, WRITE_LAST, n=188, pad=1), "WRITE Last, pad 1")
    S.send("vm-green-1", g.out(S, RR_ONLY, [aeth(0x1f, 1)], n=128), "READ response Only")
    S.send("vm-green-1", g.out(S, ACK, [aeth(0x1f, 2)]), "ACK")
    S.send("vm-green-1", g.out(S, CNP, CNP_EXTS, psn=0, becn=1), "CNP")
    S.send("vm-green-1", g.out(S, SEND_ONLY, n=64, vlans=[(0x8100, 42, 6)]), "802.1Q SEND Only")
    S.send("fabric0", g.inc(S, WRITE_ONLY, [reth(VA + 0x40, 0x2001, 64)], n=64),
           "WRITE Only: translated")
    S.send("fabric0", g.inc(S, READ_REQ, [reth(VA + 0xff000, 0x2001, 0x1000)]),
           "READ request to the window's end: translated")
    S.send("fabric0", g.inc(S, CMP_SWAP, [atomic(VA + 0x80, 0x2001, 9, 8)]), "CmpSwap: translated")
    S.send("fabric0", g.inc(S, SEND_FIRST, n=256), "SEND First")
    S.send("fabric0", g.inc(S, SEND_LAST, n=32), "SEND Last")
    S.send("fabric0", g.inc(S, ACK, [aeth(0x61, 3)]), "NAK")
    S.send("fabric0", g.inc(S, CNP, CNP_EXTS, psn=0, becn=1), "CNP")
    S.send("fabric0", g.inc(S, WRITE_ONLY, [reth(VA, 0x2001, 32)], n=32,
                            vlans=[(0x88a8, 7, 0), (0x8100, 8, 2)]), "QinQ WRITE: translated")
    ud_l = m.qps[("green", "fd00:1::10", 40)]
    ud_r = m.qps[("green", "fd00:1::20", 41)]
    psn = S.psn()
    S.send("vm-green-1", F(eth_src="02:00:00:00:cc:10", eth_dst="02:00:00:00:03:01",
                           src="fd00:1::10", dst="fd00:1::20", opcode=UD_SEND_ONLY, dqpn=41, psn=psn,
                           exts=[deth(0x11112222, 40)], payload=payload("green", 64, psn), **vary(psn, 6)),
           "UD SEND Only: DestQP and DETH srcqp renamed")
    psn = S.psn()
    S.send("fabric0", F(eth_src="02:00:00:00:00:02", eth_dst="02:00:00:00:00:01",
                        src="fd00::2", dst="fd00::1", opcode=UD_SEND_ONLY_IMM, dqpn=ud_l["pqpn"], psn=psn,
                        exts=[deth(0x11112222, ud_r["pqpn"]), imm(0x1234)],
                        payload=payload("green", 32, psn), **vary(psn, 6)),
           "UD SEND Only with Immediate from the fabric")
    S.drop("fabric0", g.inc(S, SEND_ONLY, n=32, dst="fd00::3"), "not_our_host", "to fd00::3")
    S.drop("fabric0", g.inc(S, SEND_ONLY, n=32, src="fd00::9"), "spoofed_source", "from fd00::9")
    S.drop("fabric0", g.inc(S, WRITE_ONLY, [reth(VA - 1, 0x2001, 2)], n=4), "mr_out_of_bounds",
           "WRITE at addr - 1")
    S.drop("vm-green-1", g.out(S, SEND_ONLY, n=32, src="fd00:1::11"), "spoofed_source",
           "src vIP fd00:1::11")
    return [S]


def ud_scenarios():
    m = Model("examples/pipeline-ud.json")

    def ud_out(S, tenant, port, vip, mac, srcqp, dvip, dqpn, op=UD_SEND_ONLY, n=64, extra=(), qkey=0x11112222,
               **kw):
        psn = S.psn()
        a = dict(eth_src=mac, eth_dst=m.ports[port]["mac"], src=vip, dst=dvip, opcode=op,
                 dqpn=dqpn, psn=psn, exts=[deth(qkey, srcqp)] + list(extra),
                 payload=payload(tenant, n, psn))
        a.update(vary(psn))
        a.update(kw)
        return F(**a)

    def ud_in(S, tenant, shost, srcqp, dqpn, op=UD_SEND_ONLY, n=64, extra=(), **kw):
        psn = S.psn()
        a = dict(eth_src=m.host_mac(shost), eth_dst=m.uplink["mac"], src=shost, dst=m.host,
                 opcode=op, dqpn=dqpn, psn=psn, exts=[deth(0x11112222, srcqp)] + list(extra),
                 payload=payload(tenant, n, psn))
        a.update(vary(psn))
        a.update(kw)
        return F(**a)

    B1 = ("blue", "vm-blue-1", "192.168.1.10", "02:00:00:00:aa:10")
    B2 = ("blue", "vm-blue-2", "192.168.1.11", "02:00:00:00:aa:11")
    R1 = ("red", "vm-red-1", "192.168.1.10", "02:00:00:00:bb:10")
    rc = Side(m, "blue", "192.168.1.10", 17)
    out = []

    S = Scenario("ud", m, "UD with DETH both directions (DETH srcqp renamed vqpn <-> pqpn), "
                 "the gateway MAC for a host with no neighbor entry, UD hairpin across tenant "
                 "ports, and red reusing blue's vIP and vQPN")
    S.send("vm-blue-1", ud_out(S, *B1, 40, "192.168.1.20", 42), "blue .10/40 -> .20/42")
    S.send("vm-blue-1", ud_out(S, *B1, 40, "192.168.1.30", 43, op=UD_SEND_ONLY_IMM,
                               extra=[imm(77)]), "blue .10/40 -> .30/43 (gateway MAC), with Immediate")
    S.send("vm-blue-1", ud_out(S, *B1, 40, "192.168.1.11", 41), "UD hairpin .10 -> .11 (vm-blue-2)")
    S.send("vm-blue-2", ud_out(S, *B2, 41, "192.168.1.10", 40), "UD hairpin .11 -> .10 (vm-blue-1)")
    S.send("vm-blue-2", ud_out(S, *B2, 41, "192.168.1.20", 42, vlans=[(0x8100, 12, 1)]),
           "802.1Q blue .11/41 -> .20/42")
    S.send("vm-red-1", ud_out(S, *R1, 40, "192.168.1.20", 42), "red .10/40 -> .20/42: red's pqpns")
    S.send("fabric0", ud_in(S, "blue", "10.0.0.2", 6001, 5001), "from blue .20/42 to .10/40")
    S.send("fabric0", ud_in(S, "blue", "10.0.0.3", 7001, 5002, op=UD_SEND_ONLY_IMM, extra=[imm(5)]),
           "from blue .30/43 (via the gateway) to .11/41, with Immediate")
    S.send("fabric0", ud_in(S, "red", "10.0.0.2", 6002, 5003), "from red .20/42 to red .10/40")
    S.send("vm-blue-1", ud_out(S, *B1, 40, "192.168.1.20", 42, udp_csum=True,
                               ip_options=b"\x94\x04\x00\x00"),
           "UD with IPv4 options and a non-zero UDP checksum")
    S.send("fabric0", ud_in(S, "blue", "10.0.0.2", 6001, 5001, ip_options=b"\x94\x04\x00\x00",
                            vlans=[(0x8100, 3, 0)]), "802.1Q UD with IPv4 options from the fabric")
    S.send("vm-blue-1", rc.out(S, SEND_ONLY, n=64), "RC to .30 (gateway MAC)")
    S.send("fabric0", rc.inc(S, SEND_ONLY, n=64), "RC from .30")
    # CNPs name UD QPs too, and have no DETH: the sender is known by address.
    psn = S.psn()
    S.send("vm-blue-1", F(eth_src=B1[3], eth_dst=m.ports["vm-blue-1"]["mac"], src=B1[2], dst="192.168.1.20",
                          opcode=CNP, dqpn=42, psn=0, becn=1, exts=CNP_EXTS, **vary(psn)),
           "CNP from blue .10 to .20's UD QP 42: DestQP 6001, from this host")
    psn = S.psn()
    S.send("vm-blue-1", F(eth_src=B1[3], eth_dst=m.ports["vm-blue-1"]["mac"], src=B1[2], dst="192.168.1.11",
                          opcode=CNP, dqpn=41, psn=0, becn=1, exts=CNP_EXTS, **vary(psn)),
           "CNP from blue .10 to .11's UD QP 41: hairpin")
    psn = S.psn()
    S.send("fabric0", F(eth_src=m.host_mac("10.0.0.2"), eth_dst=m.uplink["mac"], src="10.0.0.2", dst=m.host,
                        opcode=CNP, dqpn=5001, psn=0, becn=1, exts=CNP_EXTS, **vary(psn)),
           "CNP from host 10.0.0.2 to blue's UD pqpn 5001: from .20 (blue's endpoint there) to .10/40")
    psn = S.psn()
    S.send("fabric0", F(eth_src=m.host_mac("10.0.0.2"), eth_dst=m.uplink["mac"], src="10.0.0.2", dst=m.host,
                        opcode=CNP, dqpn=5003, psn=0, becn=1, exts=CNP_EXTS, **vary(psn)),
           "CNP to red's UD pqpn 5003: from red's .20")
    out.append(S)

    S = Scenario("ud_drops", m, "UD drops: unknown sender (spoofed_source), a QP sending from "
                 "another port or MAC, another tenant's sender on the fabric, unknown QP, "
                 "RC/UD type mismatches, and a controlled Q_Key")
    S.drop("vm-blue-1", ud_out(S, *B1, 99, "192.168.1.20", 42), "spoofed_source",
           "DETH srcqp 99: no such UD QP of .10")
    S.drop("vm-blue-1", ud_out(S, "blue", "vm-blue-1", "192.168.1.11", "02:00:00:00:aa:11", 41,
                               "192.168.1.20", 42), "spoofed_source",
           ".11/41 lives on vm-blue-2, sent from vm-blue-1")
    S.drop("vm-blue-1", ud_out(S, *B1, 40, "192.168.1.20", 42, eth_src="02:00:00:00:aa:99"),
           "spoofed_source", "wrong source MAC")
    S.drop("vm-red-1", ud_out(S, *R1, 41, "192.168.1.20", 42), "spoofed_source",
           "red .10 has no UD QP 41")
    S.drop("vm-blue-1", ud_out(S, *B1, 40, "192.168.1.20", 77), "no_connection", "to .20 qp 77")
    S.drop("vm-red-1", ud_out(S, *R1, 40, "192.168.1.30", 43), "wrong_tenant",
           "red to .30, which only blue has")
    S.drop("vm-blue-1", rc.out(S, SEND_ONLY, n=32, dst="192.168.1.20", dqpn=42), "type_mismatch",
           "RC SEND Only to UD qp 42")
    S.drop("vm-blue-1", ud_out(S, *B1, 40, "192.168.1.30", 34), "type_mismatch",
           "UD SEND Only to RC qp 34")
    S.drop("fabric0", ud_in(S, "blue", "10.0.0.2", 6002, 5001), "spoofed_source",
           "red's .20/42 (pqpn 6002) to blue's 5001")
    S.drop("fabric0", ud_in(S, "blue", "10.0.0.2", 6099, 5001), "spoofed_source",
           "unknown sender pqpn 6099")
    S.drop("fabric0", ud_in(S, "blue", "10.0.0.9", 6001, 5001), "spoofed_source",
           "sender host 10.0.0.9")
    S.drop("fabric0", rc.inc(S, SEND_ONLY, n=32, dqpn=5001), "type_mismatch", "RC SEND to UD 5001")
    S.drop("fabric0", ud_in(S, "blue", "10.0.0.3", 7001, 4097), "type_mismatch",
           "UD SEND to RC 4097")
    S.drop("fabric0", ud_in(S, "blue", "10.0.0.2", 6001, 5009), "no_connection", "pqpn 5009")
    S.drop("vm-blue-1", ud_out(S, *B1, 40, "192.168.1.20", 42, qkey=0x80010000), "privileged_qkey",
           "a controlled Q_Key (bit 31) from a tenant without privileged_qkey")
    psn = S.psn()
    S.drop("vm-blue-1", F(eth_src="02:00:00:00:aa:99", eth_dst=m.ports["vm-blue-1"]["mac"], src=B1[2],
                          dst="192.168.1.20", opcode=CNP, dqpn=42, psn=0, becn=1, exts=CNP_EXTS, **vary(psn)),
           "spoofed_source", "a CNP to a UD QP from another MAC")
    psn = S.psn()
    S.drop("fabric0", F(eth_src=m.host_mac("10.0.0.9"), eth_dst=m.uplink["mac"], src="10.0.0.9", dst=m.host,
                        opcode=CNP, dqpn=5001, psn=0, becn=1, exts=CNP_EXTS, **vary(psn)),
           "spoofed_source", "a CNP to a UD QP from a host where blue has no endpoint")
    S.send("vm-blue-1", ud_out(S, *B1, 40, "192.168.1.20", 42, qkey=0x7fff0000),
           "Q_Key with bit 31 clear: forwarded")
    S.send("vm-blue-1", ud_out(S, *B1, 40, "192.168.1.20", 42), "control")
    S.send("fabric0", ud_in(S, "blue", "10.0.0.2", 6001, 5001), "control")
    out.append(S)

    S = Scenario("ud_spoofed_own_host", m, "spoofed_source: a UD frame on the fabric that claims "
                 "to come from a QP of this host (.11/41, pqpn 5002 on 10.0.0.1)")
    S.drop("fabric0", ud_in(S, "blue", "10.0.0.1", 5002, 5001), "spoofed_source",
           "src 10.0.0.1 (ours), DETH srcqp 5002 (local .11/41) to 5001")
    S.send("fabric0", ud_in(S, "blue", "10.0.0.2", 6001, 5001), "control")
    out.append(S)
    return out


def ieth(rkey):
    return ("IETH", {"rkey": rkey})


def feth(sel=0, plt=1):
    """FLUSH ETH: selectivity level 0 (the RETH's range), placement type 1 (global visibility)."""
    return ("FETH", {"sel": sel, "plt": plt})


# examples/pipeline-ibta15.json: blue .10's three windows and their keys.
W1, K1 = 0x7f0000000000, 0x1000   # 1 MiB: remote_read, remote_write, flush
W2, K2 = 0x7f1000000000, 0x2000   # 64 KiB: remote_read, remote_write (no flush)
W3, K3 = 0x7f2000000000, 0x3000   # 64 KiB: remote_read, flush (no remote_write)
K_REMOTE = 0x5000                 # advertised by the remote .20 (host 10.0.0.2)


def ibta15_scenarios():
    m = Model("examples/pipeline-ibta15.json")
    blue = Side(m, "blue", "192.168.1.10", 17)    # .10/17 <-> .20/33, remote
    acl = Side(m, "blue", "192.168.1.10", 22)     # .10/22 <-> .30/44: .30 may not write, .10 not read
    b11 = Side(m, "blue", "192.168.1.11", 18)     # hairpin .11/18 -> .10/19: owner .10
    b10h = Side(m, "blue", "192.168.1.10", 19)    # hairpin .10/19 -> .11/18: owner .11
    red = Side(m, "red", "192.168.1.10", 17)      # mr_check off
    q = lambda vid, prio=0: (0x8100, vid, prio)  # noqa: E731
    out = []

    # -- C9-88
    S = Scenario("zero_length_rdma", m, "C9-88: a zero-length RDMA WRITE or READ is neither "
                 "checked nor translated, even under mr_check enforce; the same frames with a "
                 "length are checked (dropped, or translated with a valid key)")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(0, 0x9999, 0)]),
           "zero-length WRITE Only, unknown rkey, va 0: forwarded untranslated")
    S.mdrop("fabric0", blue.inc(S, WRITE_ONLY, [reth(0, 0x9999, 16)], n=16), "mr_unknown",
            "the same WRITE with 16 bytes")
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(0xdead0000, 0x9999, 0)]),
           "zero-length READ, unknown rkey: forwarded untranslated")
    S.mdrop("fabric0", blue.inc(S, READ_REQ, [reth(0xdead0000, 0x9999, 1)]), "mr_unknown",
            "the same READ of 1 byte")
    S.send("fabric0", blue.inc(S, WRITE_ONLY_IMM, [reth(W1 + 0x200000, K1, 0), imm(0x11)]),
           "zero-length WRITE Only with Immediate, valid rkey, va past the window: "
           "forwarded untranslated")
    S.mdrop("fabric0", blue.inc(S, WRITE_ONLY_IMM, [reth(W1 + 0x200000, K1, 4), imm(0x12)], n=4),
            "mr_out_of_bounds", "the same with 4 bytes")
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(W1 + 0x100, K1, 0)]),
           "zero-length READ inside the window: not translated either")
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(W1 + 0x100, K1, 64)]),
           "control: the same READ of 64 bytes, translated")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(W3 + 0x10, K3, 0)]),
           "zero-length WRITE into a window without remote_write: forwarded untranslated")
    S.mdrop("fabric0", blue.inc(S, WRITE_ONLY, [reth(W3 + 0x10, K3, 8)], n=8), "mr_access_denied",
            "the same WRITE with 8 bytes")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(W1 + 0x10, K1, 8)], n=8),
           "control: 8-byte WRITE into a writable window, translated")
    S.send("vm-blue-1", b11.out(S, WRITE_ONLY, [reth(0, 0x5555, 0)]),
           "hairpin zero-length WRITE, unknown rkey: forwarded untranslated (ICRC unchanged)")
    S.mdrop("vm-blue-1", b11.out(S, WRITE_ONLY, [reth(0, 0x5555, 16)], n=16), "mr_unknown",
            "the same hairpin WRITE with 16 bytes")
    S.send("vm-blue-1", b11.out(S, READ_REQ, [reth(W1, K1, 0)]),
           "hairpin zero-length READ, valid key: untranslated")
    S.send("vm-blue-1", b10h.out(S, RR_ONLY, [aeth(0x1f, 1)]), "its zero-length READ response")
    S.send("vm-blue-1", blue.out(S, READ_REQ, [reth(0, 0x4444, 0)]),
           "zero-length READ toward the fabric: untouched, as every RETH toward the fabric")
    S.send("fabric0", blue.inc(S, RR_ONLY, [aeth(0x1f, 2)]), "its zero-length READ response")
    S.send("fabric0", red.inc(S, WRITE_ONLY, [reth(0, 0x9999, 0)]),
           "red (mr_check off): zero-length WRITE, unknown rkey: untranslated")
    S.mdrop("fabric0", blue.inc(S, FLUSH, [feth(), reth(W1 + 0x200000, 0x9999, 0)]), "mr_unknown",
            "a zero-length FLUSH is checked (C9-88 covers RDMA WRITE and READ only, as in rxe)")
    S.send("fabric0", blue.inc(S, FLUSH, [feth(), reth(W1 + 0x40, K1, 0)]),
           "a zero-length FLUSH in the window: checked and translated")
    out.append(S)

    # -- IETH
    S = Scenario("send_invalidate", m, "SEND Last/Only with Invalidate: the IETH R_Key is "
                 "translated at the owner (from the fabric: the local endpoint; hairpin: the "
                 "local destination), mr_unknown under enforce for a key the owner never "
                 "advertised, untranslated under mr_check off and toward the fabric")
    S.send("fabric0", blue.inc(S, SEND_ONLY_INV, [ieth(K1)], n=32),
           "SEND Only with Invalidate 0x1000: becomes 0x00a01000")
    S.send("fabric0", blue.inc(S, SEND_ONLY_INV, [ieth(K2)]),
           "zero-length SEND Only with Invalidate 0x2000: becomes 0x00a02000")
    S.send("fabric0", blue.inc(S, SEND_FIRST, n=256), "SEND First")
    S.send("fabric0", blue.inc(S, SEND_LAST_INV, [ieth(K3)], n=64),
           "SEND Last with Invalidate 0x3000 (a window without remote_write; no access is "
           "checked): becomes 0x00a03000")
    S.mdrop("fabric0", blue.inc(S, SEND_ONLY_INV, [ieth(0x9999)], n=32), "mr_unknown",
            "SEND Only with Invalidate 0x9999: never advertised")
    S.mdrop("fabric0", blue.inc(S, SEND_ONLY_INV, [ieth(0x00a01000)], n=32), "mr_unknown",
            "the target key 0x00a01000, not an advertised one")
    S.mdrop("fabric0", blue.inc(S, SEND_ONLY_INV, [ieth(K_REMOTE)], n=32), "mr_unknown",
            "0x5000: the remote .20's key, not the owner .10's")
    S.send("fabric0", blue.inc(S, SEND_FIRST, n=256), "SEND First")
    S.mdrop("fabric0", blue.inc(S, SEND_LAST_INV, [ieth(0x7777)], n=16), "mr_unknown",
            "its SEND Last with Invalidate 0x7777")
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=32), "the next message forwards")
    S.send("fabric0", red.inc(S, SEND_ONLY_INV, [ieth(K1)], n=32),
           "red (mr_check off) 0x1000: red's own target 0x00c01000")
    S.send("fabric0", red.inc(S, SEND_ONLY_INV, [ieth(0x9999)], n=32),
           "red 0x9999 (mr_check off): forwarded untranslated, not counted")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY_INV, [ieth(K_REMOTE)], n=32),
           "toward the fabric, .20's own key 0x5000: untranslated (the remote host does it)")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY_INV, [ieth(0x9999)], n=32),
           "toward the fabric, 0x9999: untranslated, not dropped")
    S.send("vm-blue-1", blue.out(S, SEND_FIRST, n=256), "SEND First")
    S.send("vm-blue-1", blue.out(S, SEND_LAST_INV, [ieth(K_REMOTE)], n=48),
           "SEND Last with Invalidate toward the fabric: untranslated")
    S.send("vm-blue-1", b11.out(S, SEND_ONLY_INV, [ieth(K1)], n=32),
           "hairpin .11 -> .10, 0x1000: .10's target 0x00a01000")
    S.send("vm-blue-1", b10h.out(S, SEND_ONLY_INV, [ieth(K1)], n=32),
           "hairpin .10 -> .11, 0x1000: .11's target 0x00b01000")
    S.mdrop("vm-blue-1", b10h.out(S, SEND_ONLY_INV, [ieth(K2)], n=32), "mr_unknown",
            "hairpin .10 -> .11, 0x2000: .10's key, but the owner is .11")
    S.mdrop("vm-blue-1", b11.out(S, SEND_ONLY_INV, [ieth(0x7777)], n=32), "mr_unknown",
            "hairpin .11 -> .10, 0x7777")
    S.send("fabric0", blue.inc(S, SEND_ONLY_INV, [ieth(K1)], n=32, vlans=[q(200, 3)]),
           "802.1Q SEND Only with Invalidate: translated")
    S.send("fabric0", blue.inc(S, SEND_ONLY_INV, [ieth(K1)], n=32, udp_csum=True,
                               ip_options=b"\x94\x04\x00\x00"),
           "SEND Only with Invalidate with IPv4 options and a UDP checksum: translated")
    out.append(S)

    # -- FLUSH and ATOMIC WRITE
    S = Scenario("flush_atomic_write", m, "IBTA 1.5 FLUSH (FETH, RETH) and ATOMIC WRITE (RETH, "
                 "8 bytes): forwarded; at the owner the RETH is translated with bounds checks; "
                 "FLUSH needs the access flush, ATOMIC WRITE remote_write; the ACL polices "
                 "FLUSH as a write")
    S.send("fabric0", blue.inc(S, FLUSH, [feth(), reth(W1 + 0x1000, K1, 4096)]),
           "FLUSH into the window with flush: translated")
    S.mdrop("fabric0", blue.inc(S, FLUSH, [feth(), reth(W2 + 0x100, K2, 64)]), "mr_access_denied",
            "FLUSH into 0x2000 (read, write, no flush)")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(W2 + 0x100, K2, 64)], n=64),
           "control: WRITE into 0x2000, translated")
    S.send("fabric0", blue.inc(S, FLUSH, [feth(0, 2), reth(W3 + 0x100, K3, 64)]),
           "FLUSH (persistence) into 0x3000 (flush, no remote_write): translated")
    S.mdrop("fabric0", blue.inc(S, FLUSH, [feth(), reth(W1 + 0x100000 - 63, K1, 64)]),
            "mr_out_of_bounds", "FLUSH one byte past the window's end")
    S.send("fabric0", blue.inc(S, FLUSH, [feth(), reth(W1 + 0x100000 - 64, K1, 64)]),
           "FLUSH to the window's end: translated")
    S.mdrop("fabric0", blue.inc(S, FLUSH, [feth(), reth(W1, 0x9999, 64)]), "mr_unknown",
            "FLUSH, rkey 0x9999")
    S.send("vm-blue-1", blue.out(S, RR_ONLY, [aeth(0x1f, 3)]),
           "a FLUSH's answer, a zero-length READ response Only")
    S.send("fabric0", blue.inc(S, ATOMIC_WRITE, [reth(W1 + 0x2000, K1, 8)], n=8),
           "ATOMIC WRITE into the writable window: translated")
    S.mdrop("fabric0", blue.inc(S, ATOMIC_WRITE, [reth(W3 + 0x2000, K3, 8)], n=8),
            "mr_access_denied", "ATOMIC WRITE into 0x3000 (no remote_write)")
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(W3 + 0x2000, K3, 8)]),
           "control: READ from 0x3000, translated")
    S.send("fabric0", blue.inc(S, ATOMIC_WRITE, [reth(W2 + 0x10000 - 8, K2, 8)], n=8),
           "ATOMIC WRITE on the last 8 bytes of 0x2000: translated")
    S.mdrop("fabric0", blue.inc(S, ATOMIC_WRITE, [reth(W2 + 0x10000 - 7, K2, 8)], n=8),
            "mr_out_of_bounds", "ATOMIC WRITE one byte past the end")
    S.mdrop("fabric0", blue.inc(S, ATOMIC_WRITE, [reth(W1, 0x9999, 8)], n=8), "mr_unknown",
            "ATOMIC WRITE, rkey 0x9999")
    S.send("vm-blue-1", blue.out(S, ACK, [aeth(0x1f, 4)]), "an ATOMIC WRITE's ACK")
    S.send("vm-blue-1", blue.out(S, FLUSH, [feth(1, 1), reth(0x7f5000000000, K_REMOTE, 0x1000)]),
           "FLUSH toward the fabric: RETH untouched")
    S.send("vm-blue-1", blue.out(S, ATOMIC_WRITE, [reth(0x7f5000000040, K_REMOTE, 8)], n=8),
           "ATOMIC WRITE toward the fabric: RETH untouched")
    S.send("fabric0", blue.inc(S, RR_ONLY, [aeth(0x1f, 5)]), "the FLUSH's READ response")
    S.send("fabric0", blue.inc(S, ACK, [aeth(0x1f, 6)]), "the ATOMIC WRITE's ACK")
    # The ACL: .30 may not write to .10, .10 may not read from .30.
    S.mdrop("fabric0", acl.inc(S, FLUSH, [feth(), reth(W1 + 0x100, K1, 64)]), "acl_denied",
            ".30 -> .10 FLUSH: a write, denied (key, bounds and access would pass)")
    S.mdrop("fabric0", acl.inc(S, ATOMIC_WRITE, [reth(W1 + 0x100, K1, 8)], n=8), "acl_denied",
            ".30 -> .10 ATOMIC WRITE: denied")
    S.mdrop("fabric0", acl.inc(S, WRITE_ONLY, [reth(W1 + 0x100, K1, 8)], n=8), "acl_denied",
            ".30 -> .10 WRITE: denied")
    S.send("fabric0", acl.inc(S, READ_REQ, [reth(W1 + 0x100, K1, 64)]),
           "control: .30 -> .10 READ, allowed and translated")
    S.send("fabric0", acl.inc(S, SEND_ONLY, n=32), "control: .30 -> .10 SEND, allowed")
    S.send("vm-blue-1", acl.out(S, FLUSH, [feth(), reth(0x7f6000000000, 0x6000, 64)]),
           ".10 -> .30 FLUSH: allowed (reads are denied that way, and a FLUSH is no read)")
    S.send("vm-blue-1", acl.out(S, ATOMIC_WRITE, [reth(0x7f6000000000, 0x6000, 8)], n=8),
           ".10 -> .30 ATOMIC WRITE: allowed")
    S.mdrop("vm-blue-1", acl.out(S, READ_REQ, [reth(0x7f6000000000, 0x6000, 64)]), "acl_denied",
            "control: .10 -> .30 READ, denied")
    # Hairpin: the owner is the local destination.
    S.send("vm-blue-1", b11.out(S, FLUSH, [feth(), reth(W1 + 0x40, K1, 64)]),
           "hairpin .11 -> .10 FLUSH: translated with .10's window")
    S.mdrop("vm-blue-1", b11.out(S, FLUSH, [feth(), reth(W2 + 0x40, K2, 64)]), "mr_access_denied",
            "hairpin .11 -> .10 FLUSH into 0x2000 (no flush)")
    S.mdrop("vm-blue-1", b11.out(S, ATOMIC_WRITE, [reth(W3 + 0x40, K3, 8)], n=8),
            "mr_access_denied", "hairpin .11 -> .10 ATOMIC WRITE into 0x3000 (no remote_write)")
    S.send("vm-blue-1", b10h.out(S, ATOMIC_WRITE, [reth(W1 + 0x100, K1, 8)], n=8),
           "hairpin .10 -> .11 ATOMIC WRITE, 0x1000: .11's window (0x00b01000)")
    # mr_check off: refused checks forward untranslated.
    S.send("fabric0", red.inc(S, FLUSH, [feth(), reth(W1 + 0x100, K1, 64)]),
           "red (mr_check off) FLUSH into a window without flush: untranslated")
    S.send("fabric0", red.inc(S, ATOMIC_WRITE, [reth(W1 + 0x100, K1, 8)], n=8),
           "red ATOMIC WRITE into a window without remote_write: untranslated")
    S.send("fabric0", red.inc(S, READ_REQ, [reth(W1 + 0x100, K1, 64)]),
           "control: red READ, translated")
    S.send("fabric0", blue.inc(S, ATOMIC_WRITE, [reth(W1 + 0x3000, K1, 8)], n=8,
                               vlans=[(0x88a8, 7, 0), q(8, 2)]), "QinQ ATOMIC WRITE: translated")
    out.append(S)

    # -- Ethernet padding
    S = Scenario("padding", m, "frames longer than their IP length (Ethernet padding: zeros, "
                 "junk, a kept FCS) forward with the padding as is, outside the ICRC; port bytes "
                 "count it, tenant bytes do not")
    z2, j2, fcs = b"\x00\x00", b"\xa5\x5a", b"\x12\x34\x56\x78"
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, l2pad=z2),
           "zero-length SEND Only, 58 bytes padded to 60 with zeros")
    S.send("fabric0", blue.inc(S, SEND_ONLY, l2pad=z2), "zero-length SEND Only, 60 bytes")
    S.send("fabric0", blue.inc(S, SEND_ONLY, l2pad=j2), "padded with junk bytes: kept as is")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, l2pad=z2, udp_csum=True),
           "padded, with a non-zero UDP checksum (over the datagram only)")
    S.send("vm-blue-1", blue.out(S, SEND_FIRST, n=256), "SEND First")
    S.send("vm-blue-1", blue.out(S, SEND_LAST, l2pad=z2), "zero-length SEND Last, padded")
    S.send("fabric0", blue.inc(S, SEND_ONLY, l2pad=z2, vlans=[q(200, 3)]),
           "802.1Q zero-length SEND Only (62 bytes) padded to 64")
    S.send("vm-blue-1", blue.out(S, ACK, [aeth(0x1f, 7)], l2pad=fcs), "ACK with 4 bytes of FCS kept")
    S.send("fabric0", blue.inc(S, ACK, [aeth(0x1f, 8)], l2pad=bytes(range(1, 11))),
           "ACK with 10 bytes of padding")
    S.send("fabric0", blue.inc(S, WRITE_ONLY, [reth(W1 + 0x100, K1, 4)], n=4, l2pad=fcs),
           "WRITE Only with a kept FCS: translated, the ICRC updated without the padding")
    S.send("fabric0", blue.inc(S, SEND_ONLY_INV, [ieth(K1)], l2pad=j2),
           "zero-length SEND Only with Invalidate, padded: IETH translated")
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(0, 0x9999, 0)], l2pad=fcs),
           "zero-length READ with a kept FCS: untranslated")
    S.send("vm-blue-1", b11.out(S, SEND_ONLY, l2pad=j2),
           "hairpin zero-length SEND Only, padded: MACs only, ICRC unchanged")
    S.send("vm-red-1", red.out(S, SEND_ONLY, l2pad=z2), "red zero-length SEND Only, padded")
    S.send("fabric0", red.inc(S, SEND_ONLY, l2pad=z2), "to red, padded")
    S.drop("vm-blue-1", blue.out(S, SEND_ONLY, l2pad=z2, eth_src="02:00:00:00:aa:99"),
           "spoofed_source", "padded, from a wrong MAC: dropped (the port counts its 60 bytes)")
    out.append(S)
    return out


def ipv6_ibta15_scenarios():
    m = Model("examples/pipeline-ipv6.json")
    g = Side(m, "green", "fd00:1::10", 17)
    VA, KEY = 0x7f0000100000, 0x2001  # remote_read, remote_write, remote_atomic (no flush)
    S = Scenario("ipv6_ibta15", m, "IPv6: SEND with Invalidate translated, ATOMIC WRITE "
                 "translated, FLUSH without the access flush denied, a zero-length WRITE "
                 "untranslated, a padded frame forwarded with its padding")
    S.send("fabric0", g.inc(S, SEND_ONLY_INV, [ieth(KEY)], n=32),
           "SEND Only with Invalidate 0x2001: becomes 0x00c0ffee")
    S.mdrop("fabric0", g.inc(S, SEND_ONLY_INV, [ieth(0x2002)], n=32), "mr_unknown",
            "SEND Only with Invalidate 0x2002")
    S.send("vm-green-1", g.out(S, SEND_ONLY_INV, [ieth(0x4444)], n=32),
           "toward the fabric: untranslated")
    S.send("fabric0", g.inc(S, ATOMIC_WRITE, [reth(VA + 0x10, KEY, 8)], n=8),
           "ATOMIC WRITE: translated")
    S.mdrop("fabric0", g.inc(S, FLUSH, [feth(), reth(VA, KEY, 64)]), "mr_access_denied",
            "FLUSH into a window without flush")
    S.send("fabric0", g.inc(S, WRITE_ONLY, [reth(0, 0x7777, 0)]),
           "zero-length WRITE, unknown rkey: untranslated")
    S.send("fabric0", g.inc(S, SEND_ONLY, l2pad=b"\x12\x34\x56\x78"),
           "zero-length SEND Only with a kept FCS")
    S.send("vm-green-1", g.out(S, ACK, [aeth(0x1f, 1)], l2pad=b"\x00\x00"), "ACK, 2 bytes of padding")
    return [S]


def nak_scenarios():
    """
    NAKs of refused RC requests (tests/pipeline/nak.json, nak-ipv6.json).
    The re-arm steps are RX_BURST frames apart, so that they fall in
    different rx bursts and the switch's bursts cannot change the outcome:
    the generator checks that the rule frame by frame gives the same NAKs.
    """
    m = Model("tests/pipeline/nak.json")
    blue = Side(m, "blue", "192.168.1.10", 17)    # .10/17 <-> .20/33, remote
    acl = Side(m, "blue", "192.168.1.10", 22)     # .10/22 <-> .30/44: .10 may not read
    b11 = Side(m, "blue", "192.168.1.11", 18)     # hairpin .11/18 -> .10/19: owner .10
    b10h = Side(m, "blue", "192.168.1.10", 19)    # hairpin .10/19 -> .11/18: owner .11
    uc = Side(m, "blue", "192.168.1.10", 23)      # UC .10/23 <-> .20/45
    den = Side(m, "blue", "192.168.1.10", 24)     # .10/24 <-> .40/46, denied both ways
    red = Side(m, "red", "192.168.1.10", 17)
    q = lambda vid, prio=0: (0x8100, vid, prio)  # noqa: E731

    def fillers(S, n=RX_BURST):
        for _ in range(n):
            S.send("fabric0", red.inc(S, SEND_ONLY, n=16), "filler: red SEND Only (a burst apart)")

    out = []
    S = Scenario("nak", m, "an RC request refused for an R_Key, bounds, access or ACL reason is "
                 "answered with one NAK (remote access error, the request's PSN, tags, DSCP and "
                 "P_Key, the last MSN of the other direction): out of the uplink as if the local "
                 "QP had answered, or out of the tenant port as if the remote one had; no "
                 "further NAK until a request of that direction is forwarded; UC, responses and "
                 "message_denied get none")
    # The uplink is polled before the tenant port: these answers are seen
    # before the tenant port's refusals, and after the fabric's first burst.
    S.send("fabric0", acl.inc(S, ACK, [aeth(0x1f, 0x55)]), ".30 -> .10 ACK, MSN 0x55")
    S.send("vm-blue-1", blue.out(S, ACK, [aeth(0x1f, 0x77)]), ".10 -> .20 ACK, MSN 0x77")
    # From the fabric: NAKed out of the uplink, in the fabric view.
    S.mdrop("fabric0", blue.inc(S, WRITE_ONLY, [reth(W1, 0x9999, 16)], n=16, pkey=0x8001),
            "mr_unknown", ".20 -> .10 WRITE, rkey 0x9999: NAK to 10.0.0.2 pqpn 8193, P_Key "
            "0x8001, MSN 0 (.10's ACK is polled after this burst)")
    S.mdrop("fabric0", blue.inc(S, WRITE_FIRST, [reth(W1 + 0x100000 - 8, K1, 512)], n=256),
            "mr_out_of_bounds", "refused again, no request forwarded since: no NAK")
    S.drop("fabric0", blue.inc(S, WRITE_MIDDLE, n=256), "message_denied", "its Middle: no NAK")
    S.drop("fabric0", blue.inc(S, WRITE_LAST, n=256), "message_denied", "its Last: no NAK")
    S.send("fabric0", blue.inc(S, ACK, [aeth(0x1f, 3)]),
           "an answer of .20 to .10 forwarded: re-arms nothing (not a request)")
    S.mdrop("fabric0", uc.inc(S, UC_WRITE_ONLY, [reth(W1, 0x9999, 16)], n=16), "mr_unknown",
            "UC .20 -> .10 WRITE, rkey 0x9999: refused silently")
    S.mdrop("fabric0", den.inc(S, SEND_ONLY, n=16), "acl_denied",
            ".40 -> .10 SEND on a connection denied both ways: NAK to pqpn 8197")
    S.drop("fabric0", den.inc(S, SEND_MIDDLE, n=16), "acl_denied",
           "its SEND Middle: denied too (the connection), no second NAK")
    S.drop("fabric0", den.inc(S, ACK, [aeth(0x1f, 1)]), "acl_denied",
           "an ACK on that connection: denied, not a request: no NAK")
    fillers(S)
    S.send("fabric0", blue.inc(S, SEND_ONLY, n=32), ".20 -> .10 SEND forwarded: re-arms the NAK")
    fillers(S)
    S.mdrop("fabric0", blue.inc(S, CMP_SWAP, [atomic(W1 + 0x100, K1, 1, 2)], vlans=[q(200, 3)]),
            "mr_access_denied", "802.1Q CmpSwap into a window without remote_atomic: a second "
            "NAK, tagged vid 200 pcp 3, MSN 0x77 (.10's ACK)")
    S.mdrop("fabric0", blue.inc(S, READ_REQ, [reth(W1, K1, 0x100001)]), "mr_out_of_bounds",
            "READ past the end: no NAK, none forwarded since")
    fillers(S)
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(W1, K1, 64)]), "READ forwarded: re-arms")
    fillers(S)
    S.mdrop("fabric0", blue.inc(S, WRITE_ONLY, [reth(W3 + 0x10, K3, 8)], n=8,
                                vlans=[(0x88a8, 7, 1), q(8, 2)]), "mr_access_denied",
            "QinQ WRITE into a window without remote_write: a third NAK, tags 0x88a8 vid 7 "
            "pcp 1 / 0x8100 vid 8 pcp 2")
    # From the tenant port: NAKed out of it, in the tenant's view.
    S.mdrop("vm-blue-1", acl.out(S, READ_REQ, [reth(0x7f6000000000, 0x6000, 64)], pkey=0x8002),
            "acl_denied", ".10 -> .30 READ, denied by the ACL: NAK from .30 to .10 qp 22, "
            "P_Key 0x8002, MSN 0x55 (.30's ACK)")
    S.mdrop("vm-blue-1", acl.out(S, READ_REQ, [reth(0x7f6000000000, 0x6000, 64)]), "acl_denied",
            "denied again: no NAK")
    S.send("vm-blue-1", b10h.out(S, ACK, [aeth(0x1f, 9)]), "hairpin .10 -> .11 ACK, MSN 9")
    S.mdrop("vm-blue-1", b11.out(S, WRITE_ONLY, [reth(W1, 0x5555, 16)], n=16, vlans=[q(100, 5)]),
            "mr_unknown", "802.1Q hairpin .11 -> .10 WRITE, rkey 0x5555: NAK from .10 to .11 "
            "qp 18, vid 100, MSN 9")
    S.mdrop("vm-blue-1", b10h.out(S, WRITE_ONLY, [reth(W2, K2, 16)], n=16,
                                  vlans=[(0x88a8, 10, 1), q(20, 3)]), "mr_unknown",
            "QinQ hairpin .10 -> .11 WRITE with .10's own 0x2000 (the owner is .11): NAK from .11 "
            "to .10 qp 19, MSN 0")
    S.mdrop("vm-blue-1", uc.out(S, UC_SEND_ONLY, n=16), "acl_denied",
            "UC .10 -> .20 SEND, denied by the ACL: refused silently")
    S.mdrop("vm-blue-1", den.out(S, WRITE_ONLY, [reth(0x7f7000000000, 0x7000, 16)], n=16),
            "acl_denied", ".10 -> .40 WRITE, the connection denied both ways: NAK from .40")
    for _ in range(RX_BURST):
        S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=16), "filler: .10 -> .20 SEND Only (a burst apart)")
    S.send("vm-blue-1", acl.out(S, SEND_ONLY, n=32), ".10 -> .30 SEND forwarded: re-arms")
    for _ in range(RX_BURST):
        S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=16), "filler: .10 -> .20 SEND Only (a burst apart)")
    S.mdrop("vm-blue-1", acl.out(S, READ_REQ, [reth(0x7f6000000000, 0x6000, 32)], vlans=[q(100, 5)]),
            "acl_denied", "802.1Q READ denied again: a second NAK on that direction, tagged")
    S.send("vm-red-1", red.out(S, SEND_ONLY, n=32), "red: unaffected")
    assert not S.naks_by_rule_differ(), (S.name, S.naks_by_rule_differ())
    out.append(S)

    m6 = Model("tests/pipeline/nak-ipv6.json")
    g = Side(m6, "green", "fd00:1::10", 17)
    VA, KEY = 0x7f0000100000, 0x2001
    S = Scenario("nak_ipv6", m6, "IPv6: refused RC requests NAKed both ways, tagged and not; "
                 "traffic class DSCP kept, ECN cleared, flow label 0, hop limit 64")
    S.send("vm-green-1", g.out(S, ACK, [aeth(0x1f, 0x123)]), "ACK, MSN 0x123")
    S.mdrop("fabric0", g.inc(S, WRITE_ONLY, [reth(VA - 1, KEY, 2)], n=4), "mr_out_of_bounds",
            "WRITE at addr - 1: NAK to fd00::2 pqpn 8193, MSN 0 (the ACK is polled later)")
    S.mdrop("vm-green-1", g.out(S, READ_REQ, [reth(0x1000, 0x4444, 64)], vlans=[(0x8100, 42, 6)]),
            "acl_denied", "802.1Q READ to fd00:1::20, denied by the ACL: NAK from fd00:1::20")
    for _ in range(RX_BURST):
        S.send("fabric0", g.inc(S, SEND_ONLY, n=16), "filler: SEND Only (a burst apart)")
    S.send("fabric0", g.inc(S, SEND_ONLY, n=16), "a forwarded SEND re-arms")
    for _ in range(RX_BURST):
        S.send("fabric0", g.inc(S, ACK, [aeth(0x1f, 0x200)]), "filler: ACK (a burst apart)")
    S.mdrop("fabric0", g.inc(S, FETCH_ADD, [atomic(VA + 0x100000, KEY, 1)],
                             vlans=[(0x88a8, 5, 0), (0x8100, 6, 7)]), "mr_out_of_bounds",
            "QinQ FetchAdd past the end: a second NAK, MSN 0x123")
    assert not S.naks_by_rule_differ(), (S.name, S.naks_by_rule_differ())
    out.append(S)
    return out


def main():
    os.makedirs(DATA, exist_ok=True)
    for fn in os.listdir(DATA):
        if fn.endswith((".pcap", ".json")):
            os.unlink(os.path.join(DATA, fn))
    import gen_xrc
    from gen_vlan import vlan_scenarios
    from gen_xlate import xlate_scenarios
    scenarios = (two_tenant_scenarios() + ipv6_scenarios() + ud_scenarios() + ibta15_scenarios()
                 + ipv6_ibta15_scenarios() + nak_scenarios() + gen_xrc.xrc_scenarios() + vlan_scenarios()
                 + xlate_scenarios())
    names = [s.name for s in scenarios]
    assert len(set(names)) == len(names)
    tot = [0, 0, 0, 0, 0]
    for s in scenarios:
        for i, v in enumerate(s.write()):
            tot[i] += v
        if s.nak_deviations:
            print("%s: NAKs the switch's per-burst re-arm gives otherwise than the rule in "
                  "arrival order: %s" % (s.name, "; ".join(s.nak_deviations)))
    with open(os.path.join(DATA, "index.json"), "w") as f:
        json.dump({"scenarios": names, "drop_reasons": ALL_DROPS}, f, indent=1)
        f.write("\n")
    print("%d scenarios: %d input frames, %d expected outputs (%d NAKs), %d expected drops; "
          "%d NAKs where the switch's bursts and the rule differ"
          % (len(names), tot[0], tot[1], tot[3], tot[2], tot[4]))


if __name__ == "__main__":
    main()
