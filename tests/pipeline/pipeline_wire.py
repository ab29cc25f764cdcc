# SPDX-License-Identifier: BSD-3-Clause
"""
Wire helpers shared by gen_scenarios.py and test_pipeline.py: classic pcap
read/write, and a scapy decode of a RoCEv2 frame into a flat dict of the
fields the pipeline tests compare ("eth.src", "ip.ttl", "bth.dqpn",
"reth.va", ...).

Decoding is scapy's (with the extension headers of tests/gen/roce_layers.py);
nothing here comes from the C code in rocev2/.  Run with /usr/bin/python3.
"""

import hashlib
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))

from roce_layers import (  # noqa: E402,F401
    BTH, AETH, CNPPadding, DETH, XRCETH, FETH, RETH, AtomicETH, AtomicAckETH, ImmDt,
    IETH, extent, icrc_zlib, icrc_found, icrc_scapy)
from scapy.layers.l2 import Ether, Dot1Q, Dot1AD  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.packet import Raw, Padding  # noqa: E402

PCAP_EPOCH = 1700000000


def write_pcap(path, frames):
    """A classic little-endian microsecond pcap, Ethernet, fixed timestamps."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", PCAP_EPOCH + i // 1000, (i % 1000) * 1000,
                                len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    """Frames of a classic pcap (either byte order, us or ns stamps)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError("%s: not a pcap (%d bytes)" % (path, len(data)))
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        e = "<"
    elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
        e = ">"
    else:
        raise ValueError("%s: bad pcap magic 0x%08x" % (path, magic))
    off, frames = 24, []
    while off + 16 <= len(data):
        _, _, caplen, wirelen = struct.unpack(e + "IIII", data[off:off + 16])
        off += 16
        frames.append(data[off:off + caplen])
        off += caplen
    return frames


def ipv4_header_ok(frame):
    """True when the IPv4 header checksum of a frame verifies."""
    p = Ether(frame)
    if IP not in p:
        return None
    ip = bytes(p[IP])[:p[IP].ihl * 4]
    s = 0
    for i in range(0, len(ip), 2):
        s += (ip[i] << 8) | ip[i + 1]
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s == 0xffff


def udp_checksum_ok(frame):
    """None when the UDP checksum is zero, else whether it verifies."""
    p = Ether(frame)
    if p[UDP].chksum == 0:
        return None
    q = p.copy()
    q[UDP].chksum = None
    return Ether(bytes(q))[UDP].chksum == p[UDP].chksum


def icrc_expected(frame):
    """The ICRC of a frame by an oracle: scapy for IPv4, icrc_zlib() for IPv6."""
    p = Ether(frame)
    if IP in p:
        return icrc_scapy(frame)
    return icrc_zlib(frame)


def _hex(v, width):
    return "0x%0*x" % (width, v)


def fields_of(frame):
    """
    scapy's decode of @frame as a flat dict.  Only the headers present get
    keys.  The ICRC is reported as found ("icrc"), not checked here.
    """
    frame = bytes(frame)
    p = Ether(frame)
    f = {"len": len(frame), "eth.dst": p.dst, "eth.src": p.src}
    vlans = []
    layer = p.payload
    while isinstance(layer, (Dot1Q, Dot1AD)):
        tpid = 0x88a8 if isinstance(layer, Dot1AD) else 0x8100
        vlans.append([tpid, layer.vlan, layer.prio, layer.id])
        layer = layer.payload
    f["vlans"] = vlans
    if IP in p:
        ip = p[IP]
        f.update({"ip.version": 4, "ip.src": ip.src, "ip.dst": ip.dst, "ip.tos": ip.tos,
                  "ip.ttl": ip.ttl, "ip.id": ip.id, "ip.flags": int(ip.flags),
                  "ip.frag": ip.frag, "ip.ihl": ip.ihl, "ip.len": ip.len,
                  "ip.options": bytes(ip)[20:ip.ihl * 4].hex()})
    elif IPv6 in p:
        ip = p[IPv6]
        f.update({"ip.version": 6, "ip.src": ip.src, "ip.dst": ip.dst, "ip.tc": ip.tc,
                  "ip.fl": ip.fl, "ip.hlim": ip.hlim, "ip.plen": ip.plen})
    else:
        return f
    if UDP not in p:
        return f
    u = p[UDP]
    f.update({"udp.sport": u.sport, "udp.dport": u.dport, "udp.len": u.len,
              "udp.chksum": u.chksum})
    if BTH not in p:
        return f
    b = p[BTH]
    f.update({"bth.opcode": b.opcode, "bth.se": b.solicited, "bth.m": b.migreq,
              "bth.pad": b.padcount, "bth.tver": b.version, "bth.pkey": b.pkey,
              "bth.fecn": b.fecn, "bth.becn": b.becn, "bth.dqpn": b.dqpn,
              "bth.ackreq": b.ackreq, "bth.psn": b.psn})
    if DETH in p:
        f.update({"deth.qkey": _hex(p[DETH].qkey, 8), "deth.srcqp": p[DETH].srcqp})
    if XRCETH in p:
        f.update({"xrceth.xrcsrq": p[XRCETH].xrcsrq})
    if FETH in p:
        f.update({"feth.sel": p[FETH].sel, "feth.plt": p[FETH].plt})
    if RETH in p:
        f.update({"reth.va": _hex(p[RETH].va, 16), "reth.rkey": _hex(p[RETH].rkey, 8),
                  "reth.dmalen": p[RETH].dmalen})
    if AtomicETH in p:
        a = p[AtomicETH]
        f.update({"atomiceth.va": _hex(a.va, 16), "atomiceth.rkey": _hex(a.rkey, 8),
                  "atomiceth.swap": _hex(a.swap, 16), "atomiceth.comp": _hex(a.comp, 16)})
    if AETH in p:
        f.update({"aeth.syndrome": p[AETH].syndrome, "aeth.msn": p[AETH].msn})
    if AtomicAckETH in p:
        f.update({"atomicacketh.orig": _hex(p[AtomicAckETH].orig, 16)})
    if ImmDt in p:
        f.update({"immdt.imm": p[ImmDt].imm})
    if IETH in p:
        f.update({"ieth.rkey": _hex(p[IETH].rkey, 8)})
    # The bytes after the last header, less the ICRC: payload and pad.
    last = b
    while last.payload and not isinstance(last.payload, (Raw, Padding, CNPPadding)):
        last = last.payload
    body = bytes(last.payload) if last.payload else b""
    # scapy keeps the ICRC (BTH's trailing FCSField) out of the payload, but
    # not the Ethernet padding after it (bytes past the IP length): that is
    # reported apart, and only when there is some.
    l2pad = len(frame) - extent(frame)
    if l2pad:
        body = body[:len(body) - l2pad]
        f["l2pad"] = l2pad
        f["l2pad.hex"] = frame[len(frame) - l2pad:].hex()
    f["payload.len"] = len(body)
    f["payload.sha1"] = hashlib.sha1(body).hexdigest()[:16]
    f["icrc"] = _hex(icrc_found(frame), 8)
    return f
