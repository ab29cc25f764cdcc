# SPDX-License-Identifier: BSD-3-Clause
"""
Frames for the isolation suite: a description (Frame), a fast builder and a
small decoder, written from the IBTA specification with struct and zlib.

scapy is the reference: scapy_bytes() builds the same description with
scapy (and the extension headers of tests/gen/roce_layers.py), and the suite
builds a sample of every frame class both ways and requires the bytes to be
equal.  The fast path exists because scapy needs about 2 ms a frame and a
run has some 50 000 frames to build and check.  Nothing here comes from the
C code of rocev2/.
"""

import ipaddress
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))

# Opcodes (IBTA Vol 1 table 38, Annex A17).
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY, SEND_ONLY_IMM = 0, 1, 2, 3, 4, 5
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM, WRITE_ONLY, WRITE_ONLY_IMM = 6, 7, 8, 9, 10, 11
READ_REQ, RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY = 0x0c, 0x0d, 0x0e, 0x0f, 0x10
ACK, ATOMIC_ACK, CMP_SWAP, FETCH_ADD = 0x11, 0x12, 0x13, 0x14
SEND_LAST_INV, SEND_ONLY_INV = 0x16, 0x17
FLUSH, ATOMIC_WRITE = 0x1c, 0x1d            # IBTA 1.5, RC only
UC, XRC = 0x20, 0xa0
UD_SEND_ONLY, UD_SEND_ONLY_IMM = 0x64, 0x65
CNP = 0x81

EXT_LEN = {"XRCETH": 4, "DETH": 8, "FETH": 4, "RETH": 16, "AtomicETH": 28, "AETH": 4, "AtomicAckETH": 8,
           "ImmDt": 4, "IETH": 4, "CNPPadding": 16}

# The RC operations by their low five bits: (extension headers in wire
# order, payload allowed, request, position).  Position is first, middle,
# last or only; responses (READ responses, ACKs) carry their own position.
_RC = {
    0x00: ([], True, True, "first"), 0x01: ([], True, True, "middle"),
    0x02: ([], True, True, "last"), 0x03: (["ImmDt"], True, True, "last"),
    0x04: ([], True, True, "only"), 0x05: (["ImmDt"], True, True, "only"),
    0x06: (["RETH"], True, True, "first"), 0x07: ([], True, True, "middle"),
    0x08: ([], True, True, "last"), 0x09: (["ImmDt"], True, True, "last"),
    0x0a: (["RETH"], True, True, "only"), 0x0b: (["RETH", "ImmDt"], True, True, "only"),
    0x0c: (["RETH"], False, True, "only"),
    0x0d: (["AETH"], True, False, "first"), 0x0e: ([], True, False, "middle"),
    0x0f: (["AETH"], True, False, "last"), 0x10: (["AETH"], True, False, "only"),
    0x11: (["AETH"], False, False, "only"), 0x12: (["AETH", "AtomicAckETH"], False, False, "only"),
    0x13: (["AtomicETH"], False, True, "only"), 0x14: (["AtomicETH"], False, True, "only"),
    0x16: (["IETH"], True, True, "last"), 0x17: (["IETH"], True, True, "only"),
    # IBTA 1.5: FLUSH carries a FETH, then a RETH, and no payload; ATOMIC
    # WRITE a RETH and exactly 8 bytes (BODY_LEN).  Only the RC forms exist:
    # no UC or XRC opcode carries them (0x3c, 0x3d, 0xbc, 0xbd stay invalid).
    0x1c: (["FETH", "RETH"], False, True, "only"), 0x1d: (["RETH"], True, True, "only"),
}
_RC_ONLY = (FLUSH, ATOMIC_WRITE)

# Opcodes whose body has a fixed size (the CNP's 16 reserved bytes, the
# ATOMIC WRITE's word); another size is bad_payload, a pad count bad_pad.
BODY_LEN = {CNP: 16, ATOMIC_WRITE: 8}


class Op:
    """What an opcode is: transport, headers, payload, request or response, position."""

    def __init__(self, code, transport, exts, payload, request, position):
        self.code, self.transport, self.exts = code, transport, exts
        self.payload, self.request, self.position = payload, request, position
        self.body_len = BODY_LEN.get(code, 0)

    @property
    def opens(self):
        """A request that starts a message (First or Only)."""
        return self.request and self.position in ("first", "only")

    @property
    def read(self):
        return self.transport in ("rc", "uc", "xrc") and (self.code & 0x1f) == READ_REQ


