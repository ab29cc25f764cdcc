#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Generate the committed RoCEv2 test data with scapy (the wire oracle):

  tests/data/opcodes.pcap    every opcode RoCEv2 carries, plus variants
  tests/data/opcodes.json    scapy's decode of each frame (roce-inspect keys)
  tests/data/malformed.pcap  one frame or more per roce_parse() error
  tests/data/malformed.json  the expected error of each
  tests/unit/vectors.h       ICRC known-answer vectors for tests/unit/test_vectors.c

Every frame is made by evaluating a scapy expression, and the expression is
recorded beside the frame.  IPv4 ICRCs are scapy's own; scapy 2.5 leaves the
ICRC of IPv6 frames zero, so those are filled in by icrc_zlib() from
roce_layers.py, which is checked here against scapy on every IPv4 frame.

The output is deterministic (fixed values and timestamps, no clock, no
random source beyond a seeded generator).  Run from anywhere:

    /usr/bin/python3 tests/gen/gen_frames.py
"""

import json
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import roce_layers  # noqa: E402
from roce_layers import (  # noqa: E402,F401
    BTH, AETH, CNPPadding, cnp, RDETH, DETH, XRCETH, FETH, RETH, AtomicETH,
    AtomicAckETH, ImmDt, IETH, OPCODES, EXT_KEY, EXT_LEN, BODY_LEN, icrc_zlib,
    icrc_found, icrc_scapy, locate, extent)
from scapy.layers.l2 import Ether, Dot1Q, Dot1AD  # noqa: E402
from scapy.layers.inet import IP, UDP, IPOption  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.packet import Raw, Padding  # noqa: E402
from scapy.compat import raw  # noqa: E402
from scapy.utils import checksum  # noqa: E402

# Names an expression may use.
NS = {n: getattr(roce_layers, n) for n in dir(roce_layers) if not n.startswith("_")}
NS.update(Ether=Ether, Dot1Q=Dot1Q, Dot1AD=Dot1AD, IP=IP, UDP=UDP, IPOption=IPOption,
          IPv6=IPv6, Raw=Raw, raw=raw)

PCAP_EPOCH = 1700000000  # fixed capture time of frame 1


# ---------------------------------------------------------------------------
# Building frames from recorded expressions.

def build(expr, seal=True):
    """
    Evaluate a scapy expression to frame bytes.  With @seal, the ICRC scapy
    leaves zero in IPv6 RoCE frames is replaced by icrc_zlib(), and for IPv4
    ones the zlib ICRC must equal scapy's.  Returns (bytes, source string).
    """
    obj = eval(expr, dict(NS))  # noqa: S307 (our own expressions)
    frame = bytes(obj)
    if seal and isinstance(obj, Ether) and BTH in obj and UDP in obj:
        if IPv6 in obj:
            assert icrc_found(frame) == 0, "scapy filled an IPv6 ICRC?"
            frame = frame[:-4] + struct.pack("<I", icrc_zlib(frame))
            return frame, expr + "  # ICRC: icrc_zlib() in tests/gen/roce_layers.py " \
                "(scapy 2.5 leaves IPv6 ICRCs zero)"
        if IP in obj:
            assert icrc_zlib(frame) == icrc_found(frame), \
                "zlib ICRC 0x%08x != scapy 0x%08x for %s" % (
                    icrc_zlib(frame), icrc_found(frame), expr)
            return frame, expr + "  # ICRC: scapy"
    return frame, expr


def build_padded(expr, min_len, fill=0):
    """
    build(@expr), then Ethernet padding up to @min_len bytes of @fill, as a
    NIC pads a short frame after its ICRC.  (scapy 2.5 would count a Padding
    layer under the BTH in the ICRC, so the padding is added to the sealed
    frame.)
    """
    fr, src = build(expr)
    assert len(fr) < min_len, (len(fr), min_len, expr)
    n = min_len - len(fr)
    return fr + bytes([fill]) * n, "%s  # then %d bytes of Ethernet padding (0x%02x) to %d" % (
        src, n, fill, min_len)


def write_pcap(path, frames):
    """A classic little-endian pcap, Ethernet, with fixed timestamps."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", PCAP_EPOCH + i // 1000, (i % 1000) * 1000,
                                len(fr), len(fr)))
            f.write(fr)


def write_json(path, objs):
    with open(path, "w") as f:
        f.write("[\n")
        f.write(",\n".join(json.dumps(o, sort_keys=False) for o in objs))
        f.write("\n]\n")


def hex32(v):
    return "0x%08x" % v


def hex64(v):
    return "0x%016x" % v


# ---------------------------------------------------------------------------
# scapy's decode, in the keys roce-inspect prints.

def ext_fields(layer):
    t = type(layer)
    if t is DETH:
        return {"qkey": hex32(layer.qkey), "srcqp": layer.srcqp}
    if t is RDETH:
        return {"eecnxt": layer.eecnxt}
    if t is XRCETH:
        return {"xrcsrq": layer.xrcsrq}
    if t is FETH:
        return {"plt": layer.plt, "sel": layer.sel}
    if t is RETH:
        return {"va": hex64(layer.va), "rkey": hex32(layer.rkey), "dmalen": layer.dmalen}
    if t is AtomicETH:
        return {"va": hex64(layer.va), "rkey": hex32(layer.rkey),
                "swap": hex64(layer.swap), "compare": hex64(layer.comp)}
    if t is AETH:
        return {"syndrome": layer.syndrome, "msn": layer.msn}
    if t is AtomicAckETH:
        return {"orig": hex64(layer.orig)}
    if t is ImmDt:
        return {"imm": layer.imm}
    if t is IETH:
        return {"rkey": hex32(layer.rkey)}
    raise TypeError(t)


