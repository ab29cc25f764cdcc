#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Three switches, three VM namespaces, one fabric bridge and a 3-member etcd cluster.

The topology is drawn in tests/cluster/hosts.py: switches A, B and C
(10.0.0.1/2/3) on net_af_packet over veths, their uplinks joined by the
bridge h3br, each tenant port toward a namespace h3vmX where a raw socket
plays blue's VM (192.168.1.10/20/30). Each host's local file holds its ports,
its own IP, its neighbors and the tenant its port names; endpoints and QPs come
from etcd (members on 127.0.0.1:23810/23812/23814, peers one above, other
client ports 23816-23818; data in a temporary directory). Steps:

1. QP pairs A17 <-> B33 and B34 <-> C49 put without pqpn: each owner allocates
   one (written back to etcd); frames both ways reach the peer VM, on the fabric
   with the owner's host IPs and the peer's allocated pqpn, with a valid ICRC
   (tests/gen/roce_layers' zlib ICRC and scapy's) and decoded by tshark;
2. the etcd member in use is killed: nothing is rejected, forwarding goes on and
   a new pair A18 <-> C50 put through a surviving member forwards;
3. bad records (not JSON, an unknown tenant, a pqpn already used on host A, a
   value that is not the record of its key) are rejected and counted by every
   switch, with the last error named, and disturb nothing;
