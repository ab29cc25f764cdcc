#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""RDMA-CM between two VMs of one learning tenant on one switch: set-up, data, and removal.

        netns TAGvm1                      netns TAGvm2
      VM 192.168.1.10                   VM 192.168.1.20
          TAGh1v                            TAGh2v
            |                                 |
          TAGh1 (vm-blue-1) [switch 10.0.0.1] TAGh2 (vm-blue-2)
                            uplink: net_null

The switch runs on net_af_packet over the two veths (the uplink is net_null:
nothing leaves the host), each VM is a raw socket in its namespace, so every
frame is sent after the one before it was delivered, as a real exchange is.
blue learns its QPs ("qp_learning", "qp_idle_s": 30, no etcd): every learned
connection is a hairpin, and this switch writes both halves of each.

1. REQ (.10, QP 18, Communication ID 0x11), REP (.20, QP 34, ID 0x22) and RTU
   between the VMs' QP1s arrive byte-identical at the other VM, to QP1 from QP1
   with the GSI Q_Key, from the sender's vip, the ICRC valid (zlib and scapy);
   the REQ and REP installed the halves .20 -> (.10, 18) and .10 -> (.20, 34)
   (/roce/connections) and, both QPNs known, paired them into two whole
   connections, so SENDs both ways are delivered without being held;
2. a DREQ removes nothing; its DREP removes both halves within 1.5 s
   (/roce/connections, `cm_removed` + 2, `learned_now` - 2), and the MADs arrive
   byte-identical; the next frame to (.20, 34) learns it again;
3. a REJ of a new REQ (.10, QP 19, ID 0x33) by .20 removes the responder-side
   half that REQ installed (.20 -> (.10, 19)), `cm_removed` + 1; the REJ arrives
   byte-identical.