def decode(frame, number):
    """scapy's view of a well-formed frame, as roce-inspect should print it."""
    p = Ether(frame)
    e = {"frame": number, "len": len(frame), "ok": True,
         "eth": {"dst": p.dst, "src": p.src}}
    vlans, tpid, layer = [], p.type, p.payload
    while isinstance(layer, Dot1Q):
        vlans.append({"tpid": tpid, "pcp": layer.prio, "dei": layer.id, "vid": layer.vlan})
        tpid, layer = layer.type, layer.payload
    if vlans:
        e["vlan"] = vlans
    l3, ver, l4, bth_off = locate(frame)
    if ver == 4:
        ip = p[IP]
        e["ip"] = {"version": ip.version, "ihl": ip.ihl, "src": ip.src, "dst": ip.dst,
                   "dscp": ip.tos >> 2, "ecn": ip.tos & 3, "ttl": ip.ttl, "id": ip.id}
        hdr = bytearray(frame[l3:l4])
        hdr[10:12] = b"\0\0"
        e["ipv4_csum_ok"] = checksum(bytes(hdr)) == ip.chksum
    else:
        ip = p[IPv6]
        e["ip"] = {"version": ip.version, "src": ip.src, "dst": ip.dst, "dscp": ip.tc >> 2,
                   "ecn": ip.tc & 3, "ttl": ip.hlim, "flow_label": ip.fl}
    u = p[UDP]
    e["udp"] = {"sport": u.sport, "dport": u.dport, "len": u.len, "checksum": u.chksum}
    b = p[BTH]
    e["bth"] = {"opcode": b.opcode, "opcode_name": OPCODES[b.opcode][0], "se": b.solicited,
                "mig": b.migreq, "pad": b.padcount, "tver": b.version, "pkey": b.pkey,
                "fecn": b.fecn, "becn": b.becn, "dqpn": b.dqpn, "ackreq": b.ackreq,
                "psn": b.psn}
    chain = OPCODES[b.opcode][1]
    layer, hdr_len = b.payload, 12
    for cls in chain:
        assert type(layer) is cls, "scapy decoded %s where %s belongs" % (
            type(layer).__name__, cls.__name__)
        e[EXT_KEY[cls]] = ext_fields(layer)
        if cls is XRCETH:
            e["xrc_srqn"] = layer.xrcsrq
        if cls is IETH:
            e["ieth_rkey"] = hex32(layer.rkey)
        hdr_len += EXT_LEN[cls]
        layer = layer.payload
    # The body is scapy's Raw (or CNPPadding) layer; Ethernet padding is a
    # Padding layer of its own, after the ICRC.
    body = len(raw(layer)) - (len(p[Padding].load) if Padding in p else 0)
    pad = len(p[Padding].load) if Padding in p else 0
    # The layers must account for every byte: headers, body, ICRC, padding.
    assert bth_off + hdr_len + body + 4 + pad == len(frame), (bth_off, hdr_len, body, pad,
                                                              len(frame))
    assert extent(frame) == len(frame) - pad
    if b.opcode in BODY_LEN and b.opcode != 0x81:
        e["atomic_write_data"] = hex64(struct.unpack("!Q", raw(layer)[:8])[0])
    e["payload_len"] = body - b.padcount
    found = icrc_found(frame)
    ref = icrc_scapy(frame) if ver == 4 else icrc_zlib(frame)
    if ver == 4:
        assert ref == icrc_zlib(frame)
    e["icrc"] = hex32(found)
    e["icrc_ok"] = found == ref
    e["frame_len"] = len(frame) - pad
    e["l2_pad"] = pad
    return e


# ---------------------------------------------------------------------------
# Expressions.

def l2_expr(i, vlans):
    s = "Ether(dst='02:00:00:00:%02x:02', src='02:00:00:00:%02x:01')" % (i & 0xff, i & 0xff)
    if vlans == 1:
        s += "/Dot1Q(prio=%d, vlan=%d)" % (i % 8, 100 + i)
    elif vlans == 2:
        s += "/Dot1AD(prio=%d, id=%d, vlan=%d)/Dot1Q(prio=%d, vlan=%d)" % (
            (i + 3) % 8, i & 1, 2000 + i, i % 8, 300 + i)
    return s


def l3_expr(i, ver, opts=0, dscp=26, ecn=2, ttl=64, udp_chksum=0):
    if ver == 6:
        s = "IPv6(src='fd00:%x::1', dst='fd00:%x::2', tc=%d, fl=0x%05x, hlim=%d)" % (
            i, i, dscp << 2 | ecn, (0x12345 * (i + 1)) & 0xfffff, ttl)
    else:
        o = ""
        if opts:
            # NOP options then an end-of-list: IHL 5 + opts / 4.
            o = ", options=IPOption(bytes([1] * %d) + bytes(1))" % (opts - 1)
        s = "IP(src='10.0.%d.1', dst='10.0.%d.2', tos=%d, ttl=%d, id=%d, flags='DF'%s)" % (
            i & 0xff, i & 0xff, dscp << 2 | ecn, ttl, (i * 0x101) & 0xffff, o)
    cs = "" if udp_chksum is None else ", chksum=0x%x" % udp_chksum
    return s + "/UDP(sport=0x%04x, dport=4791%s)" % (0xc000 | ((i * 37) & 0x3fff), cs)


def pay_expr(n, seed, pad):
    s = "bytes((%d * i + %d) & 0xff for i in range(%d))" % (2 * (seed % 60) + 3, seed & 0xff, n)
    if pad:
        s += " + bytes(%d)" % pad
    return "Raw(%s)" % s


def ext_expr(cls, i, rng, op):
    if cls is DETH:
        return "DETH(qkey=0x%08x, srcqp=0x%06x)" % (0x80010000 | i, 0x000200 + i)
    if cls is XRCETH:
        return "XRCETH(xrcsrq=0x%06x)" % (0x000300 + i)
    if cls is RETH:
        return "RETH(va=0x%016x, rkey=0x%08x, dmalen=%d)" % (
            0x00007f0000000000 | rng.getrandbits(32) << 4, rng.getrandbits(32),
            1 + rng.getrandbits(16))
    if cls is AtomicETH:
        return "AtomicETH(va=0x%016x, rkey=0x%08x, swap=0x%016x, comp=0x%016x)" % (
            0x00007f0000000000 | rng.getrandbits(32) << 3, rng.getrandbits(32),
            rng.getrandbits(64), rng.getrandbits(64))
    if cls is AETH:
        # ACK with credits, RNR NAK, NAK codes: exercise the syndrome classes.
        syn = [0x1f, 0x00, 0x2e, 0x60, 0x62, 0x03][i % 6] if (op & 0x1f) == 0x11 else 0x1f
        return "AETH(syndrome=0x%02x, msn=0x%06x)" % (syn, (0x000400 + 7 * i) & 0xffffff)
    if cls is AtomicAckETH:
        return "AtomicAckETH(orig=0x%016x)" % rng.getrandbits(64)
    if cls is ImmDt:
        return "ImmDt(imm=0x%08x)" % rng.getrandbits(32)
    if cls is IETH:
        return "IETH(rkey=0x%08x)" % rng.getrandbits(32)
    if cls is FETH:
        # Placement type bits (IBTA 1.5: 1 global visibility, 2 persistence), level 0 or 1.
        return "FETH(sel=%d, plt=%d)" % (i & 1, 1 + (i % 2))
    raise TypeError(cls)


def roce_expr(op, i, rng, ver=4, vlans=0, opts=0, paylen=None, fecn=0, becn=0,
              pkey=0xffff, ttl=64, ecn=2, udp_chksum=0, psn=None):
    """One well-formed frame of opcode @op; @i makes its fields distinct."""
    name, chain, has_pay = OPCODES[op]
    head = l2_expr(i, vlans) + "/" + l3_expr(i, ver, opts, ttl=ttl, ecn=ecn, udp_chksum=udp_chksum)
    dqpn = (0x000100 + i * 0x3b1) & 0xffffff
    if psn is None:
        psn = (0x000010 + i * 0x2f09b) & 0xffffff
    if op == 0x81:
        return head + "/cnp(0x%06x)" % dqpn
    if not has_pay:
        paylen = 0
    elif op in BODY_LEN:
        paylen = BODY_LEN[op]        # ATOMIC WRITE: one 8-byte word
    elif paylen is None:
        # FIRST and MIDDLE carry a full MTU-sized segment; others vary.
        if "FIRST" in name or "MIDDLE" in name:
            paylen = 256
        else:
            paylen = 1 + rng.getrandbits(8)
    pad = (-paylen) & 3
    # FLUSH and ATOMIC WRITE are single-packet requests, as READ and atomics are.
    last_or_only = "LAST" in name or "ONLY" in name or name.endswith(("FLUSH", "ATOMIC_WRITE"))
    se = 1 if ("SEND" in name and last_or_only and i % 2) else 0
    ackreq = 1 if (last_or_only and "RESPONSE" not in name and "ACK" not in name) else 0
    s = head + "/BTH(opcode=0x%02x, solicited=%d, migreq=%d, padcount=%d, pkey=0x%04x, " \
        "fecn=%d, becn=%d, dqpn=0x%06x, ackreq=%d, psn=0x%06x)" % (
            op, se, (i >> 2) & 1, pad, pkey, fecn, becn, dqpn, ackreq, psn)
    for cls in chain:
        s += "/" + ext_expr(cls, i, rng, op)
    if has_pay and paylen + pad:
        s += "/" + pay_expr(paylen, i * 13 + op, pad)
    return s


