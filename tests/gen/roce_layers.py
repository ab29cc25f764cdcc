# SPDX-License-Identifier: BSD-3-Clause
"""
RoCEv2 extension headers that scapy 2.5's scapy.contrib.roce lacks, bound
after BTH by opcode so that scapy both builds and decodes them, plus an
independent ICRC written with zlib.crc32 (scapy fills the ICRC in for IPv4
only).

Everything here is written from the IBTA specification (Vol 1 chapter 9,
table 38, and Annex A17; release 1.5 for FLUSH, its FETH, and ATOMIC WRITE),
not from the C library in rocev2/, so that the two can check each other.

Frames may carry Ethernet padding after the ICRC (a NIC pads anything
shorter than 60 bytes): the ICRC helpers take the frame's extent from the IP
length, as a receiver must.  Run with /usr/bin/python3 (the Debian python3-scapy).
"""

import logging
import struct
import zlib

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.packet import Packet, Raw, bind_layers  # noqa: E402
from scapy.fields import (  # noqa: E402
    BitField, ByteField, IntField, X3BytesField, XIntField, XLongField, ThreeBytesField)
from scapy.contrib.roce import BTH, AETH, CNPPadding, cnp  # noqa: E402,F401
import scapy.contrib.roce as _scapy_roce  # noqa: E402

ROCE_UDP_PORT = 4791


class RDETH(Packet):
    """Reliable Datagram ETH (not carried by RoCEv2; here for completeness)."""
    name = "RDETH"
    fields_desc = [ByteField("resv8", 0), X3BytesField("eecnxt", 0)]


class DETH(Packet):
    name = "DETH"
    fields_desc = [XIntField("qkey", 0), ByteField("resv8", 0), ThreeBytesField("srcqp", 0)]


class XRCETH(Packet):
    name = "XRCETH"
    fields_desc = [ByteField("resv8", 0), ThreeBytesField("xrcsrq", 0)]


class FETH(Packet):
    """FLUSH ETH (IBTA 1.5): 26 reserved bits, selectivity level, placement type."""
    name = "FETH"
    fields_desc = [BitField("resv26", 0, 26), BitField("sel", 0, 2), BitField("plt", 0, 4)]


class RETH(Packet):
    name = "RETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0), IntField("dmalen", 0)]


class AtomicETH(Packet):
    name = "AtomicETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0),
                   XLongField("swap", 0), XLongField("comp", 0)]


class AtomicAckETH(Packet):
    name = "AtomicAckETH"
    fields_desc = [XLongField("orig", 0)]


class ImmDt(Packet):
    name = "ImmDt"
    fields_desc = [IntField("imm", 0)]


class IETH(Packet):
    name = "IETH"
    fields_desc = [XIntField("rkey", 0)]


# The JSON key roce-inspect prints for each header (roce_ext_name()).
EXT_KEY = {
    RDETH: "rdeth", DETH: "deth", XRCETH: "xrceth", FETH: "feth", RETH: "reth",
    AtomicETH: "atomiceth", AETH: "aeth", AtomicAckETH: "atomicacketh",
    ImmDt: "immdt", IETH: "ieth",
}
EXT_LEN = {RDETH: 4, DETH: 8, XRCETH: 4, FETH: 4, RETH: 16, AtomicETH: 28, AETH: 4,
           AtomicAckETH: 8, ImmDt: 4, IETH: 4}

