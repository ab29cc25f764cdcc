#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Learned connections across two switches: no QP records at all, etcd resolves them.

The topology of tests/cluster/hosts.py with two hosts: switches A and B
(10.0.0.1/2) on net_af_packet over veths joined by the bridge l2br, blue's VMs
192.168.1.10 and .20 as raw sockets in the namespaces l2vmA and l2vmB, one etcd
member on loopback (client port 23850). blue learns its QPs ("qp_learning",
"qp_idle_s": 3); DCQCN is on; etcd holds its two endpoints and nothing else.

1. A's VM sends 20 RC SENDs to (.20, QP 33) at once: A holds them, writes the
   half record qps/blue/192.168.1.20/33 into etcd without a pqpn on its lease,
   B allocates one and writes it back, A forwards: all 20 reach B's VM in order,
   renamed back (DestQP 33, source .10), on the fabric with the host IPs and B's
   pqpn, the ICRC valid (zlib and scapy);
2. B's VM answers to (.10, QP 17): B learns the other half the same way, and
   the frames reach A's VM in order; then B's VM acknowledges A's SENDs (PSN
   19) to QP 17: the PSNs tell each switch that the two halves are one
   connection, without RDMA-CM, and both hold it whole;
3. RDMA-CM laid out as IBTA 1.5 chapter 12 says: REQ, REP and RTU between
   the VMs' QP1s as UD SENDs with the GSI Q_Key: A learns the QP1 records of
   both ends (in etcd, each pqpn allocated by its owner), the MADs arrive
   byte-identical at the other VM from the right vip, with DestQP 1 and
   source QP 1, tshark decodes the forwarded REQ's Local QPN and Service ID
   as sent; the REQ and REP teach each switch the half its VM will send on,
   so the first WRITE each way is not held; with both QPNs known each switch
   writes its record again naming its VM's QPN, and the two records make the
   connection whole on both hosts: a CE mark on it gets B's CNP, which A's
   reaction point takes; a MAD of another class to QP1 is
   dropped (`gsi`) and counted;
   then a DREQ and a DREP with a wrong Communication ID are forwarded but
   remove nothing (`cm_unmatched` on both switches); a DREQ alone removes
   nothing; its DREP removes both halves, on both hosts and in etcd
   (`cm_removed`); the next data frame learns the QP again; a REJ of a new
   REQ removes the half that REQ installed at B;
4. etcd away: the connection in force (to (.20, 34)) keeps forwarding; a new
   destination is dropped as `unresolved` once the hold time is over; etcd back;
5. idle: after qp_idle_s the learners delete their records, and both switches
   drop the connections;
6. A killed with SIGKILL after learning a new connection and started again at
   once: A's lease is claimed under learn-leases/10.0.0.1 (on the lease
   itself); the new A revokes it at start, so the earlier record is gone from
   etcd within 2 s of the restart (not after the lease's 10 s) and B drops the
   connection built on it; A counts leases_revoked; the next frame learns the
   connection again on A's new lease, and it is delivered;
7. A killed with SIGKILL and not started again: its lease expires, etcd
   deletes the record, and B drops the connection;
8. another switch of A's host IP, as etcdctl plays it: A started again learns a
   connection (its claim on its lease), then its lease is revoked and the host
   claimed on another lease; A, asking for a new lease for its next
   destination, finds the other claim and writes nothing (`etcd_failed`, the
   conflict in /roce/cluster's last_error): one writer per host IP.

Usage: tests/learn/test_learn_hosts.py BUILD_DIR [--keep] [--etcd-port N] [--tag T]; root; about 65 s.
--etcd-port: the etcd member's client port (N+1 its peer port; default 23850); --tag: the prefix of
the bridge, veth, netns and DPDK file-prefix names (default l2).
Final line: "N passed, M failed".
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "cluster"))
import hosts as h  # noqa: E402
from roce_checks import Checks  # noqa: E402
from roce_layers import icrc_found, icrc_scapy, icrc_zlib  # noqa: E402
from scapy.contrib.roce import AETH, BTH  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
import test_cm as cm  # noqa: E402  - the MADs of IBTA 1.5 chapter 12, as the CM oracle builds them

ETCD_BASE = 23850
check = Checks()
VA, VB = h.HOSTS["A"][4], h.HOSTS["B"][4]