# ---------------------------------------------------------------------------
# opcodes.pcap

def opcode_frames():
    rng = random.Random(4791)
    exprs = []
    n = 0
    # One frame of every opcode, IPv4 untagged.
    for op in sorted(OPCODES):
        exprs.append(roce_expr(op, n, rng))
        n += 1
    # A subset of opcode classes again, in every encapsulation.
    subset = [0x04, 0x06, 0x0b, 0x0c, 0x0d, 0x11, 0x12, 0x13, 0x2a, 0x65, 0xa5, 0xb2, 0xb7, 0x81]
    for kw in (dict(ver=6), dict(vlans=1), dict(vlans=2), dict(opts=4),
               dict(ver=6, vlans=2, udp_chksum=0x1234)):
        for op in subset:
            exprs.append(roce_expr(op, n, rng, **kw))
            n += 1
    # Pad counts 1, 2, 3 (and 0), on SENDs, WRITEs and read responses.
    for op, paylen in ((0x04, 1), (0x04, 2), (0x04, 3), (0x04, 4), (0x0a, 5), (0x0a, 6),
                       (0x0a, 7), (0x10, 9), (0x29, 10), (0x65, 11), (0xb7, 0)):
        exprs.append(roce_expr(op, n, rng, paylen=paylen))
        n += 1
    for op, paylen in ((0x04, 1), (0x10, 2), (0x65, 3)):
        exprs.append(roce_expr(op, n, rng, ver=6, vlans=1, paylen=paylen))
        n += 1
    # The longest IPv4 header (IHL 15), and sizes either side of 64 bytes
    # after the BTH (roce_icrc_compute switches method there).
    exprs.append(roce_expr(0x0a, n, rng, opts=40, paylen=123))
    n += 1
    exprs.append(roce_expr(0x12, n, rng, opts=40))
    n += 1
    for paylen in (59, 60, 61, 63, 64, 65):
        exprs.append(roce_expr(0x04, n, rng, paylen=paylen))
        n += 1
    # 4 KiB writes, and variant bits that the ICRC masks.
    exprs.append(roce_expr(0x0a, n, rng, paylen=4096))
    n += 1
    exprs.append(roce_expr(0x07, n, rng, ver=6, vlans=1, paylen=4096))
    n += 1
    exprs.append(roce_expr(0x06, n, rng, fecn=1, ecn=3, pkey=0x8001, ttl=1))
    n += 1
    exprs.append(roce_expr(0x11, n, rng, ver=6, becn=1, fecn=1, ecn=3, ttl=255, udp_chksum=None))
    n += 1
    exprs.append(roce_expr(0x01, n, rng, udp_chksum=None, psn=0xffffff))
    n += 1
    exprs.append(roce_expr(0x64, n, rng, psn=0))
    n += 1
    # IBTA 1.5 FLUSH and ATOMIC WRITE, and SEND with Invalidate, in the other
    # encapsulations too.
    for kw in (dict(ver=6), dict(vlans=1), dict(ver=6, vlans=2)):
        for op in (0x1c, 0x1d, 0x16, 0x17, 0xb6):
            exprs.append(roce_expr(op, n, rng, **kw))
            n += 1

    frames, sources = [], []
    for x in exprs:
        fr, src = build(x)
        frames.append(fr)
        sources.append(src)

    # Short frames as RNICs send them: a frame below 60 bytes (no FCS) is
    # padded after its ICRC.  Zero-length SEND Only and SEND Last over
    # untagged IPv4 are 58 bytes; tagged, a NIC that pads before tagging
    # sends 64.  Some pad with junk rather than zeros.  IPv6 RoCE frames are
    # never short: the last two are captures that kept 4 trailing bytes (an
    # FCS) after the frame.
    for op, kw, min_len, fill in (
            (0x04, dict(), 60, 0), (0x24, dict(), 60, 0), (0x02, dict(), 60, 0),
            (0x04, dict(), 60, 0xa5), (0x04, dict(vlans=1), 64, 0),
            (0x22, dict(vlans=2), 68, 0x5a), (0x04, dict(ver=6), 82, 0),
            (0x11, dict(ver=6, vlans=1), 90, 0xff)):
        fr, src = build_padded(roce_expr(op, n, rng, paylen=0, **kw), min_len, fill)
        n += 1
        frames.append(fr)
        sources.append(src)

    # Frames changed in flight after the ICRC was computed, in fields the
    # ICRC does not cover: the ICRC stays valid.
    def rewrite(base, how):
        fr = bytearray(frames[base])
        l3, ver, l4, bth = locate(bytes(fr))
        if how == "ttl":
            fr[l3 + (8 if ver == 4 else 7)] -= 1       # IPv4 checksum now stale
        elif how == "ce":
            if ver == 4:
                fr[l3 + 1] |= 3
            else:
                fr[l3 + 1] |= 0x30
        elif how == "fecn_becn":
            fr[bth + 4] |= 0xc0
        elif how == "udp_csum":
            fr[l4 + 6:l4 + 8] = b"\xbe\xef"
        elif how == "flow_label":
            fr[l3 + 1] ^= 0x0f
            fr[l3 + 2] ^= 0xff
        frames.append(bytes(fr))
        sources.append("frame %d with %s changed after the ICRC was computed" % (base + 1, how))

    rewrite(0, "ttl")
    rewrite(10, "ce")
    rewrite(17, "fecn_becn")
    rewrite(20, "udp_csum")
    v6 = next(k for k, s in enumerate(sources) if "IPv6(" in s)
    rewrite(v6, "ttl")
    rewrite(v6 + 1, "ce")
    rewrite(v6 + 2, "flow_label")
    rewrite(v6 + 3, "fecn_becn")

    expected = []
    for k, (fr, src) in enumerate(zip(frames, sources)):
        e = decode(fr, k + 1)
        e["source"] = src
        expected.append(e)
    # Every opcode of the table is there at least once.
    assert {e["bth"]["opcode"] for e in expected} == set(OPCODES)
    assert {e["bth"]["pad"] for e in expected} == {0, 1, 2, 3}
    assert sum(1 for e in expected if e["l2_pad"]) >= 8
    return frames, expected