4. B33 deleted: once A's and B's telemetry show it, nothing is forwarded under
   the old mapping either way, neither from the VMs nor from the fabric (a frame
   to A17's old pqpn injected on the bridge), and the drops are named;
5. all of etcd stopped: every switch says disconnected and B <-> C forwards on;
6. etcd back on other client ports, the switches cannot see it: B34 <-> C49
   deleted, B33 put back, a new pair A19 <-> C51 without pqpn, a compaction;
   etcd back on the switches' ports: they read the prefix again and hold exactly
   that (A17 <-> B33 and A19 <-> C51 forward, B <-> C does not);
7. each switch exits cleanly, drops only under mapping-not-in-force reasons, its
   mbuf pool back at its baseline.

Usage: tests/cluster/test_hosts.py BUILD_DIR [--keep]; root; about a minute.
Final line: "N passed, M failed".
"""
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hosts as h  # noqa: E402
from roce_checks import Checks  # noqa: E402
from roce_layers import icrc_found, icrc_scapy, icrc_zlib  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402

ETCD_BASE = 23810
check = Checks()


def pqpn(etcd, name, vqpn, seconds=5.0):
    r = h.until(lambda: (etcd.get(h.qp_key(name, vqpn)) or {}).get("pqpn"), seconds, 0.02)
    return r


def exchange(hs, pairs, psn, rounds=3):
    """Pair j = (src, dst, dvqpn) of @pairs: @rounds frames from src's VM to dst's VM's QP dvqpn,
    PSNs from @psn + 10 j; the frames that arrived anywhere within two seconds."""
    hs.drain()
    for k in range(rounds):
        for j, (src, dst, dv) in enumerate(pairs):
            hs.send(src, h.vm_frame(src, dst, dv, psn + 10 * j + k))
        time.sleep(0.01)
    want = len(pairs) * rounds * 2
    return hs.collect(2.0, done=lambda g: len(g) >= want)


def arrived(got, where, dqpn, psn0, rounds=3):
    return [d for w, _, d in got if w == where and h.roce(d) and h.roce(d)[1] == dqpn and
            psn0 <= h.roce(d)[2] < psn0 + rounds]


def check_fabric(frames, src, dst, dpqpn, what):
    """Frames sent by @src's switch toward @dst's host: addresses, DestQP, ICRC (two ways)."""
    ok = bool(frames)
    for d in frames:
        p = Ether(d)
        ok &= (p.src == h.HOSTS[src][1] and p.dst == h.HOSTS[dst][1] and p["IP"].src == h.HOSTS[src][0] and
               p["IP"].dst == h.HOSTS[dst][0] and h.roce(d)[1] == dpqpn)
        ok &= icrc_found(d) == icrc_zlib(d) == icrc_scapy(d)
    check(ok, "%s: on the fabric from %s to %s's host, DestQP %s, ICRC valid (zlib, scapy)" % (what, src, dst, dpqpn),
          [(Ether(d).summary(), h.roce(d), hex(icrc_found(d)), hex(icrc_zlib(d))) for d in frames[:2]])


def check_vm(frames, src, dst, dvqpn, what):
    ok = bool(frames)
    for d in frames:
        p = Ether(d)
        ok &= (p.src == h.HOSTS[dst][2] and p.dst == h.HOSTS[dst][3] and p["IP"].src == h.HOSTS[src][4] and
               p["IP"].dst == h.HOSTS[dst][4] and h.roce(d)[1] == dvqpn and icrc_found(d) == icrc_zlib(d))
    check(ok, "%s: %s's VM receives it as from %s's vip to QP %d, ICRC valid" % (what, dst, src, dvqpn),
          [Ether(d).summary() for d in frames[:2]])


def tshark_destqps(work, frames):
    path = os.path.join(work, "fabric.pcap")
    wrpcap(path, [Ether(d) for d in frames])
    r = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "ip.src", "-e", "ip.dst", "-e",
                        "infiniband.bth.destqp"], capture_output=True, text=True, timeout=60)
    return {tuple(f[:2] + [int(f[2], 16)]) for f in (line.split("\t") for line in r.stdout.splitlines()) if f[0]}


def traffic_ok(hs, etcd, conns, psn, work=None, what=""):
    """@conns: [(x, xv, y, yv)]: frames both ways of each; checks on the fabric and at the VMs."""
    pairs, flows = [], []
    for x, xv, y, yv in conns:
        pairs += [(x, y, yv), (y, x, xv)]
        flows += [(x, xv, y, yv), (y, yv, x, xv)]
    got = exchange(hs, pairs, psn)
    fabric = []
    for j, (s, sv, d, dv) in enumerate(flows):
        dp = pqpn(etcd, d, dv)
        f = arrived(got, "fab" + s, dp, psn + 10 * j)
        fabric += f
        check_fabric(f, s, d, dp, "%s%s%d -> %s%d" % (what, s, sv, d, dv))
        check_vm(arrived(got, "vm" + d, dv, psn + 10 * j), s, d, dv, "%s%s%d -> %s%d" % (what, s, sv, d, dv))
    if work:
        want = {(h.HOSTS[s][0], h.HOSTS[d][0], pqpn(etcd, d, dv))
                for x, xv, y, yv in conns for s, d, dv in ((x, y, yv), (y, x, xv))}
        got_t = tshark_destqps(work, fabric)
        check(got_t == want, "tshark decodes the fabric frames with those host IPs and DestQPs", (got_t, want))
    return got


def main():
    build = os.path.abspath(sys.argv[1])
    keep = "--keep" in sys.argv
    # A SIGTERM (a timeout) still removes the namespaces, veths, bridge and processes (finally).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = tempfile.mkdtemp(prefix="h3-hosts-")
    etcd = h.Etcd(work, ETCD_BASE, 3, "h3")
    hs = h.Hosts(build, work, "h3")
    results = {}
    try:
        hs.setup()
        check(etcd.start_all(), "a 3-member etcd cluster is healthy")
        for n in h.HOSTS:
            etcd.put("endpoints/blue/" + h.HOSTS[n][4], h.endpoint(n))
        if check(hs.start(etcd.urls()), "three switches answer telemetry"):
            steps(hs, etcd, work)
    except Exception:  # noqa: BLE001 - counted; the topology is still removed below
        traceback.print_exc()
        check(False, "the steps ran to their end")
    finally:
        results = hs.close()
        etcd.stop_all()
        if not keep:
            subprocess.run(["rm", "-rf", work])
    for n, (rc, summary, err) in sorted(results.items()):
        check(rc == 0, "switch %s exits cleanly" % n, err[-400:])
        if summary:
            drops = {k: v for k, v in summary["drops"].items() if v}
            # no_connection: no mapping in force; not_our_host: the bridge floods a frame to every
            # host until it has learnt the destination MAC; not_ip, not_udp: frames this test never
            # sends (every frame it makes is UDP 4791 over IPv4), so the kernel's own on a veth.
            if drops.get("not_ip") or drops.get("not_udp"):
                print("switch %s: foreign frames dropped as not_ip/not_udp: %s" % (n, drops))
            check(set(drops) <= {"no_connection", "not_our_host", "not_ip", "not_udp"},
                  "switch %s drops only for mappings not in force" % n, drops)
            m = summary["mbufs"]
            check(m["in_use_end"] == m["in_use_start"] and m["in_use_after_close"] == 0,
                  "switch %s: mbuf pool back to its baseline" % n, m)
    print("%d passed, %d failed" % (check.passed, check.failed))
    sys.exit(1 if check.failed else 0)


def steps(hs, etcd, work):
    """Steps 1 to 6 of the module's text."""
    ok = h.until(lambda: all(hs.cluster(n)["etcd"] == "connected" and hs.cluster(n)["records_applied"] >= 3
                             for n in hs.names), 10)
    check(ok, "each switch follows etcd and holds the three endpoints",
          {n: hs.cluster(n) for n in hs.names})

    # 1. Two pairs without pqpn: each owner allocates.
    t0 = time.time()
    etcd.put_many({h.qp_key("A", 17): h.qp("A", 17, "B", 33), h.qp_key("B", 33): h.qp("B", 33, "A", 17),
                   h.qp_key("B", 34): h.qp("B", 34, "C", 49), h.qp_key("C", 49): h.qp("C", 49, "B", 34)})
    p = {(n, v): pqpn(etcd, n, v) for n, v in (("A", 17), ("B", 33), ("B", 34), ("C", 49))}
    check(all(p.values()) and len({(h.HOSTS[n][0], v) for (n, _), v in p.items()}) == 4,
          "each QP got a pqpn from its owner's switch, written back to etcd", p)
    alloc = {n: hs.cluster(n)["pqpn_allocated"] for n in hs.names}
    check(alloc == {"A": 1, "B": 2, "C": 1}, "each switch allocated its own QPs' pqpns", alloc)
    both = h.until(lambda: all(hs.conns(n).get(v, {}).get("remote_pqpn") == p[o]
                               for n, v, o in (("A", 17, ("B", 33)), ("B", 33, ("A", 17)),
                                               ("B", 34, ("C", 49)), ("C", 49, ("B", 34)))), 5, 0.005)
    check(both, "each side's connection names the peer's allocated pqpn (%.0f ms after the put)" %
          (1e3 * (time.time() - t0)), {n: hs.conns(n) for n in hs.names})
    # Once both sides hold the pairs: a half that waited for its peer's pqpn was pending, not bad.
    rej = {n: hs.cluster(n)["records_rejected"] for n in hs.names}
    check(rej == {"A": 0, "B": 0, "C": 0}, "nothing counted as rejected while the owners allocated", rej)
    traffic_ok(hs, etcd, [("A", 17, "B", 33), ("B", 34, "C", 49)], 100, work)

    # 2. The member in use killed.
    used = hs.cluster("A")["member"]
    victim = next((i for i in range(3) if str(etcd.client(i)) in used), 0)
    rej0 = {n: hs.cluster(n)["records_rejected"] for n in hs.names}
    etcd.stop(victim, signal.SIGKILL)
    traffic_ok(hs, etcd, [("A", 17, "B", 33), ("B", 34, "C", 49)], 200, what="member %d killed: " % victim)
    ok = h.until(lambda: all(hs.cluster(n)["etcd"] == "connected" for n in hs.names), 10)
    rej = {n: hs.cluster(n)["records_rejected"] for n in hs.names}
    check(ok and rej == rej0, "the kill: nothing rejected, every switch connected to another member",
          {n: hs.cluster(n) for n in hs.names})
    etcd.put_many({h.qp_key("A", 18): h.qp("A", 18, "C", 50), h.qp_key("C", 50): h.qp("C", 50, "A", 18)})
    ok = h.until(lambda: hs.conns("A").get(18, {}).get("remote_pqpn") == pqpn(etcd, "C", 50) and
                 hs.conns("C").get(50, {}).get("remote_pqpn") == pqpn(etcd, "A", 18), 10, 0.02)
    check(ok, "member %d killed: a new pair A18 <-> C50 is allocated and applied on both hosts" % victim)
    traffic_ok(hs, etcd, [("A", 18, "C", 50)], 300, what="after the kill: ")
    rej = {n: hs.cluster(n)["records_rejected"] for n in hs.names}
    etcd.start(victim)
    check(etcd.healthy(), "the killed member rejoins")

    # 3. Bad records.
    etcd.put(h.qp_key("B", 99), "not json")
    etcd.put("qps/green/192.168.1.20/98", dict(h.qp("B", 98, "A", 97, 9000), tenant="green"))
    etcd.put(h.qp_key("A", 60), {"tenant": "blue", "vip": h.HOSTS["A"][4], "vqpn": 60, "type": "ud",
                                 "pqpn": p["A", 17]})
    etcd.put(h.qp_key("A", 61), {"tenant": "blue", "vip": h.HOSTS["A"][4], "vqpn": 62, "pqpn": 30000,
                                 "type": "ud"})
    ok = h.until(lambda: all(hs.cluster(n)["records_rejected"] >= rej[n] + 4 for n in hs.names), 10)
    cl = {n: hs.cluster(n) for n in hs.names}
    check(ok and all(cl[n]["records_rejected"] == rej[n] + 4 for n in hs.names),
          "every switch rejects and counts the four bad records", cl)
    # The records may come in one watch message and be refused together: the last error is one of them.
    bad = ["/roce/" + k for k in (h.qp_key("B", 99), "qps/green/192.168.1.20/98", h.qp_key("A", 60), h.qp_key("A", 61))]
    check(all(any(cl[n]["last_error"].startswith(k + ":") for k in bad) for n in hs.names),
          "the last error names the key of a bad record", {n: cl[n]["last_error"] for n in hs.names})
    traffic_ok(hs, etcd, [("A", 17, "B", 33), ("B", 34, "C", 49), ("A", 18, "C", 50)], 400,
               what="bad records: ")
    for k in (h.qp_key("B", 99), "qps/green/192.168.1.20/98", h.qp_key("A", 60), h.qp_key("A", 61)):
        etcd.delete(k)

    # 4. B33 deleted: A17 <-> B33 stops on both hosts.
    d0 = {n: hs.drops(n)["no_connection"] for n in ("A", "B")}
    etcd.delete(h.qp_key("B", 33))
    gone = h.until(lambda: 17 not in hs.conns("A") and 33 not in hs.conns("B"), 5, 0.002)
    check(gone, "A and B show the delete: neither holds A17 <-> B33")
    hs.drain()
    for k in range(3):
        hs.send("A", h.vm_frame("A", "B", 33, 500 + k))
        hs.send("B", h.vm_frame("B", "A", 17, 500 + k))
        # The fabric's own frame to A17's old pqpn, from B's host.
        hs.inj.send(h.fabric_frame("B", "A", p["A", 17], 500 + k))
    hs.send("B", h.vm_frame("B", "C", 49, 510))
    got = hs.collect(1.0)
    stale = [(w, h.roce(d)) for w, _, d in got if h.roce(d) and 500 <= h.roce(d)[2] < 503]
    check(not stale, "nothing forwarded under the deleted mapping, from the VMs or the fabric", stale)
    check(arrived(got, "vmC", 49, 510, 1), "B34 -> C49 forwards meanwhile")
    d1 = {n: hs.drops(n)["no_connection"] for n in ("A", "B")}
    check(d1["A"] >= d0["A"] + 6 and d1["B"] >= d0["B"] + 3,
          "the stale frames are dropped as no_connection (A: 3 from its VM, 3 from the fabric; B: 3)",
          (d0, d1))

    # 5. All of etcd stopped.
    etcd.stop_all()
    ok = h.until(lambda: all(hs.cluster(n)["etcd"] == "disconnected" for n in hs.names), 10)
    check(ok, "every switch says disconnected", {n: hs.cluster(n) for n in hs.names})
    traffic_ok(hs, etcd_cached(p), [("B", 34, "C", 49)], 600, what="etcd away: ")

    # 6. Changes and a compaction made while away.
    check(etcd.start_all(alt=True), "etcd back on the other client ports")
    etcd.delete(h.qp_key("B", 34), alt=True)
    etcd.delete(h.qp_key("C", 49), alt=True)
    etcd.put(h.qp_key("B", 33), h.qp("B", 33, "A", 17, p["B", 33]), alt=True)
    etcd.put_many({h.qp_key("A", 19): h.qp("A", 19, "C", 51), h.qp_key("C", 51): h.qp("C", 51, "A", 19)},
                  alt=True)
    etcd.compact(alt=True)
    etcd.stop_all()
    check(etcd.start_all(), "etcd back on the switches' ports")
    ok = h.until(lambda: all(hs.cluster(n)["etcd"] == "connected" and hs.cluster(n)["resyncs"] >= 2
                             for n in hs.names), 15)
    check(ok, "every switch reconnects and reads the prefix again", {n: hs.cluster(n) for n in hs.names})
    want = {"A": [17, 18, 19], "B": [33], "C": [50, 51]}
    ok = h.until(lambda: all(sorted(hs.conns(n)) == want[n] for n in hs.names), 10, 0.05)
    check(ok, "after the resync each switch holds exactly etcd's connections",
          {n: sorted(hs.conns(n)) for n in hs.names})
    traffic_ok(hs, etcd, [("A", 17, "B", 33), ("A", 19, "C", 51)], 700, work, what="after the resync: ")
    got = exchange(hs, [("B", "C", 49), ("C", "B", 34)], 800)
    check(not [1 for w, _, d in got if h.roce(d) and 800 <= h.roce(d)[2] < 803],
          "B <-> C, deleted while away, forwards no more")


class etcd_cached:
    """The pqpns learned while etcd was up, for the checks made while it is away."""

    def __init__(self, p):
        self.p = p

    def get(self, key):
        for (n, v), pq in self.p.items():
            if h.qp_key(n, v) == key:
                return {"pqpn": pq}
        return None


if __name__ == "__main__":
    main()
