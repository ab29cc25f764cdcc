#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# A frame shorter than an Ethernet header cannot be tested on a veth: the
# kernel pads what a packet socket sends up to 14 bytes.
"""Frames for the XDP tests, built and checked with scapy.

  frames.py send IFACE KIND [COUNT]      send COUNT frames of KIND on IFACE
  frames.py expect PCAP KIND:N ...       PCAP holds exactly these frames, in order
  frames.py arp IFACE IP                 ARP who-has IP; exit 0 when answered
  frames.py rsend IFACE DSTMAC SRC DST QPN COUNT
                                         RC SEND Only frames with a valid ICRC (IPv4 or IPv6)
  frames.py capture IFACE PCAP SECONDS   write the UDP 4791 frames IFACE receives to PCAP
  frames.py rcheck PCAP SRC DST QPN COUNT
                                         PCAP holds COUNT RoCEv2 frames SRC -> DST to QPN,
                                         each with a valid ICRC (and IPv4 header checksum)

KIND names a frame below (see FRAMES).  The source MAC is IFACE's own; the
destination MAC, IPs and QPNs come from the environment (XDP_DST_MAC,
XDP_SRC4, XDP_DST4, XDP_SRC6, XDP_DST6), as the test sets them.
"""
import logging
import os
import sys
import time
import zlib

# scapy warns that its BTH cannot compute an ICRC over IPv6: these frames need none.
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import ARP, AsyncSniffer, wrpcap, Dot1AD, Dot1Q, Ether, IP, IPv6, IPOption, Raw, UDP, get_if_hwaddr, rdpcap, sendp, srp
from scapy.contrib.roce import BTH

DST_MAC = os.environ.get("XDP_DST_MAC", "ff:ff:ff:ff:ff:ff")
SRC4, DST4 = os.environ.get("XDP_SRC4", "10.77.0.2"), os.environ.get("XDP_DST4", "10.77.0.1")
SRC6, DST6 = os.environ.get("XDP_SRC6", "fd77::2"), os.environ.get("XDP_DST6", "fd77::1")
QPN = int(os.environ.get("XDP_QPN", "0x1234"), 0)


def roce(qpn=QPN, sport=49152, dport=4791):
    """A RoCEv2 RC SEND Only to qpn with 32 bytes of payload (ICRC bytes at the end)."""
    return UDP(sport=sport, dport=dport, chksum=0) / BTH(opcode=4, dqpn=qpn, psn=7) / Raw(b"\xab" * 32) / Raw(b"\0" * 4)


def eth(src):
    return Ether(src=src, dst=DST_MAC)


# Each kind: (builder(src_mac) -> frame, what the program must do with it).
FRAMES = {
    "roce4": (lambda s: eth(s) / IP(src=SRC4, dst=DST4) / roce(), "redirect"),
    "roce6": (lambda s: eth(s) / IPv6(src=SRC6, dst=DST6) / roce(), "redirect"),
    "roce4_vlan": (lambda s: eth(s) / Dot1Q(vlan=100) / IP(src=SRC4, dst=DST4) / roce(), "redirect"),
    "roce6_qinq": (lambda s: eth(s) / Dot1AD(vlan=200) / IPv6(src=SRC6, dst=DST6) / roce(), "redirect"),
    "roce4_opts": (lambda s: eth(s) / IP(src=SRC4, dst=DST4, options=[IPOption(b"\x94\x04\x00\x00"),
                                                                       IPOption(b"\x01\x01\x01\x00")]) / roce(),
                   "redirect"),
    "roce4_qpn2": (lambda s: eth(s) / IP(src=SRC4, dst=DST4) / roce(qpn=QPN + 1), "redirect"),
    "roce4_port4792": (lambda s: eth(s) / IP(src=SRC4, dst=DST4) / roce(dport=4792), "pass"),
    "udp4_53": (lambda s: eth(s) / IP(src=SRC4, dst=DST4) / UDP(sport=1234, dport=53) / Raw(b"x" * 20), "pass"),
    "udp6_4790": (lambda s: eth(s) / IPv6(src=SRC6, dst=DST6) / UDP(sport=1234, dport=4790) / Raw(b"x" * 20), "pass"),
    "roce4_frag": (lambda s: eth(s) / IP(src=SRC4, dst=DST4, flags="MF") / roce(), "pass"),
    # Malformed or truncated: the program passes them, counted as malformed.
    "trunc_vlan": (lambda s: Raw(bytes(eth(s) / Dot1Q(vlan=5))[:16]), "malformed"),
    "trunc_ip4": (lambda s: Raw(bytes(eth(s) / IP(src=SRC4, dst=DST4) / roce())[:14 + 12]), "malformed"),
    "bad_ihl": (lambda s: eth(s) / IP(src=SRC4, dst=DST4, ihl=3) / roce(), "malformed"),
    "bad_ver4": (lambda s: Ether(src=s, dst=DST_MAC, type=0x0800) / Raw(b"\x65" + bytes(IP(src=SRC4, dst=DST4) / roce())[1:]), "malformed"),
    "trunc_ip6": (lambda s: Raw(bytes(eth(s) / IPv6(src=SRC6, dst=DST6) / roce())[:14 + 30]), "malformed"),
    "trunc_udp": (lambda s: Raw(bytes(eth(s) / IP(src=SRC4, dst=DST4) / roce())[:14 + 20 + 5]), "malformed"),
    "trunc_bth": (lambda s: Raw(bytes(eth(s) / IP(src=SRC4, dst=DST4) / roce())[:14 + 20 + 8 + 6]), "malformed"),
    "long_ihl": (lambda s: Raw(bytes(eth(s) / IP(src=SRC4, dst=DST4, ihl=15) / UDP(dport=4791))[:14 + 40]),
                 "malformed"),
}