# ---------------------------------------------------------------------------
# malformed.pcap

ETH = "Ether(dst='02:00:00:00:ee:02', src='02:00:00:00:ee:01')"
IP4 = "IP(src='10.9.0.1', dst='10.9.0.2', ttl=64, id=7, flags='DF')"
IP6 = "IPv6(src='fd09::1', dst='fd09::2', hlim=64)"
UDPR = "UDP(sport=0xc001, dport=4791, chksum=0)"
ACK = "BTH(opcode=0x11, dqpn=0x000abc, psn=0x000123)/AETH(syndrome=0x1f, msn=0x000042)"

# (error name, expression, extra expected fields).  Lengths that the frame
# must get wrong are written out; the rest scapy computes.
MALFORMED = [
    ("truncated_eth", "raw(%s)[:10]" % ETH, {}),
    ("truncated_eth", "raw(%s)[:13]" % ETH, {}),
    ("truncated_vlan", "raw(%s/Dot1Q(vlan=5))[:16]" % ETH, {}),
    ("truncated_vlan", "raw(%s/Dot1AD(vlan=5)/Dot1Q(vlan=6))[:20]" % ETH,
     {"vlan": [{"tpid": 0x88a8, "vid": 5}]}),
    ("too_many_vlans", "%s/Dot1AD(vlan=1)/Dot1Q(vlan=2)/Dot1Q(vlan=3)/%s/%s/%s" % (ETH, IP4, UDPR, ACK),
     {"vlan": [{"tpid": 0x88a8, "vid": 1}, {"tpid": 0x8100, "vid": 2}]}),
    ("not_ip", "%s/Raw(bytes(range(60)))" % ETH.replace(")", ", type=0x88b5)"), {}),
    ("not_ip", "%s/Dot1Q(vlan=9, type=0x0806)/Raw(bytes(range(46)))" % ETH,
     {"vlan": [{"tpid": 0x8100, "vid": 9}]}),
    ("truncated_ip", "%s/Raw(raw(%s)[:10])" % (ETH.replace(")", ", type=0x0800)"), IP4), {}),
    ("truncated_ip", "%s/Raw(raw(%s/%s/%s)[:30])" % (
        ETH.replace(")", ", type=0x86dd)"), IP6, UDPR, ACK), {}),
    ("truncated_ip", "%s/Raw(raw(IP(src='10.9.0.1', dst='10.9.0.2', options=IPOption("
     "bytes([1] * 39) + bytes(1))))[:40])" % ETH.replace(")", ", type=0x0800)"), {}),
    ("bad_ip_version", "%s/%s/%s/%s" % (ETH.replace(")", ", type=0x0800)"), IP6, UDPR, ACK), {}),
    ("bad_ip_version", "%s/%s/%s/%s/Raw(bytes(12))" % (
        ETH.replace(")", ", type=0x86dd)"), IP4, UDPR, ACK), {}),
    ("bad_ip_ihl", "%s/%s/%s/%s" % (ETH, IP4.replace(")", ", ihl=4)"), UDPR, ACK), {}),
    ("ip_fragment", "%s/%s/%s/%s" % (ETH, IP4.replace("flags='DF'", "flags='MF'"), UDPR, ACK),
     {"ip": {"src": "10.9.0.1", "dst": "10.9.0.2"}}),
    ("ip_fragment", "%s/%s/%s/%s" % (ETH, IP4.replace(")", ", frag=100)"), UDPR, ACK), {}),
    ("bad_ip_length", "%s/%s/%s/%s" % (ETH, IP4.replace(")", ", len=52)"), UDPR, ACK),
     {"ip": {"ttl": 64, "id": 7}}),
    # Bytes past the IP length are Ethernet padding, and UDP is checked
    # against the IP length: a UDP length that runs into the padding is
    # bad_udp_length, a UDP header the IP length cuts truncated_udp.
    ("bad_udp_length", "%s/%s/%s/%s/Raw(bytes(2))" % (ETH, IP4.replace(")", ", len=48)"), UDPR, ACK),
     {}),
    ("bad_udp_length", "%s/%s/%s/%s" % (ETH, IP6.replace(")", ", plen=26)"), UDPR, ACK),
     {"ip": {"version": 6, "src": "fd09::1"}}),
    ("truncated_udp", "%s/%s/%s/%s" % (ETH, IP4.replace(")", ", len=24)"), UDPR, ACK), {}),
    ("bad_ip_length", "%s/%s/%s/%s" % (ETH, IP4.replace(")", ", len=19)"), UDPR, ACK), {}),
    ("bad_ip_length", "%s/%s/%s/%s" % (ETH, IP6.replace(")", ", plen=40)"), UDPR, ACK),
     {"ip": {"version": 6, "dst": "fd09::2"}}),
    # A padded 60-byte SEND Only cut by two bytes: its IP length now runs past the frame.
    ("bad_ip_length", "(raw(%s/%s/%s/BTH(opcode=0x04, dqpn=0x000abc)) + bytes(2))[:56]" % (
        ETH, IP4, UDPR), {}),
    ("not_udp", "%s/%s/%s/%s" % (ETH, IP4.replace(")", ", proto=6)"), UDPR, ACK),
     {"ip": {"version": 4, "dst": "10.9.0.2"}}),
    ("not_udp", "%s/%s/%s/%s" % (ETH, IP6.replace(")", ", nh=6)"), UDPR, ACK), {}),
    ("truncated_udp", "%s/%s/Raw(bytes([0xc0, 0x01, 0x12, 0xb7]))" % (ETH, IP4.replace(")", ", proto=17)")),
     {}),
    ("bad_udp_length", "%s/%s/%s/%s" % (ETH, IP4, UDPR.replace(")", ", len=100)"), ACK),
     {"udp": {"sport": 0xc001, "dport": 4791, "len": 100}}),
    ("bad_udp_length", "%s/%s/%s/%s" % (ETH, IP6, UDPR.replace(")", ", len=20)"), ACK), {}),
    ("not_roce_port", "%s/%s/%s/%s" % (ETH, IP4, UDPR.replace("4791", "4792"), ACK),
     {"udp": {"sport": 0xc001, "dport": 4792}}),
    ("truncated_bth", "%s/%s/%s/Raw(bytes([0x11, 0, 0xff, 0xff, 0, 0, 0x0a, 0xbc]))" % (
        ETH, IP4, UDPR), {"udp": {"len": 16}}),
    ("truncated_bth", "%s/%s/%s" % (ETH, IP6, UDPR), {}),
    ("bad_tver", "%s/%s/%s/%s" % (ETH, IP4, UDPR, ACK.replace("opcode=0x11,", "opcode=0x11, version=1,")),
     {"bth": {"opcode": 0x11, "tver": 1, "dqpn": 0xabc, "psn": 0x123}}),
    ("bad_opcode", "%s/%s/%s/BTH(opcode=0x15, dqpn=0x000abc, psn=0x000124)/Raw(bytes(8))" % (
        ETH, IP4, UDPR), {"bth": {"opcode": 0x15, "dqpn": 0xabc, "psn": 0x124}}),
    ("bad_opcode", "%s/%s/%s/BTH(opcode=0x40, dqpn=0x000abc, psn=0x000125)/Raw(bytes(4))" % (
        ETH, IP4, UDPR), {"bth": {"opcode": 0x40}}),
    ("bad_opcode", "%s/%s/%s/BTH(opcode=0x2c, dqpn=0x000abc)/RETH(va=1, rkey=2, dmalen=3)" % (
        ETH, IP4, UDPR), {"bth": {"opcode": 0x2c}}),
    ("bad_opcode", "%s/%s/%s/BTH(opcode=0x66, dqpn=1)/DETH(qkey=0x80010000, srcqp=1)" % (
        ETH, IP6, UDPR), {"bth": {"opcode": 0x66}}),
    ("bad_opcode", "%s/%s/%s/BTH(opcode=0xb5, dqpn=0x000abc)/Raw(bytes(8))" % (ETH, IP4, UDPR),
     {"bth": {"opcode": 0xb5}}),
    ("bad_opcode", "%s/%s/%s/BTH(opcode=0x80, dqpn=0x000abc)/CNPPadding()" % (ETH, IP4, UDPR),
     {"bth": {"opcode": 0x80}}),
    ("bad_opcode", "%s/%s/%s/BTH(opcode=0xff)" % (ETH, IP4, UDPR), {"bth": {"opcode": 0xff}}),
    ("truncated_ext", "%s/%s/%s/BTH(opcode=0x06, dqpn=0x000abc)/Raw(bytes(8))" % (ETH, IP4, UDPR),
     {"bth": {"opcode": 6, "opcode_name": "RC_RDMA_WRITE_FIRST", "dqpn": 0xabc}}),
    ("truncated_ext", "%s/%s/%s/BTH(opcode=0x13, dqpn=0x000abc)/Raw(bytes(20))" % (ETH, IP4, UDPR),
     {"bth": {"opcode": 0x13}}),
    ("truncated_ext", "%s/%s/%s/BTH(opcode=0xab, dqpn=0x000abc)/XRCETH(xrcsrq=7)/Raw(bytes(12))" % (
        ETH, IP6, UDPR), {}),
    ("truncated_icrc", "%s/%s/%s/Raw(raw(%s)[:-4] + bytes(2))" % (ETH, IP4, UDPR, ACK),
     {"bth": {"opcode": 0x11}}),
    ("truncated_icrc", "%s/%s/%s/Raw(raw(BTH(opcode=0x0c, dqpn=0x000abc)/RETH(va=1, rkey=2, "
     "dmalen=3))[:-4] + bytes(3))" % (ETH, IP4, UDPR), {}),
    ("truncated_icrc", "%s/%s/%s/Raw(raw(BTH(opcode=0x81, becn=1, dqpn=0x000abc))[:-4])" % (
        ETH, IP4, UDPR), {"bth": {"opcode": 0x81, "opcode_name": "CNP"}}),
    ("bad_payload", "%s/%s/%s/%s/Raw(bytes(4))" % (ETH, IP4, UDPR, ACK),
     {"aeth": {"syndrome": 0x1f, "msn": 0x42}}),
    ("bad_payload", "%s/%s/%s/BTH(opcode=0x0c, dqpn=0x000abc)/RETH(va=1, rkey=2, dmalen=3)/"
     "Raw(bytes(8))" % (ETH, IP4, UDPR), {}),
    ("bad_payload", "%s/%s/%s/BTH(opcode=0x13, dqpn=0x000abc)/AtomicETH(va=8)/Raw(bytes(4))" % (
        ETH, IP6, UDPR), {}),
    ("bad_payload", "%s/%s/%s/BTH(opcode=0x81, becn=1, dqpn=0x000abc)/Raw(bytes(12))" % (
        ETH, IP4, UDPR), {"bth": {"opcode": 0x81, "becn": 1}}),
    ("bad_payload", "%s/%s/%s/BTH(opcode=0x81, becn=1, dqpn=0x000abc)/Raw(bytes(20))" % (
        ETH, IP4, UDPR), {}),
    ("bad_payload", "%s/%s/%s/BTH(opcode=0x81, becn=1, dqpn=0x000abc)" % (ETH, IP4, UDPR), {}),
    # IBTA 1.5: an ATOMIC WRITE carries exactly 8 bytes, a FLUSH none.
    ("bad_payload", "%s/%s/%s/BTH(opcode=0x1d, dqpn=0x000abc)/RETH(va=8, rkey=1, dmalen=8)/"
     "Raw(bytes(4))" % (ETH, IP4, UDPR), {"bth": {"opcode": 0x1d, "opcode_name": "RC_ATOMIC_WRITE"}}),
    ("bad_payload", "%s/%s/%s/BTH(opcode=0x1d, dqpn=0x000abc)/RETH(va=8, rkey=1, dmalen=8)/"
     "Raw(bytes(16))" % (ETH, IP6, UDPR), {}),
    ("bad_payload", "%s/%s/%s/BTH(opcode=0x1c, dqpn=0x000abc)/FETH(plt=1)/RETH(va=8, rkey=1)/"
     "Raw(bytes(4))" % (ETH, IP4, UDPR), {"feth": {"plt": 1, "sel": 0}}),
    ("truncated_ext", "%s/%s/%s/BTH(opcode=0x1c, dqpn=0x000abc)/FETH(plt=2)/Raw(bytes(8))" % (
        ETH, IP4, UDPR), {"bth": {"opcode": 0x1c, "opcode_name": "RC_FLUSH"}}),
    ("bad_pad", "%s/%s/%s/BTH(opcode=0x1d, padcount=1, dqpn=0x000abc)/RETH(va=8, rkey=1, "
     "dmalen=8)/Raw(bytes(8))" % (ETH, IP4, UDPR), {}),
    ("bad_pad", "%s/%s/%s/%s" % (ETH, IP4, UDPR, ACK.replace("opcode=0x11,", "opcode=0x11, padcount=1,")),
     {"bth": {"pad": 1}}),
    ("bad_pad", "%s/%s/%s/BTH(opcode=0x04, padcount=3, dqpn=0x000abc)/Raw(bytes(2))" % (
        ETH, IP4, UDPR), {}),
    ("bad_pad", "%s/%s/%s/BTH(opcode=0x64, padcount=2, dqpn=0x000abc)/DETH(qkey=1, srcqp=2)/"
     "Raw(bytes(1))" % (ETH, IP6, UDPR), {"deth": {"qkey": "0x00000001", "srcqp": 2}}),
]

