# SPDX-License-Identifier: BSD-3-Clause
"""The two-host demo on etcd (run by scripts/run-etcd-demo, as root, with /usr/bin/python3).

One etcd member on loopback, switches A (10.0.0.1) and B (10.0.0.2) on
net_af_packet, their uplinks joined by a bridge, blue's VMs 192.168.1.10 and
192.168.1.20 in network namespaces (the topology of tests/cluster/hosts.py).
Each switch's local file holds only its ports, its own IP, its neighbor and
the tenant its port names. The demo puts the endpoints and one QP pair into
etcd with etcdctl (no pqpn: each switch chooses its own), shows the pqpns
written back, sends three frames each way from the VMs, shows them on the
fabric (tshark) and at the peer VM, and the telemetry of both switches; then
deletes the pair and shows that the frames stop. Everything is removed at the
end.

Usage: scripts/etcd_demo.py BUILD_DIR [--etcd-base PORT] [--tag T]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "cluster"))
import hosts as h  # noqa: E402
from roce_layers import icrc_found, icrc_zlib  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402


def say(text):
    print("\n== " + text, flush=True)


def etcdctl(etcd, *args):
    cmd = ["etcdctl", "--endpoints=http://127.0.0.1:%d" % etcd.client(0)] + list(args)
    print("$ ETCDCTL_API=3 " + " ".join(a if " " not in a and "{" not in a else "'%s'" % a for a in cmd))
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, ETCDCTL_API="3")).stdout
    if out.strip():
        print(out.rstrip())
    return out


def traffic(hs, work, psn):
    """Three frames each way; what crossed the fabric (tshark) and what each VM received."""
    hs.drain()
    for k in range(3):
        hs.send("A", h.vm_frame("A", "B", 33, psn + k))
        hs.send("B", h.vm_frame("B", "A", 17, psn + 10 + k))
    got = hs.collect(1.0, done=lambda g: len(g) >= 12)
    fabric = [d for w, _, d in got if w.startswith("fab") and h.roce(d)]
    if fabric:
        path = os.path.join(work, "fabric-%d.pcap" % psn)
        wrpcap(path, [Ether(d) for d in fabric])
        print("on the fabric (tshark -r %s):" % os.path.basename(path))
        r = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "eth.src", "-e", "eth.dst", "-e", "ip.src",
                            "-e", "ip.dst", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp", "-e",
                            "infiniband.bth.psn", "-E", "header=y"], capture_output=True, text=True)
        print(r.stdout.rstrip())
    else:
        print("on the fabric: nothing")
    for w in ("vmB", "vmA"):
        fr = [d for x, _, d in got if x == w and h.roce(d)]
        print("%s's VM received %d frame(s)%s" % (w[2], len(fr), "".join(
            "\n  %s  DestQP %d  PSN %d  ICRC %s" % (Ether(d).summary(), h.roce(d)[1], h.roce(d)[2],
                                                  "valid" if icrc_found(d) == icrc_zlib(d) else "WRONG")
            for d in fr)))
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--etcd-base", type=int, default=23810)
    ap.add_argument("--tag", default="h3d")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = tempfile.mkdtemp(prefix=a.tag + "-demo-")
    etcd = h.Etcd(work, a.etcd_base, 1, a.tag)
    hs = h.Hosts(os.path.abspath(a.build), work, a.tag, ["A", "B"], {"A": "0", "B": "1"})
    rc = 1
    try:
        say("the fabric: bridge %sbr, switches A and B on af_packet, VMs in netns %svmA and %svmB"
            % (a.tag, a.tag, a.tag))
        hs.setup()
        say("etcd on 127.0.0.1:%d (data in %s)" % (etcd.client(0), work))
        if not etcd.start_all():
            raise RuntimeError("etcd did not start")
        say("the endpoints, as records of the configuration schema under /roce/endpoints/")
        for n in ("A", "B"):
            etcdctl(etcd, "put", "/roce/endpoints/blue/" + h.HOSTS[n][4], json.dumps(h.endpoint(n)))
        say("host A's local file (host B's is alike): ports, its IP, its neighbor, its port's tenant")
        print(json.dumps(h.local_config("A"), indent=1))
        if not hs.start(etcd.urls()):
            raise RuntimeError("the switches did not start")
        h.until(lambda: all(hs.cluster(n)["records_applied"] >= 2 for n in ("A", "B")), 10)
        say("a connection: A's QP 17 <-> B's QP 33, without pqpn")
        etcdctl(etcd, "put", "/roce/" + h.qp_key("A", 17), json.dumps(h.qp("A", 17, "B", 33)))
        etcdctl(etcd, "put", "/roce/" + h.qp_key("B", 33), json.dumps(h.qp("B", 33, "A", 17)))
        h.until(lambda: 17 in hs.conns("A") and 33 in hs.conns("B"), 10, 0.01)
        say("each switch chose its own QP's pqpn and wrote it back")
        etcdctl(etcd, "get", "--prefix", "/roce/qps")
        say("three frames each way from the VMs")
        got = traffic(hs, work, 100)
        delivered = sum(1 for w, _, d in got if w.startswith("vm") and h.roce(d))
        for n in ("A", "B"):
            say("switch %s: /roce/cluster and its connection" % n)
            print(json.dumps(hs.cluster(n)))
            print(json.dumps(list(hs.conns(n).values())))
        say("the pair deleted in etcd: the frames stop")
        etcdctl(etcd, "del", "--prefix", "/roce/qps/")
        h.until(lambda: not hs.conns("A") and not hs.conns("B"), 10, 0.01)
        got = traffic(hs, work, 200)
        stopped = not [1 for w, _, d in got if w.startswith("vm") and h.roce(d)]
        for n in ("A", "B"):
            print("switch %s drops: %s" % (n, {k: v for k, v in hs.drops(n).items() if v}))
        rc = 0 if delivered == 6 and stopped else 1
        say("demo %s: %d of 6 frames delivered while the pair was in etcd, %s after the delete" %
            ("ok" if rc == 0 else "FAILED", delivered, "none" if stopped else "SOME"))
    finally:
        hs.close()
        etcd.stop_all()
        subprocess.run(["rm", "-rf", work])
    return rc


if __name__ == "__main__":
    sys.exit(main())