def at(got, where):
    return [(t, d) for w, t, d in got if w == where and h.roce(d)]


def lease_of(etcd, key):
    r = etcd.gateway("kv/range", {"key": h.b64("/roce/" + key)})
    kvs = r.get("kvs") or []
    return int(kvs[0].get("lease", 0)) if kvs else None


def n_conns(hs, n):
    c = hs.tel(n, "/roce/connections,blue") or {}
    return len([v for v in c.values() if isinstance(v, dict)])


def gsi(frm, to, payload, psn):
    """A UD SEND Only from host @frm's VM to the QP1 of host @to's VM."""
    f = cm.frame(h.HOSTS[frm][4], h.HOSTS[to][4], h.HOSTS[frm][3], h.HOSTS[frm][2], psn, payload)
    return f


def cm_step(etcd, hs):
    # A's QP 18 and B's QP 34: QPNs no data frame has used yet.
    req = cm.mad(cm.CM_CLASS, cm.ATTR["REQ"], 0x1001, cm.req(0x11, 18, 100, VA, VB))
    rep = cm.mad(cm.CM_CLASS, cm.ATTR["REP"], 0x1001, cm.rep(0x22, 0x11, 34, 200))
    rtu = cm.mad(cm.CM_CLASS, cm.ATTR["RTU"], 0x1001, bytes(cm.two_ids(0x11, 0x22, 232)))
    hs.drain()
    delivered = []
    for i, (frm, to, m, name) in enumerate((("A", "B", req, "REQ"), ("B", "A", rep, "REP"), ("A", "B", rtu, "RTU"))):
        t0 = time.time()
        hs.send(frm, gsi(frm, to, m, i))
        got = [d for w, _, d in hs.collect(5, lambda g: any(w == "vm" + to for w, _, _ in g)) if w == "vm" + to]
        if got:
            print("RDMA-CM %s delivered after %.1f ms" % (name, (time.time() - t0) * 1e3))
        delivered += got[:1]
        want = (1, cm.GSI_QKEY, 1, socket.inet_aton(h.HOSTS[frm][4]), m)
        if not check(len(got) == 1 and cm.delivered(got[0]) == want,
                     "RDMA-CM %s from %s's VM reaches %s's byte-identical, to QP1 from QP1 with the GSI Q_Key, "
                     "from its vip" % (name, frm, to), [cm.delivered(d)[:4] for d in got]):
            for n in "AB":
                print(n, "learn:", hs.tel(n, "/roce/learn"), "drops:",
                      {k: v for k, v in (hs.drops(n) or {}).items() if v}, "cluster:", hs.cluster(n))
    # A's VM sends at once, as an application does after the RTU: A may hold the frame until its record
    # of (vB, 34) is in force, but B applied that record before it wrote its pqpn back (a learning
    # tenant's end, like a half), so the frame is not lost at B.
    hs.drain()
    hs.send("A", h.vm_frame("A", "B", 34, 40))
    got = hs.collect(3, lambda g: len(at(g, "vmB")) >= 1)
    check([h.roce(d)[1:] for _, d in at(got, "vmB")] == [(34, 40)],
          "a frame sent right after the RTU reaches B's VM", (hs.drops("A"), hs.drops("B")))
    # The REQ taught B (vA, 18) and the REP taught A (vB, 34): the first WRITEs do not wait. Checked at
    # once, before the slower checks below: the learned QPs go after qp_idle_s (3 s) without a frame.
    check(h.until(lambda: out_to(hs, "A", 34) and out_to(hs, "B", 18), 3, 0.01),
          "after the REP, A holds its half to (vB, 34) and B its half to (vA, 18), before any data frame",
          ({n: conns(hs, n) for n in "AB"}, {n: hs.tel(n, "/roce/learn") for n in "AB"}))
    # Both QPNs are known: each switch writes its record naming its source's QPN, and the two make a
    # connection whole on both hosts (the reaction point, the switch's CNPs, Estats pairs).
    check(h.until(lambda: whole(hs, "A", 18, 34) and whole(hs, "B", 34, 18), 2, 0.01),
          "the REQ and REP pair the halves: A holds (vA 18, vB 34) and B (vB 34, vA 18) as whole connections")
    held = [(hs.tel(n, "/roce/learn") or {}).get("frames_held_total") for n in "AB"]
    hs.drain()
    hs.send("A", h.vm_frame("A", "B", 34, 0))
    hs.send("B", h.vm_frame("B", "A", 18, 0))
    got = hs.collect(3, lambda g: len([1 for w, _, d in g if w in ("vmA", "vmB") and h.roce(d)]) >= 2)
    check(sorted((w, h.roce(d)[1]) for w, _, d in got if w in ("vmA", "vmB") and h.roce(d)) ==
          [("vmA", 18), ("vmB", 34)] and
          [(hs.tel(n, "/roce/learn") or {}).get("frames_held_total") for n in "AB"] == held,
          "the first data frame each way arrives without being held")
    # The pair knows the sender's pqpn: a CE-marked frame from A's VM makes B's notification point send
    # a CNP to it, which A's reaction point takes (a half has neither).
    before = [cc_of(hs, n) for n in "AB"]
    hs.drain()
    hs.send("A", h.vm_frame("A", "B", 34, 50, tos=3))
    check(h.until(lambda: cc_of(hs, "B")["np_cnp_sent"] == before[1]["np_cnp_sent"] + 1 and
                  cc_of(hs, "A")["rp_cnp_handled"] == before[0]["rp_cnp_handled"] + 1, 3, 0.02),
          "a CE mark on the pair: B's notification point sends a CNP, A's reaction point takes it",
          (before, [cc_of(hs, n) for n in "AB"]))
    rec_a, rec_b = etcd.get("qps/blue/%s/34" % VB) or {}, etcd.get("qps/blue/%s/18" % VA) or {}
    check(rec_a.get("peer") == {"vip": VA, "vqpn": 18} and rec_b.get("peer") == {"vip": VB, "vqpn": 34} and
          rec_a.get("pqpn") and rec_b.get("pqpn") and lease_of(etcd, "qps/blue/%s/34" % VB) and
          lease_of(etcd, "qps/blue/%s/18" % VA),
          "etcd's two records name each other, keep their pqpns and stay on their writers' leases", (rec_a, rec_b))
    check(all(learn_of(hs, "paired")[n] >= 1 for n in "AB"), "each switch counts its record paired",
          learn_of(hs, "paired"))
    check(len(delivered) == 3 and all(icrc_found(d) == icrc_zlib(d) == icrc_scapy(d) for d in delivered),
          "the forwarded MADs' ICRCs are valid (zlib and scapy)")
    for n in ("A", "B"):
        rec = etcd.get("qps/blue/%s/1" % h.HOSTS[n][4]) or {}
        check(rec.get("type") == "ud" and rec.get("pqpn"), "etcd holds %s's QP1 record with its owner's pqpn" % n, rec)
    if delivered:
        path = os.path.join(hs.work, "cm-req.pcap")
        wrpcap(path, [Ether(delivered[0])])
        out = subprocess.run(["tshark", "-r", path, "-T", "fields", "-E", "occurrence=f", "-e",
                              "infiniband.cm.req.localqpn", "-e", "infiniband.cm.req.serviceid"],
                             capture_output=True, text=True).stdout.split()
        check(len(out) == 2 and int(out[0], 0) == 18 and int(out[1], 0) == cm.SERVICE_ID,
              "tshark decodes the forwarded REQ's Local QPN and Service ID as sent", out)
    # Another management class to QP1 is not RDMA-CM: dropped and counted.
    before = (hs.tel("A", "/roce/learn") or {}).get("gsi_dropped_class", 0)
    hs.drain()
    hs.send("A", gsi("A", "B", cm.mad(0x04, 0x0010, 0x2002, bytes(16)), 9))
    got = [d for w, _, d in hs.collect(1) if w == "vmB"]
    check(not got and (hs.tel("A", "/roce/learn") or {}).get("gsi_dropped_class", 0) == before + 1,
          "a MAD of class 0x04 to QP1 is dropped and counted", len(got))