def icrc(l3):
    """The ICRC of a RoCEv2 packet from its IP header to its end (the last 4 bytes
    are the ICRC itself), as DESIGN.md lists the masked fields."""
    b = bytearray(l3[:-4])
    if b[0] >> 4 == 4:
        hl = (b[0] & 15) * 4
        b[1] = 0xff                   # TOS
        b[8] = 0xff                   # TTL
        b[10:12] = b"\xff\xff"        # header checksum
    else:
        hl = 40
        b[0] |= 0x0f                  # traffic class and flow label
        b[1:4] = b"\xff\xff\xff"
        b[7] = 0xff                   # hop limit
    b[hl + 6:hl + 8] = b"\xff\xff"    # UDP checksum
    b[hl + 8 + 4] = 0xff              # BTH FECN, BECN, reserved
    return (zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xffffffff).to_bytes(4, "little")


def rc_send_only(src, dst, qpn, psn):
    """IP/UDP/BTH/payload/ICRC of an RC SEND Only, ICRC computed here (IPv4 and IPv6)."""
    ip = IPv6(src=src, dst=dst) if ":" in src else IP(src=src, dst=dst)
    pkt = ip / UDP(sport=49152, dport=4791, chksum=0) / BTH(opcode=4, dqpn=qpn, psn=psn, icrc=0) / Raw(b"\x5a" * 64)
    raw = bytes(pkt)
    return raw[:-4] + icrc(raw)


def ipv4_csum_ok(h):
    s = sum(int.from_bytes(h[i:i + 2], "big") for i in range(0, len(h), 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s == 0xffff


def build(kind, src):
    """The bytes of one frame of kind, from MAC src."""
    return bytes(FRAMES[kind][0](src))


def main():
    cmd = sys.argv[1]
    if cmd == "send":
        iface, kind = sys.argv[2], sys.argv[3]
        count = int(sys.argv[4]) if len(sys.argv) > 4 else 1
        sendp([Raw(build(kind, get_if_hwaddr(iface)))] * count, iface=iface, verbose=False)
    elif cmd == "expect":
        got = [bytes(p) for p in rdpcap(sys.argv[2])] if os.path.getsize(sys.argv[2]) > 24 else []
        want = []
        src = os.environ["XDP_SRC_MAC"]
        for spec in sys.argv[3:]:
            kind, n = spec.split(":")
            want += [build(kind, src)] * int(n)
        if got != want:
            print(f"pcap has {len(got)} frames, expected {len(want)}", file=sys.stderr)
            for i, g in enumerate(got[:4]):
                print(f"  got[{i}] {g[:48].hex()}", file=sys.stderr)
            sys.exit(1)
    elif cmd == "arp":
        iface, ip = sys.argv[2], sys.argv[3]
        ans, _ = srp(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=ip), iface=iface, timeout=2, verbose=False)
        sys.exit(0 if len(ans) == 1 and ans[0][1][ARP].psrc == ip else 1)
    elif cmd == "rsend":
        iface, dmac, src, dst, qpn, n = sys.argv[2:8]
        smac = get_if_hwaddr(iface)
        frames = [Raw(bytes(Ether(src=smac, dst=dmac, type=0x86dd if ":" in src else 0x0800)) +
                      rc_send_only(src, dst, int(qpn, 0), 100 + i)) for i in range(int(n))]
        sendp(frames, iface=iface, verbose=False)
    elif cmd == "capture":
        iface, pcap, secs = sys.argv[2], sys.argv[3], float(sys.argv[4])
        sn = AsyncSniffer(iface=iface, store=True,
                          lfilter=lambda p: UDP in p and p[UDP].dport == 4791)
        sn.start()
        print("ready", flush=True)
        time.sleep(secs)
        got = sn.stop() or []
        wrpcap(pcap, got)
    elif cmd == "rcheck":
        pcap, src, dst, qpn, n = sys.argv[2:7]
        pkts = rdpcap(pcap) if os.path.exists(pcap) and os.path.getsize(pcap) > 24 else []
        bad = []
        for p in pkts:
            raw = bytes(p)
            l3 = raw[14:]
            ip = IPv6(l3) if l3[0] >> 4 == 6 else IP(l3)
            end = 40 + ip.plen if l3[0] >> 4 == 6 else ip.len
            l3 = l3[:end]
            bth = l3[(40 if l3[0] >> 4 == 6 else ip.ihl * 4) + 8:]
            fields = (ip.src, ip.dst, int.from_bytes(bth[5:8], "big"))
            if fields != (src, dst, int(qpn, 0)):
                bad.append("fields %s" % (fields,))
            elif l3[-4:] != icrc(l3):
                bad.append("ICRC %s, expected %s" % (l3[-4:].hex(), icrc(l3).hex()))
            elif l3[0] >> 4 == 4 and not ipv4_csum_ok(l3[:ip.ihl * 4]):
                bad.append("IPv4 checksum")
        if len(pkts) != int(n) or bad:
            print("%s: %d frames (expected %s), %s" % (pcap, len(pkts), n, "; ".join(bad[:3]) or "all good"),
                  file=sys.stderr)
            sys.exit(1)
    elif cmd == "kinds":
        for k, (_, what) in FRAMES.items():
            print(k, what)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