Usage: tests/learn/test_learn_cm_hairpin.py BUILD_DIR [--keep] [--tag T]; root; about 10 s.
--tag: the prefix of the veth, netns and DPDK file-prefix names (default lh).
Final line: "N passed, M failed".
"""
import json
import os
import select
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "cluster"))
import hosts as h  # noqa: E402  - veths, namespaces, raw sockets, frames
from roce_checks import Checks  # noqa: E402
from roce_layers import BTH, icrc_found, icrc_scapy, icrc_zlib  # noqa: E402
from roce_switch import start_switch_ready, stop_switch  # noqa: E402
from roce_telemetry import telemetry  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.packet import Raw  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
import test_cm as cm  # noqa: E402  - the MADs of IBTA 1.5 chapter 12, as the CM oracle builds them

check = Checks()
V1, V2 = "192.168.1.10", "192.168.1.20"
PORT = {1: "02:00:00:00:01:01", 2: "02:00:00:00:01:02"}
VM = {1: "02:00:00:00:aa:10", 2: "02:00:00:00:aa:20"}
VIP = {1: V1, 2: V2}


def config():
    tenant = lambda i: {"name": "vm-blue-%d" % i, "device": "net_af_packet%d" % (i - 1), "role": "tenant",
                        "tenant": "blue", "mac": PORT[i]}
    return {
        "version": 1,
        "ports": [{"name": "fabric0", "device": "net_null0", "role": "uplink", "ip": "10.0.0.1",
                   "mac": "02:00:00:00:00:01", "gateway_mac": "02:00:00:00:00:fe"}, tenant(1), tenant(2)],
        "tenants": [{"name": "blue", "vni": 100, "qp_learning": True, "qp_idle_s": 30}],
        "endpoints": [{"tenant": "blue", "vip": VIP[i], "host": "10.0.0.1", "port": "vm-blue-%d" % i, "mac": VM[i]}
                      for i in (1, 2)],
    }


class Hairpin:
    """Two VMs in namespaces on veths, and the switch between them."""

    def __init__(self, build, work, tag):
        self.build, self.work, self.tag = build, work, tag
        self.prefix = "%s-cm-%d" % (tag, os.getpid())
        self.sw, self.vm, self.links, self.ns = None, {}, [], []

    def setup(self):
        for i in (1, 2):
            t, ns = "%sh%d" % (self.tag, i), "%svm%d" % (self.tag, i)
            h.sh("ip", "link", "add", t, "type", "veth", "peer", "name", t + "v")
            self.links.append(t)
            h.sh("ip", "netns", "add", ns)
            self.ns.append(ns)
            h.sh("ip", "link", "set", t + "v", "netns", ns)
            h.sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % t, check=False)
            h.sh("ip", "link", "set", t, "up")
            h.sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", check=False)
            h.sh("ip", "netns", "exec", ns, "ip", "link", "set", t + "v", "up")
            self.vm[i] = h.in_netns(ns, lambda t=t: h.raw_socket(t + "v"))
        cfg = os.path.join(self.work, "hairpin.json")
        with open(cfg, "w") as f:
            json.dump(config(), f, indent=1)
        self.sw = start_switch_ready(self.build, self.prefix,
                                     ["net_null0,no-rx=1"] +
                                     ["net_af_packet%d,iface=%sh%d" % (i - 1, self.tag, i) for i in (1, 2)],
                                     cfg, "0", [], eal_mem=["--no-huge", "-m", "256"],
                                     logs=os.path.join(self.work, "switch"))
        return self.sw is not None

    def tel(self, cmd):
        return telemetry(self.prefix, cmd) or {}

    def learn(self, key):
        return self.tel("/roce/learn").get(key, 0)

    def halves(self, whole=False):
        """The remote vqpns the VMs send to, sorted: out halves, or connections paired whole (all of them
        whole with @whole)."""
        return sorted(c.get("remote_vqpn") for c in self.tel("/roce/connections,blue").values()
                      if isinstance(c, dict) and c.get("half") in ((None,) if whole else (None, "out")))

    def exchange(self, frm, data, seconds=3):
        """Send @data from VM @frm; the RoCE frames the other VM received meanwhile."""
        to = 3 - frm
        for s in self.vm.values():
            h.read_all(s, "")
        self.vm[frm].send(data)
        got, end = [], time.time() + seconds
        while not got and time.time() < end:
            if select.select([self.vm[to]], [], [], 0.05)[0]:
                got = [d for _, _, d in h.read_all(self.vm[to], "") if h.roce(d)]
        return got

    def close(self):
        out = stop_switch(self.sw, self.prefix) if self.sw else None
        for s in self.vm.values():
            s.close()
        for ns in self.ns:
            h.sh("ip", "netns", "del", ns, check=False)
        for t in self.links:
            h.sh("ip", "link", "del", t, check=False)
        return out


def mad(hp, frm, m, psn, name):
    """MAD @m from VM @frm to the other VM's QP1: arrives once, byte-identical, renamed as the
    hairpin does (QP1 to QP1, the GSI Q_Key, the sender's vip), its ICRC valid."""
    got = hp.exchange(frm, cm.frame(VIP[frm], VIP[3 - frm], VM[frm], PORT[frm], psn, m))
    want = (1, cm.GSI_QKEY, 1, bytes(map(int, VIP[frm].split("."))), m)
    return check(len(got) == 1 and cm.delivered(got[0]) == want and
                 icrc_found(got[0]) == icrc_zlib(got[0]) == icrc_scapy(got[0]),
                 "RDMA-CM %s from .%s arrives once, byte-identical, QP1 to QP1, its ICRC valid" % (
                     name, VIP[frm].split(".")[-1]), [cm.delivered(d)[:4] for d in got])


def data(hp, frm, q, psn):
    """A SEND from VM @frm to the other VM's QP @q: delivered to that QP, in one piece."""
    got = hp.exchange(frm, frame(frm, q, psn))
    return [h.roce(d)[1:] for d in got] == [(q, psn)]


def frame(frm, q, psn):
    """A SEND Only from VM @frm to QP @q of the other VM (scapy's ICRC)."""
    return bytes(Ether(src=VM[frm], dst=PORT[frm]) / IP(src=VIP[frm], dst=VIP[3 - frm], flags="DF", ttl=64) /
                 UDP(sport=49152, dport=4791, chksum=0) / BTH(opcode=h.SEND_ONLY, dqpn=q, psn=psn) /
                 Raw(psn.to_bytes(4, "big") + bytes(28)))


def steps(hp):
    check(hp.setup(), "the switch starts on the two VMs' veths")
    m = lambda attr, tid, body: cm.mad(cm.CM_CLASS, cm.ATTR[attr], tid, body)
    # 1. Set-up: REQ, REP, RTU; then data both ways, not held.
    mad(hp, 1, m("REQ", 0x1001, cm.req(0x11, 18, 100, V1, V2)), 0, "REQ")
    mad(hp, 2, m("REP", 0x1001, cm.rep(0x22, 0x11, 34, 200)), 0, "REP")
    mad(hp, 1, m("RTU", 0x1001, bytes(cm.two_ids(0x11, 0x22, 232))), 1, "RTU")
    check(h.until(lambda: hp.halves() == [18, 34], 3, 0.02),
          "the REQ and REP installed both halves: .20 -> (.10, 18) and .10 -> (.20, 34)", hp.halves())
    check(h.until(lambda: hp.halves(whole=True) == [18, 34], 3, 0.02),
          "and, both QPNs known, paired them: two whole connections, (.10 18, .20 34) and (.20 34, .10 18)",
          hp.halves(whole=True))
    held, now = hp.learn("frames_held_total"), hp.learn("learned_now")
    check(data(hp, 1, 34, 0) and data(hp, 2, 18, 0) and data(hp, 1, 34, 1) and data(hp, 2, 18, 1),
          "SENDs both ways delivered to QPs 34 and 18")
    check(hp.learn("frames_held_total") == held, "none of them was held (the halves were in force)",
          (held, hp.learn("frames_held_total")))
    # 2. Teardown: a DREQ removes nothing, its DREP both halves.
    removed = hp.learn("cm_removed")
    mad(hp, 1, m("DREQ", 0x1002, cm.dreq(0x11, 0x22, 34)), 2, "DREQ")
    time.sleep(0.3)
    check(hp.halves() == [18, 34] and hp.learn("cm_removed") == removed, "after the DREQ alone both halves stay",
          hp.halves())
    t0 = time.time()
    mad(hp, 2, m("DREP", 0x1002, bytes(cm.two_ids(0x22, 0x11, 232))), 1, "DREP")
    check(h.until(lambda: hp.halves() == [], 1.5, 0.01), "after the DREP both halves are gone from "
          "/roce/connections", hp.halves())
    print("both halves gone %.1f ms after the DREP was sent" % ((time.time() - t0) * 1e3))
    # The learner forgets its entries just after their delete is in force: a moment later than the halves go.
    check(h.until(lambda: hp.learn("cm_removed") == removed + 2 and hp.learn("learned_now") == now - 2, 1.5, 0.01),
          "cm_removed counts the two records this switch wrote, learned_now drops by two",
          (removed, now, hp.learn("cm_removed"), hp.learn("learned_now")))
    req = hp.learn("requests")
    check(data(hp, 1, 34, 2) and hp.halves() == [34] and hp.learn("requests") > req,
          "the next frame to (.20, 34) learns it again and is delivered", hp.halves())
    # 3. A REJ of a REQ: the responder-side half that REQ installed goes.
    mad(hp, 1, m("REQ", 0x1003, cm.req(0x33, 19, 300, V1, V2)), 3, "second REQ")
    check(h.until(lambda: 19 in hp.halves(), 3, 0.02), "the REQ installed .20 -> (.10, 19)", hp.halves())
    removed = hp.learn("cm_removed")
    mad(hp, 2, m("REJ", 0x1003, cm.rej(0x44, 0x33, 28)), 2, "REJ")
    check(h.until(lambda: hp.halves() == [34], 1.5, 0.01), "after the REJ the half to (.10, 19) is gone, "
          "(.20, 34) stays", hp.halves())
    check(hp.learn("cm_removed") == removed + 1, "cm_removed counts it", hp.learn("cm_removed"))
    drops = {k: v for k, v in (hp.tel("/roce/drops") or {}).items() if v}
    check(not drops, "the switch dropped nothing", drops)


def main():
    build = sys.argv[1]
    keep = "--keep" in sys.argv
    tag = sys.argv[sys.argv.index("--tag") + 1] if "--tag" in sys.argv else "lh"
    work = tempfile.mkdtemp(prefix="learn-cm-hairpin-")
    hp = Hairpin(build, work, tag)
    out = None
    try:
        steps(hp)
    except Exception:
        traceback.print_exc()
        check(False, "the steps ran to the end")
    finally:
        out = hp.close()
    if out:
        rc, summary, err = out
        check(rc == 0 and summary is not None, "the switch exits cleanly", err[-800:])
    return check.finish(work, keep)


if __name__ == "__main__":
    sys.exit(main())