def mad_to(hs, frm, to, m, psn, name):
    """Send MAD @m from @frm's VM to @to's QP1; true when it reaches @to's VM byte-identical."""
    hs.drain()
    hs.send(frm, gsi(frm, to, m, psn))
    got = [d for w, _, d in hs.collect(5, lambda g: any(w == "vm" + to for w, _, _ in g)) if w == "vm" + to]
    return check(len(got) == 1 and cm.delivered(got[0])[4] == m, "RDMA-CM %s from %s's VM reaches %s's" % (name, frm, to),
                 len(got))


def conns(hs, n):
    return [c for c in (hs.tel(n, "/roce/connections,blue") or {}).values() if isinstance(c, dict)]


def out_to(hs, n, q):
    """Does switch @n send to the peer's vqpn @q: an outgoing half, or a whole (paired) connection?"""
    return any(c.get("half") in (None, "out") and c.get("remote_vqpn") == q for c in conns(hs, n))


def ack_frame(frm, to, dvqpn, psn):
    """An RC ACKNOWLEDGE from host @frm's VM to @to's VM's QP @dvqpn, answering PSN @psn."""
    return bytes(Ether(src=h.HOSTS[frm][3], dst=h.HOSTS[frm][2]) /
                 IP(src=h.HOSTS[frm][4], dst=h.HOSTS[to][4], flags="DF", ttl=64) /
                 UDP(sport=49152, dport=4791, chksum=0) / BTH(opcode=0x11, dqpn=dvqpn, psn=psn) / AETH(syndrome=0, msn=1))


