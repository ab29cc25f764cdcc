# SPDX-License-Identifier: BSD-3-Clause
"""
The VLAN policy scenarios of tests/pipeline (README "Scenarios": vlan_policy,
vlan_ipv6), written by gen_scenarios.py with its model, which applies the
policies of the configuration ("vlan" of ports and tenants): the tags a side
accepts (else vlan_mismatch) and the tags a frame leaves with.
"""
from gen_scenarios import (
    Model, Scenario, Side, F, aeth, atomic, deth, reth, ip_norm, vary, payload,
    ACK, CMP_SWAP, READ_REQ, RR_ONLY, SEND_LAST, SEND_ONLY, UD_SEND_ONLY, WRITE_FIRST,
    WRITE_LAST, WRITE_MIDDLE, WRITE_ONLY, CNP, CNP_EXTS)

QINQ = 0x88a8
MR_VA, MR_RKEY = 0x7f0000000000, 0x1234


def q(vid, prio=0):
    return (0x8100, vid, prio)


def vlan_policy_scenario():
    """
    tests/pipeline/vlan.json: blue's port tagged VID 10 (PCP kept), blue on
    the fabric its vni (VID 100, PCP = DSCP >> 3), red's port "keep", red on
    the fabric the uplink's "untagged".
    """
    m = Model("tests/pipeline/vlan.json")
    blue = Side(m, "blue", "192.168.1.10", 17)
    red = Side(m, "red", "192.168.1.10", 17)
    b11 = Side(m, "blue", "192.168.1.11", 18)   # hairpin .11/18 -> .10/19
    b10h = Side(m, "blue", "192.168.1.10", 19)  # hairpin .10/19 -> .11/18
    S = Scenario("vlan_policy", m, "VLAN policies both ways: a tenant port tagged VID 10 with "
                 "its PCP kept, the tenant's vni (VID 100) on an untagged fabric with the PCP "
                 "from the DSCP, a port that keeps its tags toward an untagged fabric (tags "
                 "popped, short frames padded to 60), priority tags, vlan_mismatch, the hairpin, "
                 "and NAKs that take their side's tags")
    # Blue, tenant to fabric: VID 10 in, VID 100 out with PCP = DSCP >> 3.
    for prio in (0, 3, 7):
        S.send("vm-blue-1", blue.out(S, SEND_ONLY, n=32, vlans=[q(10, prio)]),
               "blue .10 -> .20 SEND Only, VID 10 PCP %d: VID 100, PCP from the DSCP" % prio)
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, vlans=[q(10, 2)]),
           "zero-length SEND Only, 62 bytes tagged: 62 out")
    S.send("vm-blue-1", blue.out(S, SEND_ONLY, vlans=[q(10, 2)], l2pad=b"\x00\x00"),
           "zero-length SEND Only padded to 64: its padding kept")
    psn = S.psn(3)
    for i, op in enumerate((WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST)):
        ex = [reth(0x1000, 0x4321, 3 * 1024)] if op == WRITE_FIRST else []
        S.send("vm-blue-1", blue.out(S, op, ex, n=1024, psn=psn + i, vlans=[q(10, 5)]),
               "blue WRITE %s, 1 KiB, VID 10" % ("First", "Middle", "Last")[i])
    S.send("vm-blue-1", blue.out(S, ACK, [aeth(0x1f, 9)], vlans=[q(10, 6)]), "blue ACK, VID 10")
    S.mdrop("vm-blue-1", blue.out(S, SEND_ONLY, n=16), "vlan_mismatch", "blue untagged: port expects VID 10")
    S.mdrop("vm-blue-1", blue.out(S, SEND_ONLY, n=16, vlans=[q(20, 1)]), "vlan_mismatch", "blue VID 20")
    S.mdrop("vm-blue-1", blue.out(S, SEND_ONLY, n=16, vlans=[q(0, 3)]), "vlan_mismatch",
            "blue priority-tagged (VID 0)")
    S.mdrop("vm-blue-1", blue.out(S, SEND_ONLY, n=16, vlans=[(QINQ, 10, 0), q(10, 0)]), "vlan_mismatch",
            "blue QinQ, both VIDs 10")
    S.mdrop("vm-blue-1", blue.out(S, SEND_ONLY, n=16, vlans=[(QINQ, 10, 0)]), "vlan_mismatch",
            "blue one 802.1ad tag with VID 10: not an 802.1Q tag")
    # Blue, fabric to tenant: VID 100 in, VID 10 out with the fabric frame's PCP.
    for prio in (0, 4):
        S.send("fabric0", blue.inc(S, SEND_ONLY, n=48, vlans=[q(100, prio)]),
               ".20 -> blue .10 SEND Only, VID 100 PCP %d: VID 10, PCP %d" % (prio, prio))
    S.send("fabric0", blue.inc(S, READ_REQ, [reth(MR_VA + 0x40, MR_RKEY, 256)], vlans=[q(100, 6)]),
           ".20 reads blue .10's window, VID 100: translated, VID 10")
    S.send("fabric0", blue.inc(S, ACK, [aeth(0x1f, 4)], vlans=[q(100, 1)]), ".20 ACK, VID 100")
    S.mdrop("fabric0", blue.inc(S, SEND_ONLY, n=16), "vlan_mismatch", "blue's frame from the fabric untagged")
    S.mdrop("fabric0", blue.inc(S, SEND_ONLY, n=16, vlans=[q(200, 0)]), "vlan_mismatch",
            "blue's frame from the fabric on VID 200")
    # Blue's hairpin: in and out of vm-blue-1 on VID 10, PCP kept.
    S.send("vm-blue-1", b11.out(S, SEND_ONLY, n=24, vlans=[q(10, 4)]), "hairpin .11 -> .10, VID 10 PCP 4")
    S.send("vm-blue-1", b10h.out(S, ACK, [aeth(0x1f, 1)], vlans=[q(10, 0)]), "hairpin .10 -> .11 ACK")
    S.mdrop("vm-blue-1", b11.out(S, SEND_ONLY, n=24), "vlan_mismatch", "hairpin .11 -> .10 untagged")
    # Red: its port keeps tags, the fabric is untagged: every tag popped toward the fabric.
    S.send("vm-red-1", red.out(S, SEND_ONLY, n=32), "red untagged: untagged")
    S.send("vm-red-1", red.out(S, SEND_ONLY, n=32, vlans=[q(5, 3)]), "red VID 5: popped")
    S.send("vm-red-1", red.out(S, SEND_ONLY, n=32, vlans=[(QINQ, 5, 1), q(6, 2)]), "red QinQ: both popped")
    S.send("vm-red-1", red.out(S, SEND_ONLY, vlans=[q(5, 3)]),
           "red zero-length SEND Only, 62 bytes with its tag: 58 without, padded to 60 with zeros")
    S.send("vm-red-1", red.out(S, SEND_LAST, vlans=[(QINQ, 5, 1), q(6, 2)]),
           "red zero-length SEND Last, QinQ (66 bytes): 58, padded to 60")
    S.send("vm-red-1", red.out(S, SEND_ONLY, vlans=[q(5, 0)], l2pad=b"\xaa\xbb"),
           "red zero-length SEND Only tagged and padded to 64 with junk: 60, its junk kept")
    S.send("vm-red-1", red.out(S, ACK, [aeth(0x1f, 7)], vlans=[q(5, 0)]), "red ACK, 66 bytes: 62")
    # Red from the untagged fabric: untagged or a priority tag; red's port keeps what came.
    S.send("fabric0", red.inc(S, SEND_ONLY, n=32), "to red, untagged")
    S.send("fabric0", red.inc(S, SEND_ONLY, n=32, vlans=[q(0, 5)]), "to red, a priority tag: kept")
    S.send("fabric0", red.inc(S, ACK, [aeth(0x1f, 2)]), "ACK to red, untagged")
    S.mdrop("fabric0", red.inc(S, SEND_ONLY, n=32, vlans=[q(100, 0)]), "vlan_mismatch",
            "a frame for red on blue's VID 100: refused (no tenant reaches another's VLAN)")
    S.mdrop("fabric0", red.inc(S, SEND_ONLY, n=32, vlans=[q(200, 0)]), "vlan_mismatch",
            "a frame for red on VID 200 (red's vni; red's fabric policy is untagged)")
    # Refused requests: the NAK takes its side's tags.
    S.mdrop("fabric0", blue.inc(S, WRITE_ONLY, [reth(MR_VA, 0x9999, 16)], n=16, vlans=[q(100, 2)], pkey=0x8001),
            "mr_unknown", "blue WRITE from the fabric, VID 100: NAK out of the uplink on VID 100, "
            "PCP from the DSCP")
    S.mdrop("vm-blue-1", b11.out(S, WRITE_ONLY, [reth(MR_VA, 0x9999, 16)], n=16, vlans=[q(10, 6)]),
            "mr_unknown", "hairpin WRITE .11 -> .10 with an unknown rkey: NAK out of vm-blue-1, VID 10 PCP 6")
    S.mdrop("fabric0", red.inc(S, CMP_SWAP, [atomic(MR_VA + 0x100000, MR_RKEY, 1)], vlans=[q(0, 4)]),
            "mr_out_of_bounds", "red CmpSwap past its window with a priority tag: NAK untagged")
    return S


