#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Several rx queues per port, through the real switch (issue 23).

Ports with 2, 3 and 4 rx queues (net_pcap, one rx_pcap file per queue) and four
forwarding lcores mapped onto CPUs 0 and 1 (--lcores), more lcores than CPUs.
Two tenants, 8 RC connections each and a hairpin pair; blue is shaped (a cap
that does not bind: its frames go through the lcores' shapers and their
shared bucket), red is not.  The traffic: WRITE First/Middle/Last and SEND
Only from the tenants, ACKs and SEND Only from the fabric, every frame with a
payload of its own.

The oracle is the switch itself on one lcore and one queue per port, the path
every other tier checks: the output of each port with several queues and
lcores must be the same multiset of frames, byte for byte (every frame
forwarded exactly once and renamed the same), compared with scapy.

(1) rss: the frames of each connection direction in one queue file, as RSS
    keeps a QP on one queue: same output as the oracle, conn_foreign 0.
(2) spread: the frames dealt to the queue files round robin, as a PMD that
    spreads one QP over queues: same output, conn_foreign > 0, no drop.
(3) the exit summary's "lcores" lists every (port, queue) exactly once, each
    lcore's queues of one port at most once, and rx_packets add up to rx.
(4) an explicit rx_queues above what the device offers (3 on a port with 2
    rx_pcap files) is refused at start, naming ports[1].rx_queues.
(5) rx_queues: 0 is refused by the configuration loader with its JSON path.

Usage: /usr/bin/python3 tests/mq/test_mq.py BUILD_DIR [--keep]
Final line: "N passed, M failed".
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from roce_checks import Checks  # noqa: E402
from roce_layers import AETH, BTH, RETH  # noqa: E402
from scapy.all import Ether, IP, UDP, Raw, rdpcap, wrpcap  # noqa: E402

UPLINK_MAC, PEER_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
PORT_MAC = {"blue": "02:00:00:00:01:01", "red": "02:00:00:00:02:01"}
VM_MAC = {"blue": "02:00:00:00:aa:10", "red": "02:00:00:00:bb:10"}
BLUE_VM2 = "02:00:00:00:aa:11"
L_VIP, L2_VIP, R_VIP = "192.168.1.10", "192.168.1.11", "192.168.1.20"
N_CONNS = 8
# Port name, device, tenant (None: the uplink), rx queues.
PORTS = [("fabric0", "net_pcap0", None, 2), ("vm-blue", "net_pcap1", "blue", 3), ("vm-red", "net_pcap2", "red", 4)]
MQ_LCORES = "0@0,1@0,2@1,3@0,4@1"   # the main lcore and four forwarding lcores on CPUs 0 and 1
N_FWD = 4
REF_LCORES = "0@0"                   # one lcore: the main lcore forwards

check = Checks()


def pqpn(tenant, i, local):
    """Physical QPNs: 4096 + ... for local QPs, 8192 + ... for remote ones; tenants apart."""
    return (4096 if local else 8192) + (0 if tenant == "blue" else 256) + i