def _optable():
    t = {}
    for low, (exts, pay, req, pos) in _RC.items():
        t[low] = Op(low, "rc", exts, pay, req, pos)
        if low <= 0x0b:
            t[UC | low] = Op(UC | low, "uc", exts, pay, req, pos)
        if low in _RC_ONLY:
            continue
        xe = exts if not req else ["XRCETH"] + exts
        t[XRC | low] = Op(XRC | low, "xrc", xe, pay, req, pos)
    t[UD_SEND_ONLY] = Op(UD_SEND_ONLY, "ud", ["DETH"], True, True, "only")
    t[UD_SEND_ONLY_IMM] = Op(UD_SEND_ONLY_IMM, "ud", ["DETH", "ImmDt"], True, True, "only")
    t[CNP] = Op(CNP, "cnp", ["CNPPadding"], False, False, "none")
    return t


OPS = _optable()
INVALID_OPCODES = [o for o in range(256) if o not in OPS]


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip_bytes(s):
    return ipaddress.ip_address(s).packed


def ip_ver(s):
    return ipaddress.ip_address(s).version


def ip_text(b):
    return str(ipaddress.ip_address(bytes(b)))


class Frame:
    """
    A RoCEv2 frame by its fields; build() makes the bytes.  @l2_pad is
    Ethernet padding after the ICRC: outside the IP length, so no length,
    checksum or ICRC covers it (docs/wire.md).
    """

    FIELDS = dict(eth_dst="02:00:00:00:00:00", eth_src="02:00:00:00:00:00", vlans=(),
                  src="0.0.0.0", dst="0.0.0.0", tos=0, ttl=64, ip_id=0, ip_flags=2,
                  ip_options=b"", fl=0, sport=0xc000, dport=4791, udp_csum=False, opcode=SEND_ONLY,
                  se=0, m=0, pad=0, tver=0, pkey=0xffff, fecn=0, becn=0, dqpn=0, ackreq=0,
                  psn=0, exts=(), payload=b"", icrc_xor=0, l2_pad=b"")

    __slots__ = tuple(FIELDS)

    def __init__(self, **kw):
        for k, v in self.FIELDS.items():
            setattr(self, k, v)
        for k, v in kw.items():
            setattr(self, k, v)
        self.exts = [(n, dict(a)) for n, a in self.exts]
        self.vlans = [tuple(v) for v in self.vlans]

    def copy(self, **kw):
        c = Frame(**{k: getattr(self, k) for k in self.FIELDS})
        for k, v in kw.items():
            setattr(c, k, v)
        return c

    @property
    def ver(self):
        return ip_ver(self.src)

    @property
    def op(self):
        return OPS.get(self.opcode)

    def ext(self, name):
        for n, a in self.exts:
            if n == name:
                return a
        return None

    def bth_rest(self):
        """BTH, extension headers, payload and pad (the ICRC comes after)."""
        b = struct.pack("!BBHBBHBBH", self.opcode,
                        (self.se << 7) | (self.m << 6) | (self.pad << 4) | self.tver, self.pkey,
                        (self.fecn << 7) | (self.becn << 6), self.dqpn >> 16, self.dqpn & 0xffff,
                        self.ackreq << 7, self.psn >> 16, self.psn & 0xffff)
        for n, a in self.exts:
            b += ext_bytes(n, a)
        return b + self.payload

    def build(self, l4_payload=None):
        """
        The frame's bytes with a correct ICRC (xor icrc_xor), IPv4 header
        checksum and UDP checksum (if udp_csum).  @l4_payload replaces what
        follows the UDP header (for malformed frames; then no ICRC is added).
        """
        if l4_payload is None:
            body = self.bth_rest() + b"\0\0\0\0"
        else:
            body = l4_payload
        udp_len = 8 + len(body)
        eth = mac_bytes(self.eth_dst) + mac_bytes(self.eth_src)
        for tpid, vid, prio in self.vlans:
            eth += struct.pack("!HH", tpid, (prio << 13) | vid)
        srcb, dstb = ip_bytes(self.src), ip_bytes(self.dst)
        if len(srcb) == 4:
            opts = self.ip_options
            ihl = 5 + len(opts) // 4
            iph = bytearray(struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, self.tos, ihl * 4 + udp_len,
                                        self.ip_id, self.ip_flags << 13, self.ttl, 17, 0, srcb,
                                        dstb) + opts)
            struct.pack_into("!H", iph, 10, csum16(iph))
            eth += b"\x08\x00"
        else:
            iph = bytearray(struct.pack("!IHBB16s16s", (6 << 28) | (self.tos << 20) | self.fl,
                                        udp_len, 17, self.ttl, srcb, dstb))
            eth += b"\x86\xdd"
        udp = bytearray(struct.pack("!HHHH", self.sport, self.dport, udp_len, 0))
        frame = bytearray(eth + bytes(iph) + bytes(udp) + body)
        l3 = len(eth)
        l4 = l3 + len(iph)
        if l4_payload is None:
            struct.pack_into("<I", frame, len(frame) - 4, icrc(frame, l3, l4) ^ self.icrc_xor)
        if self.udp_csum:
            struct.pack_into("!H", frame, l4 + 6, udp_checksum(frame, l3, l4))
        return bytes(frame) + bytes(self.l2_pad)