def vlan_ipv6_scenario():
    """
    tests/pipeline/vlan-ipv6.json: green's port untagged, the fabric tagged
    VID 7 with the PCP of the frame's outer tag (0 when it had none).
    """
    m = Model("tests/pipeline/vlan-ipv6.json")
    g = Side(m, "green", "fd00:1::10", 17)
    S = Scenario("vlan_ipv6", m, "IPv6 through VLAN policies: an untagged tenant port (priority "
                 "tags accepted) and a fabric tagged VID 7 with the PCP kept; RC, a translated WRITE, "
                 "a refused one's NAK on VID 7, UD and vlan_mismatch both ways")
    S.send("vm-green-1", g.out(S, SEND_ONLY, n=40), "green untagged: VID 7 PCP 0")
    S.send("vm-green-1", g.out(S, SEND_ONLY, n=40, vlans=[q(0, 5)]), "green priority tag PCP 5: VID 7 PCP 5")
    S.send("vm-green-1", g.out(S, SEND_ONLY), "green zero-length SEND Only (78 bytes): 82")
    S.send("vm-green-1", g.out(S, ACK, [aeth(0x1f, 3)], vlans=[q(0, 2)]), "green ACK, priority tag PCP 2")
    S.mdrop("vm-green-1", g.out(S, SEND_ONLY, n=40, vlans=[q(3, 0)]), "vlan_mismatch", "green VID 3")
    S.mdrop("vm-green-1", g.out(S, SEND_ONLY, n=40, vlans=[(QINQ, 0, 0), q(0, 0)]), "vlan_mismatch",
            "green two priority tags")
    S.send("fabric0", g.inc(S, SEND_ONLY, n=40, vlans=[q(7, 6)]), "to green, VID 7 PCP 6: untagged")
    S.send("fabric0", g.inc(S, RR_ONLY, [aeth(0x1f, 1)], n=64, vlans=[q(7, 0)]),
           "READ response Only to green, VID 7: untagged")
    S.send("fabric0", g.inc(S, WRITE_ONLY, [reth(0x7f0000100000, 0x2001, 64)], n=64, vlans=[q(7, 3)]),
           "WRITE Only into green's window, VID 7: translated, untagged")
    S.mdrop("fabric0", g.inc(S, WRITE_ONLY, [reth(0x7f0000200000, 0x2001, 64)], n=64, vlans=[q(7, 5)]),
            "mr_out_of_bounds", "WRITE past green's window, VID 7 PCP 5: its NAK out of the uplink on VID 7, PCP 5")
    S.mdrop("fabric0", g.inc(S, SEND_ONLY, n=40), "vlan_mismatch", "to green untagged")
    S.mdrop("fabric0", g.inc(S, SEND_ONLY, n=40, vlans=[q(8, 0)]), "vlan_mismatch", "to green on VID 8")
    # UD: green .10/40 <-> remote .20/41.
    ud_l, ud_r = m.qps[("green", "fd00:1::10", 40)], m.qps[("green", "fd00:1::20", 41)]
    le = m.ep("green", "fd00:1::10")
    for vl, note in (([], "untagged"), ([q(0, 3)], "priority tag PCP 3")):
        psn = S.psn()
        f = F(eth_src=le["mac"], eth_dst=m.ports["vm-green-1"]["mac"], src="fd00:1::10", dst="fd00:1::20",
              opcode=UD_SEND_ONLY, dqpn=41, psn=psn, vlans=vl, exts=[deth(0x11111111, 40)],
              payload=payload("green", 32, psn), **vary(psn, 6))
        S.send("vm-green-1", f, "UD .10/40 -> .20/41, %s: VID 7" % note)
    psn = S.psn()
    f = F(eth_src=m.host_mac(ud_r["host"]), eth_dst=m.uplink["mac"], src=ud_r["host"], dst=m.host,
          opcode=UD_SEND_ONLY, dqpn=ud_l["pqpn"], psn=psn, vlans=[q(7, 4)],
          exts=[deth(0x11111111, ud_r["pqpn"])], payload=payload("green", 32, psn), **vary(psn, 6))
    S.send("fabric0", f, "UD .20/41 -> .10/40 from the fabric, VID 7: untagged")
    S.mdrop("fabric0", f.copy(vlans=[q(9, 4)], psn=S.psn()), "vlan_mismatch", "the same UD frame on VID 9")
    return S


def vlan_scenarios():
    return [vlan_policy_scenario(), vlan_ipv6_scenario()]