def cc_of(hs, n):
    """Blue's DCQCN counters on switch @n."""
    return (hs.tel(n, "/roce/dcqcn") or {}).get("blue") or {}


def whole(hs, n, lq, rq):
    """Does switch @n hold the connection (its VM's @lq, the peer's @rq) whole, not as halves?"""
    return any("half" not in c and c.get("local_vqpn") == lq and c.get("remote_vqpn") == rq for c in conns(hs, n))


def learn_of(hs, key):
    return {n: (hs.tel(n, "/roce/learn") or {}).get(key, 0) for n in "AB"}


def touch(hs, sends):
    """A data frame on each of @sends ((from, to, vqpn), ...), delivered: qp_idle_s (3 s) counts anew."""
    hs.drain()
    for i, (frm, to, q) in enumerate(sends):
        hs.send(frm, h.vm_frame(frm, to, q, 100 + i))
    got = hs.collect(3, lambda g: len([1 for w, _, d in g if w in ("vmA", "vmB") and h.roce(d)]) >= len(sends))
    return len([1 for w, _, d in got if w in ("vmA", "vmB") and h.roce(d)]) == len(sends)


def cm_remove_step(etcd, hs):
    """After cm_step: A's half to (vB, 34) and B's half to (vA, 18), comm IDs 0x11 (A) and 0x22 (B)."""
    rec_a, rec_b = "qps/blue/%s/34" % VB, "qps/blue/%s/18" % VA
    # A frame each way first: idle expiry (qp_idle_s 3) must not take them during the slower checks.
    check(touch(hs, (("A", "B", 34), ("B", "A", 18))), "both halves carry a frame")
    check(etcd.get(rec_a) is not None and etcd.get(rec_b) is not None,
          "etcd holds A's record of (vB, 34) and B's of (vA, 18)")
    # A DREQ and a DREP with a wrong Communication ID: forwarded, but they name no connection.
    unmatched, removed = learn_of(hs, "cm_unmatched"), learn_of(hs, "cm_removed")
    mad_to(hs, "A", "B", cm.mad(cm.CM_CLASS, cm.ATTR["DREQ"], 0x1002, cm.dreq(0x11, 0x23, 34)), 20, "DREQ (wrong ID)")
    mad_to(hs, "B", "A", cm.mad(cm.CM_CLASS, cm.ATTR["DREP"], 0x1002, bytes(cm.two_ids(0x23, 0x11, 232))), 21,
           "DREP (wrong ID)")
    check(h.until(lambda: learn_of(hs, "cm_unmatched") == {n: unmatched[n] + 2 for n in "AB"}, 3, 0.05),
          "each switch counts the two as cm_unmatched", (unmatched, learn_of(hs, "cm_unmatched")))
    time.sleep(0.5)
    check(out_to(hs, "A", 34) and out_to(hs, "B", 18) and etcd.get(rec_a) is not None and
          etcd.get(rec_b) is not None and learn_of(hs, "cm_removed") == removed,
          "a DREQ and DREP with wrong IDs remove nothing")
    # The DREQ alone removes nothing; its DREP both halves, on both hosts and in etcd. The halves
    # carry a frame first, so that idle expiry (qp_idle_s 3) cannot take them meanwhile.
    check(touch(hs, (("A", "B", 34), ("B", "A", 18))), "both halves carry a frame")
    mad_to(hs, "A", "B", cm.mad(cm.CM_CLASS, cm.ATTR["DREQ"], 0x1003, cm.dreq(0x11, 0x22, 34)), 22, "DREQ")
    time.sleep(0.3)
    check(out_to(hs, "A", 34) and out_to(hs, "B", 18), "after the DREQ alone both halves stay")
    t0 = time.time()
    mad_to(hs, "B", "A", cm.mad(cm.CM_CLASS, cm.ATTR["DREP"], 0x1003, bytes(cm.two_ids(0x22, 0x11, 232))), 23, "DREP")
    # Within 1.5 s: idle expiry could not take them before 3 s after the frames above.
    check(h.until(lambda: etcd.get(rec_a) is None and etcd.get(rec_b) is None, 1.5, 0.01),
          "after the DREP both records are gone from etcd")
    print("both records gone from etcd %.1f ms after the DREP was sent" % ((time.time() - t0) * 1e3))
    check(h.until(lambda: not out_to(hs, "A", 34) and not out_to(hs, "B", 18), 5, 0.05),
          "and A and B dropped their halves")
    check(learn_of(hs, "cm_removed") == {n: removed[n] + 1 for n in "AB"}, "each switch counts its record cm_removed",
          learn_of(hs, "cm_removed"))
    # The QP used again: its next frame learns it again.
    hs.drain()
    hs.send("A", h.vm_frame("A", "B", 34, 7))
    got = hs.collect(5, lambda g: len(at(g, "vmB")) >= 1)
    check([h.roce(d)[1:] for _, d in at(got, "vmB")] == [(34, 7)] and etcd.get(rec_a) is not None,
          "the next data frame to (vB, 34) is learned again and delivered", [h.roce(d)[1:] for _, d in at(got, "vmB")])
    # A REJ of a REQ: what the REQ installed at B (its half to (vA, 19)) goes.
    rec_r = "qps/blue/%s/19" % VA
    mad_to(hs, "A", "B", cm.mad(cm.CM_CLASS, cm.ATTR["REQ"], 0x1004, cm.req(0x33, 19, 300, VA, VB)), 24, "REQ")
    check(h.until(lambda: out_to(hs, "B", 19) and etcd.get(rec_r) is not None, 5, 0.05),
          "the REQ taught B its half to (vA, 19)")
    check(touch(hs, (("B", "A", 19),)), "B's half to (vA, 19) carries a frame")
    removed = learn_of(hs, "cm_removed")
    mad_to(hs, "B", "A", cm.mad(cm.CM_CLASS, cm.ATTR["REJ"], 0x1004, cm.rej(0x44, 0x33, 28)), 25, "REJ")
    check(h.until(lambda: etcd.get(rec_r) is None and not out_to(hs, "B", 19), 1.5, 0.05),
          "after the REJ B's half and its etcd record are gone")
    check(learn_of(hs, "cm_removed")["B"] == removed["B"] + 1, "B counts it cm_removed")


