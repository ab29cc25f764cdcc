#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Traffic for the demo on examples/two-tenants.json (see its diagram).

Usage: /usr/bin/python3 examples/demo/gen_demo.py
Writes examples/demo/{fabric0,vm-blue-1,vm-red-1}.pcap: what arrives on each
port.  Blue and red use the same vIPs and vQPNs; the switch keeps them apart.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gen"))
from roce_layers import AETH, BTH, RETH  # noqa: E402
from scapy.all import Ether, IP, UDP, Raw, wrpcap  # noqa: E402

BLUE_VM, BLUE_PORT = "02:00:00:00:aa:10", "02:00:00:00:01:01"
BLUE_VM11 = "02:00:00:00:aa:11"
RED_VM, RED_PORT = "02:00:00:00:bb:10", "02:00:00:00:02:01"
UPLINK, PEER_HOST = "02:00:00:00:00:01", "02:00:00:00:00:02"


def vm(src_mac, dst_mac, src, dst, sport):
    return Ether(src=src_mac, dst=dst_mac) / IP(src=src, dst=dst, flags="DF") / UDP(sport=sport, dport=4791, chksum=0)


def fabric(sport):
    return (Ether(src=PEER_HOST, dst=UPLINK) / IP(src="10.0.0.2", dst="10.0.0.1", flags="DF") /
            UDP(sport=sport, dport=4791, chksum=0))


def main():
    blue, red, fab = [], [], []
    # Blue .10 qp 17 writes 3 KiB to .20 qp 33 (remote): First, Middle, Last.
    b = vm(BLUE_VM, BLUE_PORT, "192.168.1.10", "192.168.1.20", 50001)
    blue.append(b / BTH(opcode=0x06, dqpn=33, psn=100) /
                RETH(va=0x10000, rkey=0x5678, dmalen=3072) / Raw(bytes(1024)))
    blue.append(b / BTH(opcode=0x07, dqpn=33, psn=101) / Raw(bytes(1024)))
    blue.append(b / BTH(opcode=0x08, dqpn=33, psn=102, ackreq=1) / Raw(bytes(1024)))
    # Blue hairpin: .11 qp 18 sends to .10 qp 19 on the same host.
    blue.append(vm(BLUE_VM11, BLUE_PORT, "192.168.1.11", "192.168.1.10", 50002) /
                BTH(opcode=0x04, dqpn=19, psn=7) / Raw(b"hairpin hello..."))
    # A forged source: a vIP that is not an endpoint of blue on this port.
    blue.append(vm(BLUE_VM, BLUE_PORT, "192.168.1.99", "192.168.1.20", 50003) /
                BTH(opcode=0x04, dqpn=33, psn=1) / Raw(b"spoofed!"))
    # Red .10 qp 17 sends to .20 qp 33: the same vIPs and vQPNs as blue.
    red.append(vm(RED_VM, RED_PORT, "192.168.1.10", "192.168.1.20", 50011) /
               BTH(opcode=0x04, dqpn=33, psn=500) / Raw(b"red tenant data!"))
    # Red aims at a vIP its network does not have.
    red.append(vm(RED_VM, RED_PORT, "192.168.1.10", "192.168.9.9", 50012) /
               BTH(opcode=0x04, dqpn=33, psn=501) / Raw(b"nowhere."))
    # From the fabric: blue's peer ACKs the write (to blue .10's pqpn 4097),
    # reads 4 KiB of blue's advertised memory, and red's peer ACKs red (4098).
    fab.append(fabric(50021) / BTH(opcode=0x11, dqpn=4097, psn=102) / AETH(syndrome=0, msn=1))
    fab.append(fabric(50022) / BTH(opcode=0x0c, dqpn=4097, psn=200) /
               RETH(va=0x7f0000001000, rkey=0x1234, dmalen=4096))
    fab.append(fabric(50023) / BTH(opcode=0x11, dqpn=4098, psn=500) / AETH(syndrome=0, msn=1))
    # A read past the end of red's 64 KiB window: refused (mr_check enforce).
    fab.append(fabric(50024) / BTH(opcode=0x0c, dqpn=4098, psn=600) /
               RETH(va=0x7f0000000000 + 65536 - 8, rkey=0x1234, dmalen=16))
    for name, frames in (("vm-blue-1", blue), ("vm-red-1", red), ("fabric0", fab)):
        wrpcap(os.path.join(HERE, name + ".pcap"), frames)


if __name__ == "__main__":
    main()
