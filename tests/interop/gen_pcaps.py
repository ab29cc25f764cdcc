#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Generate the committed captures of the interop tests (tests/interop/) and of
pktgen-scripts/, with scapy.  The topology is examples/interop-testpmd.json.

  tests/interop/data/blue-rc.pcap  blue's RC traffic as its VM sends it into the
                                   switch's vm-blue-1 port: to the remote peer
                                   192.168.1.20 qp 33 (renamed to the fabric) and
                                   on the hairpin pair .11 qp 18 <-> .10 qp 19
                                   (delivered back to the same port)
  tests/interop/data/red-rc.pcap   red's RC traffic to 192.168.1.20 qp 33, for
                                   the background stream of scenario B
  tests/interop/data/empty.pcap    no frames: the rx side of pcap ports that
                                   only transmit

Every frame carries the ICRC scapy computes (IPv4), checked against
icrc_zlib() from tests/gen/roce_layers.py.  Fixed values and timestamps: the
output is the same on every run.  Run from anywhere:

    /usr/bin/python3 tests/interop/gen_pcaps.py
"""

import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))

from roce_layers import (  # noqa: E402
    BTH, AETH, RETH, ImmDt, icrc_zlib, icrc_found)
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.packet import Raw  # noqa: E402

DATA = os.path.join(HERE, "data")
PCAP_EPOCH = 1700000000

# The VM side of the topology (examples/interop-testpmd.json).
BLUE_GW = "02:00:00:00:01:01"     # vm-blue-1 port MAC: the tenant's gateway
RED_GW = "02:00:00:00:02:01"
BLUE_10 = ("192.168.1.10", "02:00:00:00:aa:10")
BLUE_11 = ("192.168.1.11", "02:00:00:00:aa:11")
RED_10 = ("192.168.1.10", "02:00:00:00:bb:10")
PEER = "192.168.1.20"


def frame(src, dst_ip, dst_mac, opcode, dqpn, psn, exts=None, payload=b"", pad=0,
          sport=49152, ip_id=0, tos=0x68, ttl=64, udp_chksum=0, ackreq=0):
    """One RoCEv2 frame with scapy's ICRC; udp_chksum None lets scapy compute it."""
    sip, smac = src
    udp = UDP(sport=sport, dport=4791) if udp_chksum is None else \
        UDP(sport=sport, dport=4791, chksum=udp_chksum)
    p = (Ether(src=smac, dst=dst_mac) / IP(src=sip, dst=dst_ip, id=ip_id, tos=tos, ttl=ttl, flags="DF") /
         udp / BTH(opcode=opcode, dqpn=dqpn, psn=psn, padcount=pad, ackreq=ackreq))
    for e in exts or []:
        p = p / e
    if payload:
        p = p / Raw(payload)
    raw = bytes(p)
    assert icrc_zlib(raw) == icrc_found(raw), "scapy and zlib disagree on the ICRC"
    return raw


def pay(n, seed):
    return bytes((seed + i) & 0xff for i in range(n))