# Well-formed frames whose ICRC is wrong: ok, with icrc_ok false.
BAD_ICRC = [
    ("%s/%s/%s/%s" % (ETH, IP4, UDPR, ACK), 0x0000ff00),
    ("%s/%s/%s/BTH(opcode=0x0a, dqpn=0x000abc, psn=5)/RETH(va=0x1000, rkey=0x77, dmalen=64)/"
     "Raw(bytes(range(64)))" % (ETH, IP6, UDPR), 0x80000000),
    ("%s/%s/%s/cnp(0x000abc)" % (ETH, IP4, UDPR), 0x00000001),
]


def malformed_frames(opcodes_expected):
    frames, expected = [], []
    for err, expr, extra in MALFORMED:
        fr, src = build(expr, seal=False)
        e = {"frame": len(frames) + 1, "len": len(fr), "ok": False, "error": err}
        e.update(extra)
        e["source"] = src
        frames.append(fr)
        expected.append(e)
    for expr, flip in BAD_ICRC:
        fr, src = build(expr)
        fr = fr[:-4] + struct.pack("<I", icrc_found(fr) ^ flip)
        e = decode(fr, len(frames) + 1)
        assert e["icrc_ok"] is False
        e["source"] = "%s, then ICRC ^ 0x%08x" % (src, flip)
        frames.append(fr)
        expected.append(e)
    # Also one frame of every error name in rocev2/roce_parse.h.
    names = parse_error_names()
    missing = set(names) - {e.get("error") for e in expected}
    assert not missing, "no malformed frame for %s" % sorted(missing)
    return frames, expected