# IBTA Vol 1 table 38: the operations of RC, by their low five bits, with the
# extension headers each carries in wire order and whether a payload follows.
_RC_OPS = {
    0x00: ("SEND_FIRST", [], True),
    0x01: ("SEND_MIDDLE", [], True),
    0x02: ("SEND_LAST", [], True),
    0x03: ("SEND_LAST_WITH_IMMEDIATE", [ImmDt], True),
    0x04: ("SEND_ONLY", [], True),
    0x05: ("SEND_ONLY_WITH_IMMEDIATE", [ImmDt], True),
    0x06: ("RDMA_WRITE_FIRST", [RETH], True),
    0x07: ("RDMA_WRITE_MIDDLE", [], True),
    0x08: ("RDMA_WRITE_LAST", [], True),
    0x09: ("RDMA_WRITE_LAST_WITH_IMMEDIATE", [ImmDt], True),
    0x0a: ("RDMA_WRITE_ONLY", [RETH], True),
    0x0b: ("RDMA_WRITE_ONLY_WITH_IMMEDIATE", [RETH, ImmDt], True),
    0x0c: ("RDMA_READ_REQUEST", [RETH], False),
    0x0d: ("RDMA_READ_RESPONSE_FIRST", [AETH], True),
    0x0e: ("RDMA_READ_RESPONSE_MIDDLE", [], True),
    0x0f: ("RDMA_READ_RESPONSE_LAST", [AETH], True),
    0x10: ("RDMA_READ_RESPONSE_ONLY", [AETH], True),
    0x11: ("ACKNOWLEDGE", [AETH], False),
    0x12: ("ATOMIC_ACKNOWLEDGE", [AETH, AtomicAckETH], False),
    0x13: ("COMPARE_SWAP", [AtomicETH], False),
    0x14: ("FETCH_ADD", [AtomicETH], False),
    # 0x15 is reserved.
    0x16: ("SEND_LAST_WITH_INVALIDATE", [IETH], True),
    0x17: ("SEND_ONLY_WITH_INVALIDATE", [IETH], True),
    # IBTA 1.5: FLUSH (FETH, then RETH, no payload) and ATOMIC WRITE (RETH
    # and one 8-byte word).
    0x1c: ("FLUSH", [FETH, RETH], False),
    0x1d: ("ATOMIC_WRITE", [RETH], True),
}
_RESPONSES = {0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12}
# RC only: Linux (ib_pack.h, rxe), Wireshark and scapy give FLUSH and ATOMIC
# WRITE no XRC form, so neither does this table.
_RC_ONLY = {0x1c, 0x1d}
# Opcodes whose body (between the headers and the ICRC) has a fixed size.
BODY_LEN = {0x1d: 8, 0x81: 16}


def _build_opcode_table():
    """opcode -> (name, [ext classes in wire order], payload allowed)."""
    table = {}
    for low, (name, exts, pay) in _RC_OPS.items():
        table[0x00 + low] = ("RC_" + name, list(exts), pay)
        # UC: SEND and RDMA WRITE only (0x00-0x0b).
        if low <= 0x0b:
            table[0x20 + low] = ("UC_" + name, list(exts), pay)
        if low in _RC_ONLY:
            continue
        # XRC: every RC operation; requests carry an XRCETH right after the BTH.
        xexts = list(exts) if low in _RESPONSES else [XRCETH] + list(exts)
        table[0xa0 + low] = ("XRC_" + name, xexts, pay)
    # UD: SEND Only and SEND Only with Immediate, with a DETH.
    table[0x64] = ("UD_SEND_ONLY", [DETH], True)
    table[0x65] = ("UD_SEND_ONLY_WITH_IMMEDIATE", [DETH, ImmDt], True)
    # Annex A17.9.3: the CNP carries 16 reserved bytes and no ETH.
    table[0x81] = ("CNP", [], False)
    return table


OPCODES = _build_opcode_table()
CNP_OPCODE = 0x81

# The names scapy knows must agree with ours (a check on both tables).
for _op, _nm in _scapy_roce._bth_opcodes.items():
    if _op in OPCODES:
        assert OPCODES[_op][0] == _nm, (hex(_op), _nm, OPCODES[_op][0])


def _bth_of(pkt):
    layer = pkt.underlayer
    while layer is not None and not isinstance(layer, BTH):
        layer = layer.underlayer
    return layer


def _next_ext(self, payload):
    """guess_payload_class for an ETH: the next header the opcode carries."""
    bth = _bth_of(self)
    if bth is None or bth.opcode not in OPCODES:
        return Raw
    chain = OPCODES[bth.opcode][1]
    for i, cls in enumerate(chain):
        if isinstance(self, cls) and i + 1 < len(chain):
            return chain[i + 1]
    return Raw


for _cls in (RDETH, DETH, XRCETH, FETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH):
    _cls.guess_payload_class = _next_ext