def learn_one(hs, q, psn):
    """A -> (B, @q): delivered, and B holds the connection."""
    hs.drain()
    hs.send("A", h.vm_frame("A", "B", q, psn))
    got = hs.collect(5, lambda g: len(at(g, "vmB")) >= 1)
    check([h.roce(d)[1:] for _, d in at(got, "vmB")] == [(q, psn)], "A -> (B, %d) learned and delivered" % q,
          [h.roce(d)[1:] for _, d in at(got, "vmB")])
    # By its QP: another learned connection may expire meanwhile (qp_idle_s 3).
    check(h.until(lambda: q in hs.conns("B"), 5, 0.1), "B has the connection", sorted(hs.conns("B")))


def restart_step(etcd, hs):
    """A crash and an immediate restart: the new A revokes the lease its predecessor claimed for
    host 10.0.0.1, so the predecessor's records go at the restart and not at the lease's expiry."""
    rec, claim = "qps/blue/%s/36" % VB, "learn-leases/%s" % h.HOSTS["A"][0]
    learn_one(hs, 36, 0)
    old = lease_of(etcd, rec)
    val = etcd.get(claim) or {}
    check(old and val.get("lease") == old and lease_of(etcd, claim) == old,
          "A's lease is claimed under %s, on the lease itself" % claim, (val, old, lease_of(etcd, claim)))
    os.killpg(hs.sw["A"].pid, signal.SIGKILL)
    hs.sw["A"].wait()
    t_kill = time.time()
    del hs.sw["A"]
    check(etcd.get(rec) is not None, "A killed: its record is still in etcd (its lease lasts 10 s)")
    check(hs.start(etcd.urls(), ["--learn-hold-ms", "1000"], only=("A",)), "A starts again at once")
    t_up = time.time()
    gone = h.until(lambda: etcd.get(rec) is None, 2, 0.01)
    t_gone = time.time()
    check(gone and t_gone - t_kill < 8, "the earlier A's record is gone from etcd within 2 s of the restart, "
          "before its lease could expire", (t_up - t_kill, t_gone - t_kill))
    print("earlier record gone %.0f ms after A answered again (%.0f ms after the kill)" % (
        (t_gone - t_up) * 1e3, (t_gone - t_kill) * 1e3))
    ttl = etcd.ctl("lease", "timetolive", "%x" % (old or 0), "--keys")
    keys = etcd.ctl("get", "--prefix", "/roce/", "--keys-only").split()
    check("already expired" in ttl and "/roce/" + rec not in keys and "/roce/" + claim not in keys,
          "etcdctl: the earlier lease is gone, and with it the record and the claim, seconds before it would "
          "have expired", (ttl.strip(), keys))
    check(h.until(lambda: 36 not in hs.conns("B"), 2, 0.02), "B drops the connection built on it within 2 s",
          sorted(hs.conns("B")))
    check((hs.tel("A", "/roce/learn") or {}).get("leases_revoked") == 1, "the new A counts leases_revoked 1",
          hs.tel("A", "/roce/learn"))
    # Traffic learns the connection again, on the new A's lease, which it claims in turn.
    learn_one(hs, 36, 1)
    new = lease_of(etcd, rec)
    check(new and new != old and (etcd.get(claim) or {}).get("lease") == new,
          "learned again on the new A's lease, which it claims", (old, new, etcd.get(claim)))


