# SPDX-License-Identifier: BSD-3-Clause
"""
Scenarios of IPv4 <-> IPv6 translation for gen_scenarios.py: RC connections
between IPv4 vips on IPv6 hosts (examples/pipeline-xlate-v4v6.json) and
between IPv6 vips on IPv4 hosts (examples/pipeline-xlate-v6v4.json), both
directions.  The model's Model.xlate() works out the other version's header
(docs/wire.md "IPv4 vips over IPv6 hosts"); the frames vary DSCP, ECN, TTL,
IPv4 id and flags or the flow label, which must carry over or be replaced as
it says.
"""
from gen_scenarios import (
    ACK, CMP_SWAP, CNP, CNP_EXTS, Model, READ_REQ, RR_ONLY, SEND_FIRST, SEND_LAST, SEND_ONLY,
    Scenario, Side, WRITE_FIRST, WRITE_LAST, WRITE_MIDDLE, WRITE_ONLY, aeth, atomic, reth)

V4_OPTIONS = b"\x94\x04\x00\x00"  # Router Alert: an IHL of 6


def both_ways(S, c, tport, va, rkey, v4_tenant):
    """The frames of connection @c (a Side) both ways, through tenant port @tport."""
    out = "from the tenant, translated to the hosts' version"
    inc = "from the fabric, translated to the vips' version"
    S.send(tport, c.out(S, SEND_ONLY, n=64), "SEND Only, " + out)
    S.send(tport, c.out(S, SEND_ONLY), "zero-length SEND Only, " + out)
    S.send(tport, c.out(S, WRITE_FIRST, [reth(0x1000, 0x4444, 700)], n=256), "WRITE First: RETH untouched")
    S.send(tport, c.out(S, WRITE_MIDDLE, n=256), "WRITE Middle")
    S.send(tport, c.out(S, WRITE_LAST, n=188, pad=1), "WRITE Last, pad 1")
    S.send(tport, c.out(S, RR_ONLY, [aeth(0x1f, 1)], n=128), "READ response Only")
    S.send(tport, c.out(S, ACK, [aeth(0x1f, 2)]), "ACK, " + out)
    S.send(tport, c.out(S, CNP, CNP_EXTS, psn=0, becn=1), "CNP, " + out)
    S.send(tport, c.out(S, SEND_ONLY, n=64, vlans=[(0x8100, 42, 6)]), "802.1Q SEND Only")
    S.send(tport, c.out(S, ACK, [aeth(0x1f, 3)], vlans=[(0x88a8, 7, 0), (0x8100, 8, 2)]), "QinQ ACK")
    S.send(tport, c.out(S, SEND_ONLY, n=48, udp_csum=True), "non-zero UDP checksum: recomputed")
    if v4_tenant:
        S.send(tport, c.out(S, SEND_ONLY, n=48, ip_options=V4_OPTIONS), "IPv4 options (IHL 6): dropped")
        S.send(tport, c.out(S, SEND_ONLY, l2pad=b"\x00\x00"), "58-byte SEND Only padded to 60")
    S.send("fabric0", c.inc(S, WRITE_ONLY, [reth(va + 0x40, rkey, 64)], n=64), "WRITE Only: " + inc
           + ", RETH translated")
    S.send("fabric0", c.inc(S, READ_REQ, [reth(va + 0xff000, rkey, 0x1000)]),
           "READ request to the window's end: translated")
    S.send("fabric0", c.inc(S, CMP_SWAP, [atomic(va + 0x80, rkey, 9, 8)]), "CmpSwap: translated")
    S.send("fabric0", c.inc(S, SEND_FIRST, n=256), "SEND First")
    S.send("fabric0", c.inc(S, SEND_LAST, n=32), "SEND Last")
    S.send("fabric0", c.inc(S, ACK, [aeth(0x1f, 4)]), "ACK, " + inc)
    S.send("fabric0", c.inc(S, SEND_ONLY), "zero-length SEND Only, " + inc)
    S.send("fabric0", c.inc(S, ACK, [aeth(0x61, 5)]), "NAK")
    S.send("fabric0", c.inc(S, CNP, CNP_EXTS, psn=0, becn=1), "CNP, " + inc)
    S.send("fabric0", c.inc(S, ACK, [aeth(0x1f, 6)], vlans=[(0x8100, 42, 3)]), "802.1Q ACK")
    S.send("fabric0", c.inc(S, WRITE_ONLY, [reth(va, rkey, 32)], n=32,
                            vlans=[(0x88a8, 7, 0), (0x8100, 8, 2)]), "QinQ WRITE: translated")
    S.send("fabric0", c.inc(S, SEND_ONLY, n=48, udp_csum=True), "non-zero UDP checksum from the fabric")
    if not v4_tenant:
        S.send("fabric0", c.inc(S, SEND_ONLY, n=48, ip_options=V4_OPTIONS), "IPv4 options (IHL 6) from the fabric")
        S.send("fabric0", c.inc(S, SEND_ONLY, l2pad=b"\xaa\xbb"), "58-byte SEND Only padded (junk) to 60")
    S.mdrop("fabric0", c.inc(S, WRITE_ONLY, [reth(va - 1, rkey, 2)], n=4), "mr_out_of_bounds",
            "WRITE at addr - 1")


def xlate_scenarios():
    m4 = Model("examples/pipeline-xlate-v4v6.json")
    S4 = Scenario("xlate_v4_over_v6", m4, "IPv4 vIPs on IPv6 hosts: IPv4 <-> IPv6 both ways, ICRC "
                  "recomputed, DSCP/ECN/TTL carried, flow label from the pqpns, padding to 60")
    blue = Side(m4, "blue", "192.168.1.10", 17)
    both_ways(S4, blue, "vm-blue-1", 0x7f0000000000, 0x1234, True)
    hp = Side(m4, "blue", "192.168.1.11", 18)
    S4.send("vm-blue-1", hp.out(S4, SEND_ONLY, n=64), "hairpin .11 -> .10: IPv4 stays IPv4")
    S4.send("vm-blue-1", hp.out(S4, WRITE_ONLY, [reth(0x7f0000000100, 0x1234, 16)], n=16),
            "hairpin WRITE into .10's window: translated, IPv4")
    S4.drop("fabric0", blue.inc(S4, SEND_ONLY, n=32, src="fd00::9"), "spoofed_source", "from fd00::9")
    S4.drop("vm-blue-1", blue.out(S4, SEND_ONLY, n=32, src="192.168.1.12"), "spoofed_source",
            "src vIP 192.168.1.12")

    m6 = Model("examples/pipeline-xlate-v6v4.json")
    S6 = Scenario("xlate_v6_over_v4", m6, "IPv6 vIPs on IPv4 hosts: IPv6 <-> IPv4 both ways, ICRC "
                  "recomputed, DSCP/ECN/TTL carried, flow label from the pqpns, padding to 60")
    green = Side(m6, "green", "fd00:1::10", 17)
    both_ways(S6, green, "vm-green-1", 0x7f0000100000, 0x2001, False)
    S6.drop("fabric0", green.inc(S6, SEND_ONLY, n=32, src="10.0.0.9"), "spoofed_source", "from 10.0.0.9")
    return [S4, S6]