def ext_bytes(n, a):
    if n == "DETH":
        return struct.pack("!IBBH", a["qkey"], 0, a["srcqp"] >> 16, a["srcqp"] & 0xffff)
    if n == "FETH":
        return struct.pack("!I", (a.get("sel", 0) & 3) << 4 | (a.get("plt", 0) & 0xf))
    if n == "RETH":
        return struct.pack("!QII", a["va"], a["rkey"], a["dmalen"])
    if n == "AtomicETH":
        return struct.pack("!QIQQ", a["va"], a["rkey"], a["swap"], a["comp"])
    if n == "AETH":
        return struct.pack("!BBH", a["syndrome"], a["msn"] >> 16, a["msn"] & 0xffff)
    if n == "AtomicAckETH":
        return struct.pack("!Q", a["orig"])
    if n in ("ImmDt",):
        return struct.pack("!I", a["imm"])
    if n == "IETH":
        return struct.pack("!I", a["rkey"])
    if n == "XRCETH":
        return struct.pack("!BBH", 0, a["xrcsrq"] >> 16, a["xrcsrq"] & 0xffff)
    if n == "CNPPadding":
        return bytes(16)
    raise ValueError(n)


def csum16(b, s=0):
    if len(b) % 2:
        b = bytes(b) + b"\0"
    for (w,) in struct.iter_unpack("!H", bytes(b)):
        s += w
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def udp_checksum(frame, l3, l4, end=None):
    """The UDP checksum of a frame that ends at @end (its length; padding follows)."""
    end = len(frame) if end is None else end
    ver = frame[l3] >> 4
    ulen = end - l4
    seg = bytearray(frame[l4:end])
    seg[6:8] = b"\0\0"
    if ver == 4:
        ph = bytes(frame[l3 + 12:l3 + 20]) + struct.pack("!BBH", 0, 17, ulen)
    else:
        ph = bytes(frame[l3 + 8:l3 + 40]) + struct.pack("!IBBBB", ulen, 0, 0, 0, 17)
    c = csum16(ph + bytes(seg))
    return c or 0xffff


def icrc(frame, l3, l4, end=None):
    """
    The ICRC (IBTA Annex A17.3.3) of a frame whose IP header is at @l3 and
    UDP at @l4, and which ends at @end (padding follows; default: no padding).
    """
    frame = bytes(frame if end is None else frame[:end])
    ip = bytearray(frame[l3:l4])
    if ip[0] >> 4 == 4:
        ip[1] = 0xff
        ip[8] = 0xff
        ip[10:12] = b"\xff\xff"
    else:
        ip[0] |= 0x0f
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xff
    udp = bytearray(frame[l4:l4 + 8])
    udp[6:8] = b"\xff\xff"
    bth = bytearray(frame[l4 + 8:l4 + 20])
    bth[4] = 0xff
    msg = b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(bth) + frame[l4 + 20:-4]
    return zlib.crc32(msg) & 0xffffffff