def parse_error_names():
    """The error names of ROCE_PARSE_ERRORS in rocev2/roce_parse.h."""
    import re
    with open(os.path.join(ROOT, "rocev2", "roce_parse.h")) as f:
        text = f.read()
    body = re.search(r"#define ROCE_PARSE_ERRORS\(X\)((?:.*\\\n)*.*\n)", text).group(1)
    names = re.findall(r'X\(\s*[A-Z_0-9]+\s*,\s*"([a-z_0-9]+)"', body)
    assert len(names) >= 20, names
    return names


# ---------------------------------------------------------------------------
# vectors.h

VEC_ETH = "Ether(dst='02:00:00:00:00:02', src='02:00:00:00:00:01')"
VEC_IP4 = "IP(src='192.168.1.1', dst='192.168.1.2', tos=0x6a, ttl=64, id=0x1c46, flags='DF')"
VEC_IP6 = "IPv6(src='fd00:1::1', dst='fd00:1::2', tc=0x6a, fl=0xabcde, hlim=64)"
VEC_UDP = "UDP(sport=0xc123, dport=4791, chksum=0)"


def pattern(n, mul=7, add=1):
    return "Raw(bytes((%d * i + %d) & 0xff for i in range(%d)))" % (mul, add, n)


def v4(rest, l2=VEC_ETH, ip=VEC_IP4, udp=VEC_UDP):
    return "%s/%s/%s/%s" % (l2, ip, udp, rest)


def v6(rest, l2=VEC_ETH, ip=VEC_IP6, udp=VEC_UDP):
    return "%s/%s/%s/%s" % (l2, ip, udp, rest)