def blue_frames():
    out = []
    va, rkey = 0x7f0000001000, 0x1234
    to_peer = dict(dst_ip=PEER, dst_mac=BLUE_GW, dqpn=33)
    psn = 100
    # .10 qp 17 -> .20 qp 33: one of each common request, then responses.
    out.append(frame(BLUE_10, opcode=0x04, psn=psn, payload=pay(64, 1), ip_id=1, **to_peer))  # SEND Only
    psn += 1
    out.append(frame(BLUE_10, opcode=0x06, psn=psn, exts=[RETH(va=va, rkey=rkey, dmalen=768)],
                     payload=pay(256, 2), ip_id=2, sport=49153, **to_peer))                   # WRITE First
    out.append(frame(BLUE_10, opcode=0x07, psn=psn + 1, payload=pay(256, 3), ip_id=3, sport=49153, **to_peer))
    out.append(frame(BLUE_10, opcode=0x08, psn=psn + 2, payload=pay(256, 4), ip_id=4, sport=49153,
                     ackreq=1, **to_peer))                                                    # WRITE Last
    psn += 3
    out.append(frame(BLUE_10, opcode=0x0c, psn=psn, exts=[RETH(va=va + 0x1000, rkey=rkey, dmalen=4096)],
                     ip_id=5, **to_peer))                                                     # READ Request
    psn += 4
    out.append(frame(BLUE_10, opcode=0x0b, psn=psn, exts=[RETH(va=va + 0x2000, rkey=rkey, dmalen=61),
                                                          ImmDt(imm=0xdeadbeef)],
                     payload=pay(61, 5), pad=3, ip_id=6, **to_peer))                          # WRITE Only Imm
    psn += 1
    # SEND First / Middle / Last with a pad, the Last with a non-zero UDP checksum.
    out.append(frame(BLUE_10, opcode=0x00, psn=psn, payload=pay(1024, 6), ip_id=7, **to_peer))
    out.append(frame(BLUE_10, opcode=0x01, psn=psn + 1, payload=pay(1024, 7), ip_id=8, **to_peer))
    out.append(frame(BLUE_10, opcode=0x02, psn=psn + 2, payload=pay(29, 8), pad=3, ip_id=9,
                     udp_chksum=None, **to_peer))
    psn += 3
    # .10 as responder of .20's requests: ACK and a READ response pair.
    out.append(frame(BLUE_10, opcode=0x11, psn=7000, exts=[AETH(syndrome=0x1f, msn=1)], ip_id=10,
                     tos=0x02, **to_peer))
    out.append(frame(BLUE_10, opcode=0x0d, psn=7001, exts=[AETH(syndrome=0x1f, msn=2)],
                     payload=pay(512, 9), ip_id=11, **to_peer))
    out.append(frame(BLUE_10, opcode=0x0f, psn=7002, exts=[AETH(syndrome=0x1f, msn=2)],
                     payload=pay(100, 10), ip_id=12, ttl=3, **to_peer))
    # The hairpin pair: .11 qp 18 writes into .10's MR (translated), .10 qp 19 acks.
    out.append(frame(BLUE_11, dst_ip=BLUE_10[0], dst_mac=BLUE_GW, dqpn=19, opcode=0x0a, psn=500,
                     exts=[RETH(va=0x7f0000004000, rkey=rkey, dmalen=128)], payload=pay(128, 11),
                     ip_id=13, sport=50000))
    out.append(frame(BLUE_11, dst_ip=BLUE_10[0], dst_mac=BLUE_GW, dqpn=19, opcode=0x04, psn=501,
                     payload=pay(32, 12), ip_id=14, sport=50000))
    out.append(frame(BLUE_10, dst_ip=BLUE_11[0], dst_mac=BLUE_GW, dqpn=18, opcode=0x11, psn=501,
                     exts=[AETH(syndrome=0x1f, msn=2)], ip_id=15, sport=50001))
    # A 4 KiB-MTU WRITE (4154-byte frames) to the peer and a 4 KiB hairpin
    # WRITE Only: jumbo frames through vhost-user in both directions.
    out.append(frame(BLUE_10, opcode=0x06, psn=psn, exts=[RETH(va=va + 0x10000, rkey=rkey, dmalen=3 * 4096)],
                     payload=pay(4096, 13), ip_id=16, sport=49154, **to_peer))
    out.append(frame(BLUE_10, opcode=0x07, psn=psn + 1, payload=pay(4096, 14), ip_id=17, sport=49154, **to_peer))
    out.append(frame(BLUE_10, opcode=0x08, psn=psn + 2, payload=pay(4096, 15), ip_id=18, sport=49154,
                     ackreq=1, **to_peer))
    psn += 3
    out.append(frame(BLUE_11, dst_ip=BLUE_10[0], dst_mac=BLUE_GW, dqpn=19, opcode=0x0a, psn=502,
                     exts=[RETH(va=0x7f0000008000, rkey=rkey, dmalen=4096)], payload=pay(4096, 16),
                     ip_id=19, sport=50000))
    # More of the remote stream, so that the replay is more than one burst.
    for i in range(40):
        out.append(frame(BLUE_10, opcode=0x04, psn=psn + i, payload=pay(64 + 16 * (i % 8), i),
                         ip_id=100 + i, sport=49160 + i % 4, **to_peer))
    return out


def red_frames():
    out = []
    for i in range(32):
        out.append(frame(RED_10, dst_ip=PEER, dst_mac=RED_GW, dqpn=33, opcode=0x04, psn=9000 + i,
                         payload=pay(128, 0x40 + i), ip_id=i, sport=49200 + i % 8))
    return out


def write_pcap(path, frames):
    """A classic little-endian pcap, Ethernet, with fixed timestamps."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", PCAP_EPOCH + i // 1000, (i % 1000) * 1000, len(fr), len(fr)))
            f.write(fr)


def main():
    os.makedirs(DATA, exist_ok=True)
    blue, red = blue_frames(), red_frames()
    write_pcap(os.path.join(DATA, "blue-rc.pcap"), blue)
    write_pcap(os.path.join(DATA, "red-rc.pcap"), red)
    write_pcap(os.path.join(DATA, "empty.pcap"), [])
    print("blue-rc.pcap: %d frames, red-rc.pcap: %d frames, empty.pcap" % (len(blue), len(red)))


if __name__ == "__main__":
    main()