def decode(frame):
    """
    The fields the checks need, from a frame the switch sent, or None if it
    is not an Ethernet/IP/UDP/BTH frame: a dict with vlans, ver, src, dst
    (text), l3, l4, ihl, opcode, dqpn, psn, pad, srcqp (DETH), reth/atomic
    (va, rkey, dmalen), payload (bytes after the headers, before pad), end
    (where the IP length ends the frame) and l2_pad (the Ethernet padding
    after it).
    """
    try:
        off = 12
        et = struct.unpack_from("!H", frame, off)[0]
        vlans = []
        while et in (0x8100, 0x88a8):
            tci = struct.unpack_from("!H", frame, off + 2)[0]
            vlans.append((et, tci & 0xfff, tci >> 13))
            off += 4
            et = struct.unpack_from("!H", frame, off)[0]
        l3 = off + 2
        d = {"vlans": vlans, "l3": l3}
        if et == 0x0800:
            ihl = (frame[l3] & 0xf) * 4
            d.update(ver=4, ihl=ihl, src=ip_text(frame[l3 + 12:l3 + 16]),
                     dst=ip_text(frame[l3 + 16:l3 + 20]))
            l4 = l3 + ihl
        elif et == 0x86dd:
            d.update(ver=6, src=ip_text(frame[l3 + 8:l3 + 24]), dst=ip_text(frame[l3 + 24:l3 + 40]))
            l4 = l3 + 40
        else:
            return None
        d["l4"] = l4
        why, l2_pad = ip_extent(frame)
        if why is not None:
            return None
        d["end"], d["l2_pad"] = len(frame) - l2_pad, l2_pad
        d["udp_csum"] = struct.unpack_from("!H", frame, l4 + 6)[0]
        bth = l4 + 8
        op = frame[bth]
        d["opcode"] = op
        d["pad"] = (frame[bth + 1] >> 4) & 3
        d["dqpn"] = int.from_bytes(frame[bth + 5:bth + 8], "big")
        d["psn"] = int.from_bytes(frame[bth + 9:bth + 12], "big")
        off = bth + 12
        info = OPS.get(op)
        for n in (info.exts if info else []):
            if n == "DETH":
                d["srcqp"] = int.from_bytes(frame[off + 5:off + 8], "big")
            elif n in ("RETH", "AtomicETH"):
                va, rkey = struct.unpack_from("!QI", frame, off)
                d["mem"] = (va, rkey)
            off += EXT_LEN[n]
        end = d["end"] - 4 - d["pad"]
        d["payload"] = bytes(frame[off:end]) if end >= off else b""
        return d
    except (struct.error, IndexError, ValueError):
        return None


def ip_extent(frame):
    """
    What the IP and UDP lengths of @frame (Ethernet, tags, then IPv4 or IPv6
    with its header whole) make of it, by the rule of docs/wire.md: the frame
    ends where the IP length says and the bytes after that are Ethernet
    padding.  Returns (reason, l2_pad): reason is bad_ip_length (an IP length
    past the end of the frame, or an IPv4 total length below the header
    length), not_udp, truncated_udp (the IP length leaves no room for a UDP
    header, whatever bytes follow), bad_udp_length (a UDP length other than
    the IP payload's, also when it runs into the padding), or None when the
    lengths agree; l2_pad is the padding when the IP length is not too long.
    """
    off = 12
    et = struct.unpack_from("!H", frame, off)[0]
    while et in (0x8100, 0x88a8):
        off += 4
        et = struct.unpack_from("!H", frame, off)[0]
    l3 = off + 2
    if et == 0x0800:
        ihl = (frame[l3] & 0xf) * 4
        total = struct.unpack_from("!H", frame, l3 + 2)[0]
        if total > len(frame) - l3 or total < ihl:
            return "bad_ip_length", None
        proto, l4, ip_payload, end = frame[l3 + 9], l3 + ihl, total - ihl, l3 + total
    else:
        ip_payload = struct.unpack_from("!H", frame, l3 + 4)[0]
        if ip_payload > len(frame) - l3 - 40:
            return "bad_ip_length", None
        proto, l4, end = frame[l3 + 6], l3 + 40, l3 + 40 + ip_payload
    pad = len(frame) - end
    if proto != 17:
        return "not_udp", pad
    if ip_payload < 8:
        return "truncated_udp", pad
    if struct.unpack_from("!H", frame, l4 + 4)[0] != ip_payload:
        return "bad_udp_length", pad
    return None, pad