# The first header after the BTH, by opcode.  scapy binds AETH to 0x11 itself.
for _op, (_nm, _exts, _pay) in sorted(OPCODES.items()):
    if _exts and not (_exts[0] is AETH and _op == 0x11):
        bind_layers(BTH, _exts[0], opcode=_op)


# ---------------------------------------------------------------------------
# The ICRC, independently of scapy and of rocev2/.

def locate(frame):
    """Offsets (l3, ip_version, l4, bth) of a well-formed RoCEv2 frame."""
    off = 12
    etype = struct.unpack_from("!H", frame, off)[0]
    while etype in (0x8100, 0x88a8):
        off += 4
        etype = struct.unpack_from("!H", frame, off)[0]
    off += 2
    l3 = off
    if etype == 0x0800:
        ver, l4 = 4, l3 + (frame[l3] & 0x0f) * 4
    elif etype == 0x86dd:
        ver, l4 = 6, l3 + 40
    else:
        raise ValueError("not IP: ethertype 0x%04x" % etype)
    return l3, ver, l4, l4 + 8


def extent(frame):
    """
    The length of a RoCEv2 frame without its Ethernet padding: the IP
    header's offset plus the IPv4 total length or 40 plus the IPv6 payload
    length.  A frame that is not IP, or whose IP length runs past it, has
    no padding to leave out: its extent is its length (as the helpers
    always took it).
    """
    frame = bytes(frame)
    try:
        l3, ver, _, _ = locate(frame)
        if ver == 4:
            end = l3 + struct.unpack_from("!H", frame, l3 + 2)[0]
        else:
            end = l3 + 40 + struct.unpack_from("!H", frame, l3 + 4)[0]
    except (ValueError, struct.error):
        return len(frame)
    return end if 0 < end <= len(frame) else len(frame)


def icrc_zlib(frame):
    """
    The ICRC (IBTA Annex A17.3.3) of a RoCEv2 frame without FCS, as an
    integer (stored on the wire least significant byte first): CRC-32 over
    8 bytes of 0xff, the IP header with the variant fields set to ones
    (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label, hop
    limit), the UDP header with checksum ones, the BTH with byte 4 (FECN,
    BECN, reserved) ones, and the rest up to the ICRC.  Ethernet padding
    after the ICRC is no part of it.
    """
    frame = bytes(frame)
    frame = frame[:extent(frame)]
    l3, ver, l4, bth = locate(frame)
    ip = bytearray(frame[l3:l4])
    if ver == 4:
        ip[1] = 0xff
        ip[8] = 0xff
        ip[10:12] = b"\xff\xff"
    else:
        ip[0] |= 0x0f
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xff
    udp = bytearray(frame[l4:l4 + 8])
    udp[6:8] = b"\xff\xff"
    bthb = bytearray(frame[bth:bth + 12])
    bthb[4] = 0xff
    msg = b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(bthb) + frame[bth + 12:-4]
    return zlib.crc32(msg) & 0xffffffff


def icrc_found(frame):
    """The ICRC stored in the last four bytes before any Ethernet padding."""
    frame = bytes(frame)
    end = extent(frame)
    return struct.unpack("<I", frame[end - 4:end])[0]


def icrc_scapy(frame):
    """
    scapy's own ICRC of an IPv4 frame: dissect, drop the ICRC and rebuild
    (scapy.contrib.roce BTH.compute_icrc).  None for IPv6, which scapy 2.5
    does not support.  Ethernet padding is removed first, as a receiver
    trims it by the IP length (scapy 2.5 would count it in the payload).
    """
    from scapy.layers.l2 import Ether
    from scapy.layers.inet import IP
    frame = bytes(frame)[:extent(frame)]
    p = Ether(bytes(frame))
    if IP not in p or BTH not in p:
        return None
    p[BTH].icrc = None
    rebuilt = bytes(p)
    assert len(rebuilt) == len(frame) and rebuilt[:-4] == frame[:-4], \
        "scapy did not rebuild the frame byte for byte"
    return icrc_found(rebuilt)


def with_icrc(frame):
    """The frame with its ICRC (before any padding) replaced by icrc_zlib()."""
    frame = bytes(frame)
    end = extent(frame)
    return frame[:end - 4] + struct.pack("<I", icrc_zlib(frame)) + frame[end:]