# (name, expression).  The ICRC of each is scapy's (IPv4) or icrc_zlib (IPv6).
VECTORS = [
    ("v4_rc_ack_62", v4("BTH(opcode=0x11, dqpn=0x000012, psn=0x000005)/AETH(syndrome=0x1f, msn=3)")),
    ("v4_rc_send_only_13_pad3", v4("BTH(opcode=0x04, padcount=3, dqpn=0x000012, ackreq=1, psn=6)/"
                                   "Raw(bytes(range(13)) + bytes(3))")),
    ("v4_rc_send_only_60", v4("BTH(opcode=0x04, dqpn=0x000012, psn=7)/" + pattern(60))),
    ("v4_rc_send_only_64", v4("BTH(opcode=0x04, dqpn=0x000012, psn=8)/" + pattern(64))),
    ("v4_rc_send_first_1024", v4("BTH(opcode=0x00, dqpn=0x000012, psn=9)/" + pattern(1024, 13, 5))),
    ("v4_rc_write_first_1024", v4("BTH(opcode=0x06, dqpn=0x000034, psn=0x00fffe)/RETH(va=0x00007f12"
                                  "34560000, rkey=0x0badcafe, dmalen=65536)/" + pattern(1024, 11, 2))),
    ("v4_rc_write_only_4096", v4("BTH(opcode=0x0a, dqpn=0x000034, ackreq=1, psn=0xffffff)/RETH("
                                 "va=0x00007f1234570000, rkey=0x0badcafe, dmalen=4096)/"
                                 + pattern(4096, 5, 9))),
    ("v4_rc_write_only_imm", v4("BTH(opcode=0x0b, solicited=1, padcount=2, dqpn=0x000034, ackreq=1, "
                                "psn=0x000100)/RETH(va=0xffff800000001000, rkey=0x00001234, dmalen="
                                "30)/ImmDt(imm=0xdeadbeef)/Raw(bytes(range(30)) + bytes(2))")),
    ("v4_rc_read_request", v4("BTH(opcode=0x0c, dqpn=0x000056, ackreq=1, psn=0x000200)/RETH("
                              "va=0x0000000100000000, rkey=0x80000001, dmalen=8192)")),
    ("v4_rc_read_resp_only_512", v4("BTH(opcode=0x10, dqpn=0x000078, psn=0x000200)/AETH(syndrome="
                                    "0x1f, msn=0x000010)/" + pattern(512, 3, 0))),
    ("v4_rc_compare_swap", v4("BTH(opcode=0x13, dqpn=0x000056, ackreq=1, psn=0x000300)/AtomicETH("
                              "va=0x00007f0000000008, rkey=0x00c0ffee, swap=0x1122334455667788, "
                              "comp=0x8877665544332211)")),
    ("v4_rc_atomic_ack", v4("BTH(opcode=0x12, dqpn=0x000078, psn=0x000300)/AETH(syndrome=0x00, "
                            "msn=0x000011)/AtomicAckETH(orig=0x0123456789abcdef)")),
    ("v4_uc_send_last_imm_100", v4("BTH(opcode=0x23, dqpn=0x00009a, psn=0x000400)/ImmDt(imm=7)/"
                                   + pattern(100))),
    ("v4_ud_send_only_imm_vlan", v4("BTH(opcode=0x65, dqpn=0x000001, psn=0x000001)/DETH(qkey="
                                    "0x80010000, srcqp=0x000001)/ImmDt(imm=0x01020304)/"
                                    + pattern(256), l2=VEC_ETH + "/Dot1Q(prio=3, vlan=100)")),
    ("v4_xrc_send_only_inv_qinq", v4("BTH(opcode=0xb7, dqpn=0x0000bc, ackreq=1, psn=0x000500)/XRCETH("
                                     "xrcsrq=0x000042)/IETH(rkey=0x12345678)/" + pattern(60),
                                     l2=VEC_ETH + "/Dot1AD(prio=5, vlan=2000)/Dot1Q(prio=3, vlan=100)")),
    ("v4_rc_write_middle_ihl15", v4("BTH(opcode=0x07, dqpn=0x000034, psn=0x000600)/" + pattern(64),
                                    ip=VEC_IP4.replace(")", ", options=IPOption(bytes([1] * 39) + "
                                                       "bytes(1)))"))),
    ("v4_cnp", "Ether(dst='02:00:00:00:00:0a', src='02:00:00:00:00:0b')/IP(src='192.168.1.2', "
               "dst='192.168.1.1', tos=0xc0, ttl=64, id=0, flags='DF')/UDP(sport=0xd001, dport=4791, "
               "chksum=0)/cnp(0x00abcd)"),
    ("v4_cnp_vlan", "Ether(dst='02:00:00:00:00:0a', src='02:00:00:00:00:0b')/Dot1Q(prio=6, vlan=100)/"
                    "IP(src='192.168.1.2', dst='192.168.1.1', tos=0xb8, ttl=255, id=0x1234, flags="
                    "'DF')/UDP(sport=0xd002, dport=4791, chksum=0)/cnp(0xfedcba)"),
    ("v6_rc_ack_82", v6("BTH(opcode=0x11, dqpn=0x000012, psn=0x000005)/AETH(syndrome=0x60, msn=3)")),
    ("v6_rc_send_only_63_pad1", v6("BTH(opcode=0x04, padcount=1, dqpn=0x000012, psn=6)/Raw(bytes("
                                   "range(63)) + bytes(1))")),
    ("v6_rc_write_only_4096", v6("BTH(opcode=0x0a, dqpn=0x000034, ackreq=1, psn=0x000010)/RETH("
                                 "va=0x00007f1234570000, rkey=0x0badcafe, dmalen=4096)/"
                                 + pattern(4096, 5, 9))),
    ("v6_rc_read_resp_first_1024", v6("BTH(opcode=0x0d, dqpn=0x000078, psn=0x000200)/AETH("
                                      "syndrome=0x1f, msn=0x000010)/" + pattern(1024, 17, 3))),
    ("v6_ud_send_only_vlan", v6("BTH(opcode=0x64, dqpn=0x000001, psn=0x000001)/DETH(qkey="
                                "0x80010000, srcqp=0x000001)/" + pattern(256),
                                l2=VEC_ETH + "/Dot1Q(prio=3, vlan=100)")),
    ("v6_xrc_fetch_add", v6("BTH(opcode=0xb4, dqpn=0x0000bc, ackreq=1, psn=0x000700)/XRCETH("
                            "xrcsrq=0x000042)/AtomicETH(va=0x00007f0000000010, rkey=0x00c0ffee, "
                            "swap=1, comp=0)")),
    ("v6_uc_write_first_qinq", v6("BTH(opcode=0x26, dqpn=0x00009a, psn=0x000800)/RETH(va=0x1000, "
                                  "rkey=0x99, dmalen=2048)/" + pattern(1024),
                                  l2=VEC_ETH + "/Dot1AD(vlan=10)/Dot1Q(vlan=20)",
                                  udp=VEC_UDP.replace("chksum=0", "chksum=0x5555"))),
    ("v6_cnp", "Ether(dst='02:00:00:00:00:0a', src='02:00:00:00:00:0b')/IPv6(src='fd00:1::2', "
               "dst='fd00:1::1', tc=0xc0, fl=0x12345, hlim=64)/UDP(sport=0xd003, dport=4791, "
               "chksum=0)/cnp(0x00abcd)"),
    # IBTA 1.5 and SEND with Invalidate.
    ("v4_rc_flush", v4("BTH(opcode=0x1c, dqpn=0x000056, ackreq=1, psn=0x000900)/FETH(sel=1, plt=2)/"
                       "RETH(va=0x00007f0000002000, rkey=0x00c0ffee, dmalen=4096)")),
    ("v4_rc_atomic_write", v4("BTH(opcode=0x1d, dqpn=0x000056, ackreq=1, psn=0x000901)/RETH("
                              "va=0x00007f0000002008, rkey=0x00c0ffee, dmalen=8)/"
                              "Raw(bytes.fromhex('0123456789abcdef'))")),
    ("v6_rc_flush_vlan", v6("BTH(opcode=0x1c, dqpn=0x000056, ackreq=1, psn=0x000902)/FETH(plt=1)/"
                            "RETH(va=0x1000, rkey=0x99, dmalen=0)", l2=VEC_ETH + "/Dot1Q(vlan=7)")),
    ("v6_rc_atomic_write", v6("BTH(opcode=0x1d, dqpn=0x000056, ackreq=1, psn=0x000903)/RETH("
                              "va=0x2000, rkey=0x98, dmalen=8)/Raw(bytes(range(8)))")),
    ("v6_rc_send_only_inv", v6("BTH(opcode=0x17, dqpn=0x000012, ackreq=1, psn=0x000904)/IETH("
                               "rkey=0x00abcdef)/" + pattern(33))),
    # Short frames, padded after the ICRC as a NIC pads them (PADDED below).
    ("v4_rc_send_only_0_padded", v4("BTH(opcode=0x04, dqpn=0x000012, ackreq=1, psn=0x000a00)")),
    ("v4_uc_send_last_0_vlan_padded", v4("BTH(opcode=0x22, dqpn=0x00009a, psn=0x000a01)",
                                         l2=VEC_ETH + "/Dot1Q(prio=3, vlan=100)")),
]

# Vectors padded after sealing: name -> (length with padding, fill byte).
PADDED = {"v4_rc_send_only_0_padded": (60, 0), "v4_uc_send_last_0_vlan_padded": (64, 0xa5)}

# CNP vectors that roce_build_cnp() must reproduce byte for byte: the fields
# of its roce_frame_spec, dqpn, dscp and prio.
CNP_SPECS = {
    "v4_cnp": dict(dst="02:00:00:00:00:0a", src="02:00:00:00:00:0b", vlans=[], ver=4,
                   sip="192.168.1.2", dip="192.168.1.1", ttl=64, ip_id=0, fl=0,
                   sport=0xd001, dqpn=0x00abcd, dscp=48, prio=0),
    "v4_cnp_vlan": dict(dst="02:00:00:00:00:0a", src="02:00:00:00:00:0b", vlans=[100], ver=4,
                        sip="192.168.1.2", dip="192.168.1.1", ttl=255, ip_id=0x1234, fl=0,
                        sport=0xd002, dqpn=0xfedcba, dscp=46, prio=6),
    "v6_cnp": dict(dst="02:00:00:00:00:0a", src="02:00:00:00:00:0b", vlans=[], ver=6,
                   sip="fd00:1::2", dip="fd00:1::1", ttl=64, ip_id=0, fl=0x12345,
                   sport=0xd003, dqpn=0x00abcd, dscp=48, prio=0),
}


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_bytes(b, indent="\t"):
    lines = []
    for k in range(0, len(b), 12):
        lines.append(indent + " ".join("0x%02x," % x for x in b[k:k + 12]))
    return "\n".join(lines)


def c_split_string(s, width=88):
    """A long C string literal split over lines."""
    parts = [s[k:k + width] for k in range(0, len(s), width)] or [""]
    return "\n\t  ".join(c_string(p) for p in parts)