def conflict_step(etcd, hs):
    """A second switch of host 10.0.0.1, as etcdctl plays it: it revokes A's lease at its start and
    claims the host on a lease of its own. A must not write under the host then."""
    claim = "learn-leases/%s" % h.HOSTS["A"][0]
    check(hs.start(etcd.urls(), ["--learn-hold-ms", "1000"], only=("A",)), "A starts again")
    # Its endpoints come from etcd, after its earlier claims are looked at: the VM's frames wait for them.
    check(h.until(lambda: hs.cluster("A").get("records_applied", 0) >= 2, 10, 0.05), "A applied the two endpoints")
    learn_one(hs, 38, 0)
    mine = lease_of(etcd, claim)
    out = etcd.ctl("lease", "grant", "30").split()
    other = out[1] if len(out) > 1 and out[0] == "lease" else "0"
    etcd.ctl("lease", "revoke", "%x" % (mine or 0))
    etcd.ctl("put", "--lease=" + other, "/roce/" + claim, json.dumps({"lease": int(other, 16), "node": "other"}))
    lost = (hs.tel("A", "/roce/learn") or {}).get("leases_lost", 0)
    check(h.until(lambda: (hs.tel("A", "/roce/learn") or {}).get("leases_lost", 0) > lost, 6, 0.1),
          "A finds its lease gone at its next keepalive")
    failed = (hs.tel("A", "/roce/learn") or {}).get("etcd_failed", 0)
    hs.drain()
    hs.send("A", h.vm_frame("A", "B", 39, 0))
    got = hs.collect(2, lambda g: len(at(g, "vmB")) >= 1)
    learn = hs.tel("A", "/roce/learn") or {}
    check(not at(got, "vmB") and etcd.get("qps/blue/%s/39" % VB) is None and learn.get("etcd_failed", 0) > failed,
          "the host claimed by another lease: A writes no record and counts the put failed",
          (len(at(got, "vmB")), learn.get("etcd_failed"), failed))
    check("another switch of this host IP" in hs.cluster("A").get("last_error", ""),
          "and says why in /roce/cluster", hs.cluster("A").get("last_error"))
    check(lease_of(etcd, claim) == int(other, 16), "the other switch's claim stays")
    etcd.ctl("lease", "revoke", other)