def ipv4_header_ok(frame, d):
    if d["ver"] != 4:
        return True
    return csum16(frame[d["l3"]:d["l3"] + d["ihl"]]) == 0


def udp_ok(frame, d):
    if d["udp_csum"] == 0:
        return True
    return udp_checksum(frame, d["l3"], d["l4"], d["end"]) == d["udp_csum"]


def icrc_ok(frame, d):
    return icrc(frame, d["l3"], d["l4"], d["end"]) == struct.unpack("<I", bytes(frame[d["end"] - 4:d["end"]]))[0]


# ---------------------------------------------------------------------------
# scapy, the reference builder.

_scapy = None


def _load_scapy():
    global _scapy
    if _scapy is None:
        import roce_layers as rl
        from scapy.layers.l2 import Ether, Dot1Q, Dot1AD
        from scapy.layers.inet import IP, UDP, IPOption
        from scapy.layers.inet6 import IPv6
        from scapy.packet import Raw
        _scapy = dict(rl=rl, Ether=Ether, Dot1Q=Dot1Q, Dot1AD=Dot1AD, IP=IP, UDP=UDP,
                      IPOption=IPOption, IPv6=IPv6, Raw=Raw)
    return _scapy


def scapy_bytes(f):
    """@f built by scapy: scapy's ICRC for IPv4, roce_layers.icrc_zlib() for IPv6."""
    s = _load_scapy()
    rl = s["rl"]
    classes = {"DETH": rl.DETH, "RETH": rl.RETH, "AtomicETH": rl.AtomicETH, "AETH": rl.AETH,
               "AtomicAckETH": rl.AtomicAckETH, "ImmDt": rl.ImmDt, "IETH": rl.IETH,
               "XRCETH": rl.XRCETH, "FETH": rl.FETH, "CNPPadding": rl.CNPPadding}
    p = s["Ether"](dst=f.eth_dst, src=f.eth_src)
    for tpid, vid, prio in f.vlans:
        p = p / (s["Dot1AD"](vlan=vid, prio=prio) if tpid == 0x88a8 else s["Dot1Q"](vlan=vid, prio=prio))
    if f.ver == 4:
        kw = dict(src=f.src, dst=f.dst, tos=f.tos, ttl=f.ttl, id=f.ip_id, flags=f.ip_flags)
        if f.ip_options:
            kw["options"] = [s["IPOption"](f.ip_options)]
        p = p / s["IP"](**kw)
    else:
        p = p / s["IPv6"](src=f.src, dst=f.dst, tc=f.tos, fl=f.fl, hlim=f.ttl)
    p = p / s["UDP"](sport=f.sport, dport=f.dport, chksum=None if f.udp_csum else 0)
    p = p / rl.BTH(opcode=f.opcode, solicited=f.se, migreq=f.m, padcount=f.pad, version=f.tver,
                   pkey=f.pkey, fecn=f.fecn, becn=f.becn, dqpn=f.dqpn, ackreq=f.ackreq, psn=f.psn)
    for n, a in f.exts:
        p = p / classes[n](**({} if n == "CNPPadding" else a))
    if f.payload:
        p = p / s["Raw"](f.payload)
    fr = bytes(p)
    if f.ver == 6 or f.icrc_xor:
        # Set the ICRC explicitly (scapy computes none for IPv6) and build
        # again, so that a UDP checksum covers the final bytes.
        crc = (rl.icrc_zlib(fr) if f.ver == 6 else struct.unpack("<I", fr[-4:])[0]) ^ f.icrc_xor
        p[rl.BTH].icrc = struct.unpack(">I", struct.pack("<I", crc))[0]
        fr = bytes(p)
    return fr + bytes(f.l2_pad)


# ---------------------------------------------------------------------------
# pcap files.

def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i // 1000000, i % 1000000, len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    e = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    off, frames = 24, []
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack(e + "IIII", data[off:off + 16])
        off += 16
        frames.append(data[off:off + caplen])
        off += caplen
    return frames