def write_vectors_h(path):
    import ipaddress
    out = []
    out.append("/* SPDX-License-Identifier: BSD-3-Clause */")
    out.append("/*")
    out.append(" * GENERATED by tests/gen/gen_frames.py: do not edit.  Regenerate with")
    out.append(" *     /usr/bin/python3 tests/gen/gen_frames.py")
    out.append(" *")
    out.append(" * ICRC known-answer vectors.  Each frame (Ethernet, no FCS) was made by the")
    out.append(" * scapy expression recorded beside it (scapy 2.5, scapy.contrib.roce, plus the")
    out.append(" * extension headers of tests/gen/roce_layers.py).  IPv4 ICRCs are scapy's own;")
    out.append(" * scapy leaves IPv6 ICRCs zero, so those come from icrc_zlib() in")
    out.append(" * roce_layers.py (zlib.crc32 over the masked pseudo-header), which the generator")
    out.append(" * checks against scapy on every IPv4 frame.")
    out.append(" */")
    out.append("#ifndef TESTS_UNIT_VECTORS_H")
    out.append("#define TESTS_UNIT_VECTORS_H")
    out.append("")
    out.append("#include <stdint.h>")
    out.append("")
    out.append("struct icrc_vector {")
    out.append("\tconst char *name;")
    out.append("\tconst char *source;   /* the scapy expression, and where the ICRC came from */")
    out.append("\tconst uint8_t *bytes;")
    out.append("\tuint32_t len;")
    out.append("\tuint32_t icrc;        /* as roce_icrc_compute() returns it */")
    out.append("\tuint32_t l2_pad;      /* Ethernet padding after the ICRC */")
    out.append("};")
    out.append("")
    table = []
    n4 = n6 = 0
    for name, expr in VECTORS:
        if name in PADDED:
            fr, src = build_padded(expr, *PADDED[name])
        else:
            fr, src = build(expr)
        p = Ether(fr)
        e = decode(fr, 0)
        assert e["icrc_ok"], name
        if IPv6 in p:
            n6 += 1
        else:
            n4 += 1
        icrc = icrc_found(fr)
        out.append("/* %s: %d bytes, ICRC 0x%08x. */" % (name, len(fr), icrc))
        out.append("static const uint8_t vec_%s[] = {" % name)
        out.append(c_bytes(fr))
        out.append("};")
        out.append("")
        table.append((name, src, len(fr), icrc, e["l2_pad"]))
    assert n4 >= 10 and n6 >= 6, (n4, n6)
    out.append("static const struct icrc_vector icrc_vectors[] = {")
    for name, src, ln, icrc, l2_pad in table:
        out.append("\t{ %s,\n\t  %s,\n\t  vec_%s, %d, 0x%08x, %d },"
                   % (c_string(name), c_split_string(src), name, ln, icrc, l2_pad))
    out.append("};")
    out.append("#define N_ICRC_VECTORS (sizeof(icrc_vectors) / sizeof(icrc_vectors[0]))")
    out.append("")
    out.append("/* Fields of a roce_frame_spec from which roce_build_cnp() must rebuild a vector. */")
    out.append("struct cnp_vector {")
    out.append("\tconst char *vector;  /* name in icrc_vectors[] */")
    out.append("\tuint8_t dst_mac[6];")
    out.append("\tuint8_t src_mac[6];")
    out.append("\tuint8_t n_vlan;")
    out.append("\tuint16_t vlan_tci[2]; /* VID only: the priority is the prio argument */")
    out.append("\tuint8_t ip_ver;")
    out.append("\tuint8_t src_ip[16];")
    out.append("\tuint8_t dst_ip[16];")
    out.append("\tuint8_t ttl;")
    out.append("\tuint16_t ip_id;")
    out.append("\tuint32_t flow_label;")
    out.append("\tuint16_t udp_sport;")
    out.append("\tuint32_t dqpn;")
    out.append("\tuint8_t dscp;")
    out.append("\tuint8_t prio;")
    out.append("};")
    out.append("")
    out.append("static const struct cnp_vector cnp_vectors[] = {")

    def arr(b):
        return "{ " + ", ".join("0x%02x" % x for x in b) + " }"

    for name, s in CNP_SPECS.items():
        assert name in dict(VECTORS)
        mac = lambda m: bytes(int(x, 16) for x in m.split(":"))  # noqa: E731
        ipb = lambda a: ipaddress.ip_address(a).packed  # noqa: E731
        tci = (s["vlans"] + [0, 0])[:2]
        out.append("\t{ %s, %s, %s, %d, { %d, %d }, %d," % (
            c_string(name), arr(mac(s["dst"])), arr(mac(s["src"])), len(s["vlans"]),
            tci[0], tci[1], s["ver"]))
        out.append("\t  %s," % arr(ipb(s["sip"])))
        out.append("\t  %s," % arr(ipb(s["dip"])))
        out.append("\t  %d, 0x%04x, 0x%05x, 0x%04x, 0x%06x, %d, %d }," % (
            s["ttl"], s["ip_id"], s["fl"], s["sport"], s["dqpn"], s["dscp"], s["prio"]))
    out.append("};")
    out.append("#define N_CNP_VECTORS (sizeof(cnp_vectors) / sizeof(cnp_vectors[0]))")
    out.append("")
    out.append("/*")
    out.append(" * The opcodes RoCEv2 carries, written from IBTA Vol 1 table 38 and Annex A17")
    out.append(" * in roce_layers.py (independently of rocev2/roce_opcode.c), each with its")
    out.append(" * extension headers as \"name@offset\" from the start of the BTH, and the")
    out.append(" * header length.  opcodes.pcap holds a frame of each.")
    out.append(" */")
    out.append("struct gen_opcode {")
    out.append("\tuint8_t opcode;")
    out.append("\tuint8_t payload;      /* a payload may follow */")
    out.append("\tuint8_t hdr_len;      /* BTH plus extension headers */")
    out.append("\tconst char *name;")
    out.append("\tconst char *exts;")
    out.append("};")
    out.append("")
    out.append("static const struct gen_opcode gen_opcodes[] = {")
    for op in sorted(OPCODES):
        name, chain, pay = OPCODES[op]
        off, parts = 12, []
        for cls in chain:
            parts.append("%s@%d" % (EXT_KEY[cls], off))
            off += EXT_LEN[cls]
        out.append("\t{ 0x%02x, %d, %d, %s, %s }," % (op, int(pay), off, c_string(name),
                                                      c_string(" ".join(parts))))
    out.append("};")
    out.append("#define N_GEN_OPCODES (sizeof(gen_opcodes) / sizeof(gen_opcodes[0]))")
    out.append("")
    out.append("#endif /* TESTS_UNIT_VECTORS_H */")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return n4, n6


def main():
    data = os.path.join(ROOT, "tests", "data")
    os.makedirs(data, exist_ok=True)
    frames, expected = opcode_frames()
    write_pcap(os.path.join(data, "opcodes.pcap"), frames)
    write_json(os.path.join(data, "opcodes.json"), expected)
    mframes, mexpected = malformed_frames(expected)
    write_pcap(os.path.join(data, "malformed.pcap"), mframes)
    write_json(os.path.join(data, "malformed.json"), mexpected)
    n4, n6 = write_vectors_h(os.path.join(ROOT, "tests", "unit", "vectors.h"))
    print("opcodes.pcap: %d frames (%d opcodes); malformed.pcap: %d frames (%d error names); "
          "vectors.h: %d IPv4 + %d IPv6 vectors" % (
              len(frames), len(OPCODES), len(mframes), len(parse_error_names()), n4, n6))


if __name__ == "__main__":
    main()