def config(queues):
    """The configuration, with ports' rx_queues from @queues (None: leave the field out)."""
    ports = []
    for (name, dev, tenant, _), q in zip(PORTS, queues):
        p = {"name": name, "device": dev, "mac": UPLINK_MAC if tenant is None else PORT_MAC[tenant]}
        if tenant is None:
            p.update(role="uplink", ip="10.0.0.1", gateway_mac="02:00:00:00:00:fe")
        else:
            p.update(role="tenant", tenant=tenant)
        if q is not None:
            p["rx_queues"] = q
        ports.append(p)
    qps, endpoints = [], []
    for t in ("blue", "red"):
        endpoints += [{"tenant": t, "vip": L_VIP, "host": "10.0.0.1", "port": "vm-" + t, "mac": VM_MAC[t]},
                      {"tenant": t, "vip": R_VIP, "host": "10.0.0.2"}]
        for i in range(N_CONNS):
            qps += [{"tenant": t, "vip": L_VIP, "vqpn": 100 + i, "pqpn": pqpn(t, i, True), "type": "rc",
                     "peer": {"vip": R_VIP, "vqpn": 200 + i}},
                    {"tenant": t, "vip": R_VIP, "vqpn": 200 + i, "pqpn": pqpn(t, i, False), "type": "rc",
                     "peer": {"vip": L_VIP, "vqpn": 100 + i}}]
    # A hairpin pair of blue: .11 qp 18 <-> .10 qp 19.
    endpoints.append({"tenant": "blue", "vip": L2_VIP, "host": "10.0.0.1", "port": "vm-blue", "mac": BLUE_VM2})
    qps += [{"tenant": "blue", "vip": L2_VIP, "vqpn": 18, "pqpn": 4000, "type": "rc",
             "peer": {"vip": L_VIP, "vqpn": 19}},
            {"tenant": "blue", "vip": L_VIP, "vqpn": 19, "pqpn": 4001, "type": "rc",
             "peer": {"vip": L2_VIP, "vqpn": 18}}]
    return {"version": 1, "comment": "tests/mq/test_mq.py", "ports": ports,
            "tenants": [{"name": "blue", "vni": 100, "rate": {"gbps": 400}}, {"name": "red", "vni": 200}],
            "endpoints": endpoints, "qps": qps, "neighbors": [{"ip": "10.0.0.2", "mac": PEER_MAC}]}


