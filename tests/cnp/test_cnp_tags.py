#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
The notification point's CNPs go back the way the marked frame came: a
CE-marked frame from the fabric with one 802.1Q tag or two (QinQ) gets a CNP
with the same tags (VIDs kept, the 802.1p priority cnp_802p_prio), as well as
an untagged one.

examples/two-tenants.json (DCQCN on, NVIDIA profile, CNPs delivered to the
tenant too) runs on net_pcap; the fabric sends blue's connection 17 <-> 33
(pqpn 4097 here, 8193 on host 10.0.0.2) three CE-marked SEND Only frames,
untagged, with one tag and with two, far enough apart in PSN but back to
back in time; the CNP window (min_time_between_cnps) is set to 0 so that
each gets its CNP.  The CNPs on the fabric are decoded by scapy (tags, BTH
opcode 0x81, BECN, DestQP 8193, ICRC recomputed by scapy, addresses 10.0.0.1
-> 10.0.0.2).

A second run shows that a deferred CNP survives a reload: with cnp_mode
"defer" and a 1 s window, the first of two CE-marked frames gets its CNP
at once and the second a deferred one at the window's end; a /roce/reload
in between (a new overlay: the connection stays, under the same state) must
not lose it, nor address it to anyone else.

A third run puts VLAN policies on the fabric: the uplink untagged and blue
on its vni (VID 100).  Blue's marked frame on VID 100 gets a CNP on VID 100
(priority cnp_802p_prio), red's marked frame with a priority tag (VID 0) an
untagged CNP, and a blue frame on another VID is dropped (vlan_mismatch)
with no CNP.