def steps(etcd, hs):
    check(etcd.start_all(), "etcd is healthy")
    hs.setup()
    etcd.put_many({"endpoints/blue/" + VA: h.endpoint("A"), "endpoints/blue/" + VB: h.endpoint("B")})
    check(hs.start(etcd.urls(), ["--learn-hold-ms", "1000"]), "both switches start")
    check(h.until(lambda: all(hs.cluster(n).get("records_applied", 0) >= 2 for n in "AB"), 10, 0.05),
          "both switches applied the two endpoints")
    hs.drain()

    # 1. A -> (B, 33), nothing configured.
    t0 = time.time()
    for psn in range(20):
        hs.send("A", h.vm_frame("A", "B", 33, psn))
    got = hs.collect(5, lambda g: len(at(g, "vmB")) >= 20)
    vb = at(got, "vmB")
    check([h.roce(d)[1:] for _, d in vb] == [(33, p) for p in range(20)],
          "A -> (B, 33): all 20 SENDs reach B's VM, in order, DestQP 33", [h.roce(d)[1:] for _, d in vb])
    if vb:
        print("first frame of the learned connection at B's VM after %.1f ms" % ((vb[0][0] - t0) * 1e3))
    rec = etcd.get("qps/blue/%s/33" % VB)
    if not rec:
        print("etcd:", etcd.ctl("get", "--prefix", "/roce/"))
        for n in "AB":
            print(n, hs.tel(n, "/roce/learn"), hs.cluster(n), hs.drops(n))
    check(rec is not None and rec.get("peer") == {"vip": VA} and rec.get("pqpn"),
          "etcd holds the half record, its pqpn allocated by B", rec)
    check((lease_of(etcd, "qps/blue/%s/33" % VB) or 0) > 0, "the record is on a lease")
    fab = at(got, "fabA")
    pq = (rec or {}).get("pqpn")
    check(fab and all(h.roce(d)[:2] == ("10.0.0.2", pq) for _, d in fab),
          "on the fabric: to B's host and B's pqpn", [h.roce(d) for _, d in fab][:3])
    check(all(d[26:30] == bytes([192, 168, 1, 10]) for _, d in vb), "delivered as from .10")
    check(vb and all(icrc_found(d) == icrc_zlib(d) == icrc_scapy(d) for _, d in vb + fab),
          "every frame's ICRC is valid (zlib and scapy)")

    # 2. B -> (A, 17): B learns its own half.
    hs.drain()
    for psn in range(10):
        hs.send("B", h.vm_frame("B", "A", 17, psn))
    got = hs.collect(5, lambda g: len(at(g, "vmA")) >= 10)
    va = at(got, "vmA")
    check([h.roce(d)[1:] for _, d in va] == [(17, p) for p in range(10)],
          "B -> (A, 17): all 10 reach A's VM, in order", [h.roce(d)[1:] for _, d in va])
    la, lb = hs.tel("A", "/roce/learn") or {}, hs.tel("B", "/roce/learn") or {}
    check(la.get("learned", 0) >= 1 and la.get("etcd_puts", 0) >= 1 and la.get("unresolved") == 0,
          "A learned through etcd, nothing unresolved", la)
    check(lb.get("learned", 0) >= 1 and lb.get("unresolved") == 0, "B learned through etcd", lb)

    # 2b. No RDMA-CM: B's QP 33 acknowledges A's requests (PSN 0 to 19) to A's QP 17, so the PSNs tell
    # both switches that (vA 17, vB 33) is one connection; each writes its record naming its VM's QPN.
    hs.drain()
    t0 = time.time()
    hs.send("B", ack_frame("B", "A", 17, 19))
    got = hs.collect(3, lambda g: len(at(g, "vmA")) >= 1)
    check([h.roce(d)[1:] for _, d in at(got, "vmA")] == [(17, 19)], "B's ACK reaches A's VM")
    if check(h.until(lambda: whole(hs, "A", 17, 33) and whole(hs, "B", 33, 17), 5, 0.05),
             "the ACK's PSN pairs the halves: A holds (vA 17, vB 33) and B (vB 33, vA 17) whole"):
        print("whole on both hosts %.1f ms after the ACK was sent" % ((time.time() - t0) * 1e3))
    check((etcd.get("qps/blue/%s/33" % VB) or {}).get("peer") == {"vip": VA, "vqpn": 17} and
          (etcd.get("qps/blue/%s/17" % VA) or {}).get("peer") == {"vip": VB, "vqpn": 33},
          "and etcd's two records name each other")

    # 3. RDMA-CM.
    cm_step(etcd, hs)
    cm_remove_step(etcd, hs)

    # 4. etcd away (after the RDMA-CM steps: a first MAD right after etcd's restart may wait for its
    # QP1 records longer than the hold, as a CM's first REQ may, which the CM sends again).
    check(touch(hs, (("A", "B", 34),)), "(vB, 34) carries a frame")
    etcd.stop_all()
    check(h.until(lambda: hs.cluster("A").get("etcd") == "disconnected", 10, 0.1), "A sees etcd away")
    hs.drain()
    for psn in range(20, 25):
        hs.send("A", h.vm_frame("A", "B", 34, psn))
    for psn in range(3):
        hs.send("A", h.vm_frame("A", "B", 35, psn))
    got = hs.collect(3, lambda g: len(at(g, "vmB")) >= 5)
    check([h.roce(d)[1:] for _, d in at(got, "vmB")] == [(34, p) for p in range(20, 25)],
          "etcd away: the learned connection keeps forwarding, the new one does not",
          [h.roce(d)[1:] for _, d in at(got, "vmB")])
    check(h.until(lambda: (hs.drops("A") or {}).get("unresolved", 0) >= 3, 5, 0.1),
          "etcd away: a new destination's frames are dropped as unresolved", hs.drops("A"))
    check(etcd.start_all(), "etcd back")
    check(h.until(lambda: all(hs.cluster(n).get("etcd") == "connected" for n in "AB"), 15, 0.1),
          "both switches follow etcd again")

    # 5. Idle: qp_idle_s 3 (plus the stale records of 35 written while etcd was away).
    check(h.until(lambda: etcd.get("qps/blue/%s/33" % VB) is None and etcd.get("qps/blue/%s/17" % VA) is None,
                  15, 0.2), "idle learned records deleted from etcd")
    check(h.until(lambda: n_conns(hs, "A") == 0 and n_conns(hs, "B") == 0, 5, 0.1),
          "and both switches dropped the connections", (n_conns(hs, "A"), n_conns(hs, "B")))
    check((hs.tel("A", "/roce/learn") or {}).get("expired", 0) >= 1, "A counts them expired")

    # 6. A dies and comes back at once: it revokes its earlier incarnation's lease.
    restart_step(etcd, hs)

    # 7. A dies for good: its lease takes its records.
    learn_one(hs, 37, 0)
    os.killpg(hs.sw["A"].pid, signal.SIGKILL)
    hs.sw["A"].wait()
    del hs.sw["A"]
    check(h.until(lambda: etcd.get("qps/blue/%s/37" % VB) is None, 20, 0.2),
          "A killed: its lease expires and etcd deletes its record")
    check(h.until(lambda: n_conns(hs, "B") == 0, 5, 0.1), "B drops the connection")
    # 8. Another switch claims A's host IP.
    conflict_step(etcd, hs)
    db = hs.drops("B") or {}
    bad = {k: v for k, v in db.items() if v and k not in ("no_connection", "not_our_host")}
    check(not bad, "B dropped nothing but frames not meant for it", bad)


def option(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main():
    build = sys.argv[1]
    keep = "--keep" in sys.argv
    tag = option("--tag", "l2")
    work = tempfile.mkdtemp(prefix="learn-hosts-")
    etcd = h.Etcd(work, int(option("--etcd-port", ETCD_BASE)), 1, tag)
    hs = h.Hosts(build, work, tag, names=("A", "B"), lcores={"A": "0", "B": "1"},
                 tenant={"qp_learning": True, "qp_idle_s": 3}, top={"dcqcn": {"enabled": True, "profile": "nvidia"}})
    try:
        steps(etcd, hs)
    except Exception:
        traceback.print_exc()
        check(False, "the steps ran to the end")
    finally:
        out = hs.close()
        etcd.stop_all()
    for n, (rc, summary, err) in out.items():
        check(rc == 0 and summary is not None, "switch %s exits cleanly" % n, err[-800:])
    return check.finish(work, keep)


if __name__ == "__main__":
    sys.exit(main())