def payload(tag, n, size=64):
    """A payload that names its frame, so that no two frames of the test are alike."""
    s = ("%s-%d|" % (tag, n)).encode()
    return Raw((s * (size // len(s) + 1))[:size])


def traffic():
    """{port name: [(flow key, frame)]}: what arrives on each port; the key names a connection direction."""
    out = {"fabric0": [], "vm-blue": [], "vm-red": []}
    for t in ("blue", "red"):
        for i in range(N_CONNS):
            vm = (Ether(src=VM_MAC[t], dst=PORT_MAC[t]) / IP(src=L_VIP, dst=R_VIP, flags="DF") /
                  UDP(sport=49152 + i, dport=4791, chksum=0))
            fab = (Ether(src=PEER_MAC, dst=UPLINK_MAC) / IP(src="10.0.0.2", dst="10.0.0.1", flags="DF") /
                   UDP(sport=50152 + i, dport=4791, chksum=0))
            key = (t, i)
            psn = 0
            for m in range(6):
                # A 3-packet WRITE, then a SEND Only, from the tenant.
                tag = "%s%d-w%d" % (t, i, m)
                out["vm-" + t] += [
                    (key + ("out",), vm / BTH(opcode=0x06, dqpn=200 + i, psn=psn) /
                     RETH(va=0x10000, rkey=0x99, dmalen=3 * 256) / payload(tag, 0, 256)),
                    (key + ("out",), vm / BTH(opcode=0x07, dqpn=200 + i, psn=psn + 1) / payload(tag, 1, 256)),
                    (key + ("out",), vm / BTH(opcode=0x08, dqpn=200 + i, psn=psn + 2, ackreq=1) /
                     payload(tag, 2, 256)),
                    (key + ("out",), vm / BTH(opcode=0x04, dqpn=200 + i, psn=psn + 3) / payload(tag, 3))]
                # The peer's ACK and a SEND Only of its own, from the fabric.
                out["fabric0"] += [
                    (key + ("in",), fab / BTH(opcode=0x11, dqpn=pqpn(t, i, True), psn=psn + 3) /
                     AETH(syndrome=0, msn=m + 1)),
                    (key + ("in",), fab / BTH(opcode=0x04, dqpn=pqpn(t, i, True), psn=1000 + m) /
                     payload("%s%d-in%d" % (t, i, m), 0))]
                psn += 4
    hp = (Ether(src=BLUE_VM2, dst=PORT_MAC["blue"]) / IP(src=L2_VIP, dst=L_VIP, flags="DF") /
          UDP(sport=51000, dport=4791, chksum=0))
    out["vm-blue"] += [(("hp",), hp / BTH(opcode=0x04, dqpn=19, psn=n) / payload("hairpin", n)) for n in range(12)]
    return out


def split(frames, n, mode):
    """The frames of one port dealt to @n queue files: by flow (rss) or round robin (spread)."""
    qs = [[] for _ in range(n)]
    flows = {}
    for k, (key, f) in enumerate(frames):
        if mode == "rss":
            q = flows.setdefault(key, len(flows) % n)
        else:
            q = k % n
        qs[q].append(f)
    return qs


def run(build, work, name, cfg, inputs, lcores, n_tx):
    """The switch on pcaps @inputs ({port: [files]}) until idle: (rc, summary, stderr, {port: output frames})."""
    cfg_path = os.path.join(work, name + ".json")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=1)
    prefix = "mq-%s-%d" % (name, os.getpid())
    cmd = [os.path.join(build, "dataplane", "dpdk-roce-vswitch"), "--lcores", lcores, "--no-pci",
           "--file-prefix", prefix, "--log-level", "lib.eal:warning", "--no-huge", "-m", "512"]
    outs = {}
    for pname, dev, _, _ in PORTS:
        outs[pname] = [os.path.join(work, "%s.%s.out%d.pcap" % (name, pname, q)) for q in range(n_tx)]
        cmd += ["--vdev", ",".join([dev] + ["rx_pcap=" + x for x in inputs[pname]] +
                                   ["tx_pcap=" + x for x in outs[pname]])]
    cmd += ["--", "--config", cfg_path, "--exit-when-idle", "500", "--mbuf-size", "2048", "--queue-mbufs", "512"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = -1, e.stdout or "", e.stderr or ""
    shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    summary = None
    for line in reversed((out or "").splitlines()):
        if line.startswith("{"):
            summary = json.loads(line)
            break
    frames = {}
    for pname, files in outs.items():
        frames[pname] = [bytes(f) for x in files if os.path.exists(x) and os.path.getsize(x) > 24
                         for f in rdpcap(x)]
    return rc, summary, err, frames


def write_inputs(work, name, per_port):
    """{port: [frames per queue]} to pcap files; {port: [paths]}."""
    paths = {}
    for pname, qs in per_port.items():
        paths[pname] = []
        for q, frames in enumerate(qs):
            path = os.path.join(work, "%s.%s.in%d.pcap" % (name, pname, q))
            wrpcap(path, frames)
            paths[pname].append(path)
    return paths


def check_lcores(name, s):
    """(3): every (port, queue) once, a port's queues on different lcores, rx_packets add up."""
    lc = s.get("lcores", [])
    seen = collections.Counter()
    for e in lc:
        seen.update((p, q) for p, q in e["rx"])
        ports = [p for p, _ in e["rx"]]
        check(len(ports) == len(set(ports)), "(3 %s) lcore %d polls at most one queue of each port" % (
            name, e["lcore"]), e["rx"])
    want = collections.Counter((p, q) for p, _, _, n in PORTS for q in range(n))
    check(seen == want, "(3 %s) the summary's lcores list every (port, queue) exactly once" % name, lc)
    check(len(lc) == N_FWD and sorted(e["lcore"] for e in lc) == list(range(1, N_FWD + 1)),
          "(3 %s) four forwarding lcores, 1 to 4" % name, [e["lcore"] for e in lc])
    check(sum(e["rx_packets"] for e in lc) == s["rx_packets"],
          "(3 %s) the lcores' rx_packets add up to rx_packets %d" % (name, s["rx_packets"]),
          [e["rx_packets"] for e in lc])


def test_exactly_once(build, work):
    frames = traffic()
    total = sum(len(v) for v in frames.values())
    ref_in = write_inputs(work, "ref", {p: [[f for _, f in v]] for p, v in frames.items()})
    rc, ref, err, ref_out = run(build, work, "ref", config([1, 1, 1]), ref_in, REF_LCORES, 1)
    if not check(rc == 0 and ref is not None, "the reference run (one lcore, one queue) exits cleanly",
                 (rc, err[-800:])):
        return
    check(ref["dropped"] == 0 and ref["rx_packets"] == total and ref["tx_packets"] == total,
          "the reference forwards all %d frames, drops none" % total,
          (ref["rx_packets"], ref["tx_packets"], {k: v for k, v in ref["drops"].items() if v}))
    for mode in ("rss", "spread"):
        per_port = {p: split(frames[p], n, mode) for p, _, _, n in PORTS}
        ins = write_inputs(work, mode, per_port)
        rc, s, err, out = run(build, work, mode, config([n for _, _, _, n in PORTS]), ins, MQ_LCORES, N_FWD)
        n = {1: "1", 2: "2"}[1 if mode == "rss" else 2]
        if not check(rc == 0 and s is not None, "(%s %s) the switch on 2-4 queues and 4 lcores exits cleanly" % (
                n, mode), (rc, err[-800:])):
            continue
        print("(%s) %s: rx %d, tx %d, dropped %d, conn_foreign %d, rx per lcore %s" % (
            n, mode, s["rx_packets"], s["tx_packets"], s["dropped"], s["conn_foreign"],
            [e["rx_packets"] for e in s["lcores"]]))
        check(s["rx_packets"] == total and s["dropped"] == 0,
              "(%s %s) all %d frames received, none dropped" % (n, mode, total),
              (s["rx_packets"], {k: v for k, v in s["drops"].items() if v}))
        for pname in ref_out:
            a, b = collections.Counter(out[pname]), collections.Counter(ref_out[pname])
            check(a == b and len(out[pname]) == len(ref_out[pname]),
                  "(%s %s) %s: the same %d frames as the reference, each exactly once" % (
                      n, mode, pname, len(ref_out[pname])),
                  "%d out, %d missing, %d extra" % (len(out[pname]), sum((b - a).values()), sum((a - b).values())))
        if mode == "rss":
            check(s["conn_foreign"] == 0, "(1 rss) a connection direction on one queue: conn_foreign 0",
                  s["conn_foreign"])
        else:
            check(s["conn_foreign"] > 0, "(2 spread) one QP over several queues is counted: conn_foreign > 0",
                  s["conn_foreign"])
        m = s["mbufs"]
        check(m["in_use_end"] == m["in_use_start"] and m["in_use_after_close"] == 0,
              "(%s %s) mbuf pool back to baseline" % (n, mode), m)
        check_lcores(mode, s)


def test_refusals(build, work):
    frames = traffic()
    ins = write_inputs(work, "bad", {p: split(frames[p], 2, "rss") for p, _, _, _ in PORTS})
    rc, s, err, _ = run(build, work, "bad", config([2, 3, 2]), ins, MQ_LCORES, N_FWD)
    check(rc != 0 and s is None and "ports[1].rx_queues: 3, but device \"net_pcap1\" offers 2 rx queues" in err,
          "(4) rx_queues 3 on a device with 2 rx queues is refused at start, naming ports[1].rx_queues",
          (rc, err[-600:]))
    rc, s, err, _ = run(build, work, "zero", config([0, None, None]), ins, MQ_LCORES, N_FWD)
    check(rc != 0 and "ports[0].rx_queues" in err, "(5) rx_queues 0 is refused with its JSON path", err[-400:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="test_mq.")
    test_exactly_once(os.path.abspath(a.build), work)
    test_refusals(os.path.abspath(a.build), work)
    return check.finish(work, a.keep)


if __name__ == "__main__":
    sys.exit(main())