Usage: /usr/bin/python3 tests/cnp/test_cnp_tags.py BUILD_DIR
Ends with "N passed, M failed".
"""
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))

from roce_checks import Checks  # noqa: E402
from roce_layers import BTH, icrc_found, icrc_scapy  # noqa: E402
from roce_switch import start_switch, stop_switch, wait_socket  # noqa: E402
from roce_telemetry import telemetry  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import rdpcap, wrpcap  # noqa: E402

check = Checks()
TAGS = {"untagged": [], "802.1Q": [(0x8100, 42)], "QinQ": [(0x88a8, 7), (0x8100, 8)]}


def marked(tags, psn, dqpn=4097):
    """A CE-marked RC SEND Only from host 10.0.0.2 (blue .20 qp 33) to pqpn 4097 (blue .10 qp 17)."""
    p = Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")
    for i, (tpid, vid) in enumerate(tags):
        p.type = tpid if i == 0 else p.type
        p = p / (Dot1AD(vlan=vid) if tpid == 0x88a8 else Dot1Q(vlan=vid))
    p = (p / IP(src="10.0.0.2", dst="10.0.0.1", tos=3, flags="DF", ttl=64) / UDP(sport=0xc123, dport=4791, chksum=0) /
         BTH(opcode=0x04, dqpn=dqpn, psn=psn, pkey=0xffff) / Raw(b"blue" * 16))
    return Ether(bytes(p))


def tags_of(p):
    out, layer = [], p
    while True:
        layer = layer.payload
        if isinstance(layer, (Dot1Q, Dot1AD)):
            out.append(layer.vlan)
        else:
            return out


def replay(build, work, name, doc, frames):
    """@frames into the uplink of the switch on configuration @doc until idle: (rc, summary, err, the
    CNPs the uplink sent)."""
    cfg = os.path.join(work, name + ".json")
    json.dump(doc, open(cfg, "w"))
    inp, out, empty = (os.path.join(work, name + x) for x in (".in.pcap", ".out.pcap", ".empty.pcap"))
    wrpcap(inp, frames)
    wrpcap(empty, [])
    prefix = "cnp-%s-%d" % (name, os.getpid())
    vdevs = ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, out),
             "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (empty, os.path.join(work, name + ".b.pcap")),
             "net_pcap2,rx_pcap=%s,tx_pcap=%s" % (empty, os.path.join(work, name + ".r.pcap"))]
    proc = start_switch(build, prefix, vdevs, cfg, "0", ["--exit-when-idle", "300"])
    proc.wait(timeout=60)
    rc, summary, err = stop_switch(proc, prefix)
    return rc, summary, err, [Ether(bytes(f)) for f in rdpcap(out)] if os.path.exists(out) else []


def main():
    build = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="roce-cnp-")
    doc = json.load(open(os.path.join(ROOT, "examples", "two-tenants.json")))
    doc["dcqcn"]["params"] = {"min_time_between_cnps": 0}
    rc, summary, err, cnps = replay(build, work, "tags", doc,
                                    [marked(t, 100 + 10 * i) for i, t in enumerate(TAGS.values())])
    check(rc == 0 and summary is not None, "the switch runs and exits with a summary", err[-400:])
    check(summary is not None and summary["cnp_sent"] == 3, "three CNPs sent by the notification point",
          summary and summary["cnp_sent"])
    check(len(cnps) == 3, "three CNPs on the fabric", len(cnps))
    for (name, tags), p in zip(TAGS.items(), cnps):
        check(tags_of(p) == [vid for _, vid in tags], "(%s) the CNP carries the marked frame's tags" % name,
              tags_of(p))
        check(BTH in p and p[BTH].opcode == 0x81 and p[BTH].becn == 1 and p[BTH].dqpn == 8193,
              "(%s) BTH: CNP, BECN, DestQP 8193 (the sender's pqpn)" % name, BTH in p and p[BTH].summary())
        check(IP in p and (p[IP].src, p[IP].dst) == ("10.0.0.1", "10.0.0.2") and p[UDP].dport == 4791,
              "(%s) from this host's uplink to the sender's host" % name, IP in p and p[IP].summary())
        check(icrc_scapy(bytes(p)) == icrc_found(bytes(p)), "(%s) ICRC valid (scapy)" % name)
    deferred(build, work, doc)
    policies(build, work, doc)
    return check.finish(work, False)


def policies(build, work, doc):
    doc = json.loads(json.dumps(doc))
    doc["dcqcn"]["params"] = {"min_time_between_cnps": 0}
    doc["ports"][0]["vlan"] = {"mode": "untagged"}
    doc["tenants"][0]["vlan"] = {"mode": "vni"}
    rc, summary, err, cnps = replay(build, work, "policy", doc, [
        marked([(0x8100, 100)], 300), marked([(0x8100, 0)], 310, dqpn=4098), marked([(0x8100, 101)], 320)])
    check(rc == 0 and summary is not None, "(policy) the switch runs and exits with a summary", err[-400:])
    if summary is None:
        return
    check(summary["cnp_sent"] == 2 and summary["drops"]["vlan_mismatch"] == 1,
          "(policy) two CNPs; the frame on another VID dropped as vlan_mismatch",
          (summary["cnp_sent"], summary["drops"]["vlan_mismatch"]))
    prio = doc["dcqcn"].get("params", {}).get("cnp_802p_prio", 6)
    check(len(cnps) == 2, "(policy) two CNPs on the fabric", len(cnps))
    for (name, tags, dqpn), p in zip((("blue", [100], 8193), ("red", [], 8194)), cnps):
        check(tags_of(p) == tags, "(policy, %s) the CNP's tags: the tenant's on the fabric" % name, tags_of(p))
        if tags:
            check(p[Dot1Q].prio == prio, "(policy, %s) the tag's priority is cnp_802p_prio" % name, p[Dot1Q].prio)
        check(BTH in p and p[BTH].opcode == 0x81 and p[BTH].dqpn == dqpn and
              icrc_scapy(bytes(p)) == icrc_found(bytes(p)),
              "(policy, %s) a CNP to the sender's pqpn %d, ICRC valid (scapy)" % (name, dqpn),
              BTH in p and p[BTH].summary())


def deferred(build, work, doc):
    doc = json.loads(json.dumps(doc))
    doc["dcqcn"]["params"] = {"min_time_between_cnps": 1000000, "cnp_mode": "defer"}
    cfg = os.path.join(work, "defer.json")
    json.dump(doc, open(cfg, "w"))
    inp = os.path.join(work, "defer.in.pcap")
    wrpcap(inp, [marked([], 200), marked([], 201)])
    empty = os.path.join(work, "empty.pcap")
    wrpcap(empty, [])
    out = os.path.join(work, "defer.out.pcap")
    prefix = "cnp-defer-%d" % os.getpid()
    vdevs = ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, out),
             "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (empty, os.path.join(work, "b2.pcap")),
             "net_pcap2,rx_pcap=%s,tx_pcap=%s" % (empty, os.path.join(work, "r2.pcap"))]
    proc = start_switch(build, prefix, vdevs, cfg, "0", ["--exit-when-idle", "3000"])
    ok = wait_socket(prefix, proc)
    check(ok, "(defer) the switch answers telemetry")
    if ok:
        # The frames arrive once the ports run, a moment after telemetry answers.
        end, st = time.time() + 5, telemetry(prefix, "/roce/stats")
        while st["cnp_sent"] == 0 and time.time() < end:
            time.sleep(0.02)
            st = telemetry(prefix, "/roce/stats")
        check(st["cnp_sent"] == 1, "(defer) the first CE frame's CNP at once, the second deferred", st["cnp_sent"])
        r = telemetry(prefix, "/roce/reload")
        check(r.get("result") == "applied" and r.get("connections_kept", 0) >= 1,
              "(defer) a reload within the window keeps the connection", r)
        time.sleep(1.3)
        st = telemetry(prefix, "/roce/stats")
        check(st["cnp_sent"] == 2, "(defer) the deferred CNP is sent at the window's end, after the reload",
              st["cnp_sent"])
    proc.wait(timeout=60)
    rc, summary, err = stop_switch(proc, prefix)
    cnps = [Ether(bytes(f)) for f in rdpcap(out)] if os.path.exists(out) else []
    check(len(cnps) == 2 and all(BTH in p and p[BTH].opcode == 0x81 and p[BTH].dqpn == 8193 and
                                 p[IP].dst == "10.0.0.2" and icrc_scapy(bytes(p)) == icrc_found(bytes(p))
                                 for p in cnps),
          "(defer) both CNPs on the fabric, to the sender's pqpn 8193 at 10.0.0.2, ICRC valid",
          [p.summary() for p in cnps])


if __name__ == "__main__":
    sys.exit(main())
