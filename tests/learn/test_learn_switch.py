#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Learned connections on one switch: a learning tenant with no QP records at all.

One switch, net_pcap tenant ports (each VM's frames read from a pcap, what the
switch delivers written to one), a net_null uplink. Tenant blue learns its QPs
("qp_learning": true, "qp_idle_s": 2, "max_qps": 40); tenant red, with the same
vips on another port, does not. blue's VMs 192.168.1.10 (port vm-blue-1) and
192.168.1.20 (vm-blue-2) are both on this host, so every learned connection is
a hairpin, resolved by the switch alone (no etcd).

- 12 RC SENDs from .10 to (.20, QP 33), PSN 0..11, arrive at .20 in order,
  none lost, with the port's and the VM's MACs, IPs and DestQP as sent, the
  ICRC valid (zlib and scapy) and tshark decoding the DestQP;
- 6 RC ACKs from .20 to (.10, QP 17) arrive at .10 in order;
- red sends the same frames: nothing is learned for it (`no_connection`);
- green, another learning tenant on two more ports, reuses blue's vips and
  QPNs: it learns its own connection and its frames reach its own VM only;
- a UD frame, a frame from a vip that is not the port's, and a frame from the
  right vip with another MAC are not learned from (`no_connection`,
  `spoofed_source`);
- blue scans 10 000 QPNs: it stops at its max_qps (`refused_quota`), the rest is
  dropped as `unresolved`, red's frames and blue's learned connections are
  unaffected;
- /roce/learn and /roce/connections show the learned connections as halves,
  /metrics the same counts (promtool accepts the scrape); after qp_idle_s
  they are gone (`expired`), and the switch exits cleanly.

A second switch, for RDMA-CM: blue (gsi_pps at its default) runs REQ, REP and
RTU between .10 and .20; green ("gsi_pps": 20) floods QP1 with 1000 DREQs and
5 DREPs that carry blue's vips and Communication IDs. Green's MADs that pass
stay within the rate (the burst of 20 and 20 a second from the start), the
rest are dropped as `gsi` and counted (`gsi_dropped_rate`, the same in
/metrics); every one that passed names no connection of green
(`cm_unmatched`); blue's three MADs all arrive, and the halves its REQ and REP
installed stay (`cm_removed` 0).

Usage: tests/learn/test_learn_switch.py BUILD_DIR [--keep] [--tag T]; a few seconds.
--tag: the start of the switches' DPDK file prefixes (default learn).
Final line: "N passed, M failed".
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import urllib.request
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))
from roce_checks import Checks  # noqa: E402
from roce_switch import start_switch_ready, stop_switch  # noqa: E402
from roce_telemetry import telemetry  # noqa: E402
from roce_layers import BTH, icrc_found, icrc_scapy, icrc_zlib  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import rdpcap, wrpcap  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
import test_cm as cm  # noqa: E402  - the MADs of IBTA 1.5 chapter 12, as the CM oracle builds them

check = Checks()
PORT1, PORT2, PORTR = "02:00:00:00:01:01", "02:00:00:00:01:02", "02:00:00:00:01:03"
PORTG1, PORTG2 = "02:00:00:00:01:04", "02:00:00:00:01:05"
VM1, VM2, VMR = "02:00:00:00:aa:10", "02:00:00:00:aa:20", "02:00:00:00:bb:10"
VMG1, VMG2 = "02:00:00:00:cc:10", "02:00:00:00:cc:20"
V1, V2 = "192.168.1.10", "192.168.1.20"
SEND_ONLY, ACK, UD_SEND_ONLY = 0x04, 0x11, 0x64
QUOTA = 40
SCAN = 10000
TAG = sys.argv[sys.argv.index("--tag") + 1] if "--tag" in sys.argv else "learn"


def config():
    return {
        "version": 1,
        "ports": [
            {"name": "fabric0", "device": "net_null0", "role": "uplink", "ip": "10.0.0.1",
             "mac": "02:00:00:00:00:01", "gateway_mac": "02:00:00:00:00:fe"},
            {"name": "vm-blue-1", "device": "net_pcap0", "role": "tenant", "tenant": "blue", "mac": PORT1},
            {"name": "vm-blue-2", "device": "net_pcap1", "role": "tenant", "tenant": "blue", "mac": PORT2},
            {"name": "vm-red", "device": "net_pcap2", "role": "tenant", "tenant": "red", "mac": PORTR},
            {"name": "vm-green-1", "device": "net_pcap3", "role": "tenant", "tenant": "green", "mac": PORTG1},
            {"name": "vm-green-2", "device": "net_pcap4", "role": "tenant", "tenant": "green", "mac": PORTG2},
        ],
        "tenants": [
            {"name": "blue", "vni": 100, "max_qps": QUOTA, "qp_learning": True, "qp_idle_s": 2},
            {"name": "red", "vni": 200},
            {"name": "green", "vni": 300, "qp_learning": True, "qp_idle_s": 2},
        ],
        "endpoints": [
            {"tenant": "blue", "vip": V1, "host": "10.0.0.1", "port": "vm-blue-1", "mac": VM1},
            {"tenant": "blue", "vip": V2, "host": "10.0.0.1", "port": "vm-blue-2", "mac": VM2},
            {"tenant": "red", "vip": V1, "host": "10.0.0.1", "port": "vm-red", "mac": VMR},
            {"tenant": "red", "vip": V2, "host": "10.0.0.2"},
            {"tenant": "green", "vip": V1, "host": "10.0.0.1", "port": "vm-green-1", "mac": VMG1},
            {"tenant": "green", "vip": V2, "host": "10.0.0.1", "port": "vm-green-2", "mac": VMG2},
        ],
        "neighbors": [{"ip": "10.0.0.2", "mac": "02:00:00:00:00:02"}],
    }


def frame(smac, dmac, src, dst, dqpn, psn, opcode=SEND_ONLY):
    """A RoCEv2 frame with its ICRC (scapy's roce_layers fills it in)."""
    pay = b"" if opcode == ACK else struct.pack("!I", psn) + bytes(28)
    bth = BTH(opcode=opcode, dqpn=dqpn, psn=psn)
    if opcode == ACK:
        pay = struct.pack("!I", psn)  # AETH: syndrome 0, MSN psn
    if opcode == UD_SEND_ONLY:
        pay = struct.pack("!II", 0x11111111, 7) + pay  # DETH: Q_Key, source QP
    return (Ether(src=smac, dst=dmac) / IP(src=src, dst=dst, flags="DF", ttl=64) /
            UDP(sport=49152, dport=4791, chksum=0) / bth / Raw(pay))


def bth(f):
    """(DestQP, PSN, opcode) of a frame written by the switch."""
    raw = bytes(f)
    b = 14 + 20 + 8
    return (struct.unpack_from("!I", raw, b + 4)[0] & 0xffffff, struct.unpack_from("!I", raw, b + 8)[0] & 0xffffff,
            raw[b])


def tshark_dqpns(path):
    out = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "infiniband.bth.destqp"],
                         capture_output=True, text=True).stdout.split()
    return [int(x, 16) if x.startswith("0x") else int(x) for x in out]


GSI_PPS = 20
FLOOD = 1000


def cm_config():
    return {
        "version": 1,
        "ports": [
            {"name": "fabric0", "device": "net_null0", "role": "uplink", "ip": "10.0.0.1",
             "mac": "02:00:00:00:00:01", "gateway_mac": "02:00:00:00:00:fe"},
            {"name": "vm-blue-1", "device": "net_pcap0", "role": "tenant", "tenant": "blue", "mac": PORT1},
            {"name": "vm-blue-2", "device": "net_pcap1", "role": "tenant", "tenant": "blue", "mac": PORT2},
            {"name": "vm-green-1", "device": "net_pcap2", "role": "tenant", "tenant": "green", "mac": PORTG1},
            {"name": "vm-green-2", "device": "net_pcap3", "role": "tenant", "tenant": "green", "mac": PORTG2},
        ],
        "tenants": [
            {"name": "blue", "vni": 100, "qp_learning": True},
            {"name": "green", "vni": 300, "qp_learning": True, "gsi_pps": GSI_PPS},
        ],
        "endpoints": [
            {"tenant": "blue", "vip": V1, "host": "10.0.0.1", "port": "vm-blue-1", "mac": VM1},
            {"tenant": "blue", "vip": V2, "host": "10.0.0.1", "port": "vm-blue-2", "mac": VM2},
            {"tenant": "green", "vip": V1, "host": "10.0.0.1", "port": "vm-green-1", "mac": VMG1},
            {"tenant": "green", "vip": V2, "host": "10.0.0.1", "port": "vm-green-2", "mac": VMG2},
        ],
    }


def cm_run(build, work):
    """RDMA-CM on one switch: green's QP1 flood against its gsi_pps, blue's connection untouched."""
    cfg = os.path.join(work, "cm.json")
    with open(cfg, "w") as f:
        json.dump(cm_config(), f, indent=1)
    mad = lambda attr, tid, data: cm.mad(cm.CM_CLASS, cm.ATTR[attr], tid, data)
    req = mad("REQ", 0x1001, cm.req(0x11, 18, 100, V1, V2))
    rep = mad("REP", 0x1001, cm.rep(0x22, 0x11, 34, 200))
    rtu = mad("RTU", 0x1001, bytes(cm.two_ids(0x11, 0x22, 232)))
    dreq = mad("DREQ", 0x1002, cm.dreq(0x11, 0x22, 34))
    drep = mad("DREP", 0x1002, bytes(cm.two_ids(0x22, 0x11, 232)))
    frames = {"b1": [cm.frame(V1, V2, VM1, PORT1, 0, req), cm.frame(V1, V2, VM1, PORT1, 1, rtu)],
              "b2": [cm.frame(V2, V1, VM2, PORT2, 0, rep)],
              "g1": [cm.frame(V1, V2, VMG1, PORTG1, i, dreq) for i in range(FLOOD)],
              "g2": [cm.frame(V2, V1, VMG2, PORTG2, i, drep) for i in range(5)]}
    ins, outs = {}, {}
    for n, fr in frames.items():
        ins[n], outs[n] = os.path.join(work, "cm-%s.pcap" % n), os.path.join(work, "cm-out-%s.pcap" % n)
        wrpcap(ins[n], [Ether(f) for f in fr])
    prefix = "%s-cm-%d" % (TAG, os.getpid())
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        metrics_port = probe.getsockname()[1]
    t0 = time.time()
    sw = start_switch_ready(build, prefix, ["net_null0,no-rx=1"] +
                            ["net_pcap%d,rx_pcap=%s,tx_pcap=%s" % (i, ins[n], outs[n])
                             for i, n in enumerate(("b1", "b2", "g1", "g2"))],
                            cfg, "0,1", ["--metrics", "127.0.0.1:%d" % metrics_port])
    if not check(sw is not None, "the RDMA-CM switch starts"):
        return
    total = 3 + FLOOD + 5
    learn = {}
    for _ in range(100):
        learn = telemetry(prefix, "/roce/learn") or {}
        if learn.get("gsi_forwarded", 0) + learn.get("gsi_dropped_rate", 0) >= total and learn.get("frames_held") == 0:
            break
        time.sleep(0.1)
    t1 = time.time()
    passed = learn.get("gsi_forwarded", 0) - 3
    halves = lambda: sorted(c.get("remote_vqpn") for c in (telemetry(prefix, "/roce/connections,blue") or {}).values()
                            if isinstance(c, dict) and c.get("half") in (None, "out"))
    # The learner reads the messages after the lcores counted them: wait for it (5 s at most).
    for _ in range(50):
        learn = telemetry(prefix, "/roce/learn") or {}
        if learn.get("cm_unmatched", 0) >= passed and halves() == [18, 34]:
            break
        time.sleep(0.1)
    drops = telemetry(prefix, "/roce/drops") or {}
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % metrics_port, timeout=10) as r:
        series = dict(line.rsplit(" ", 1) for line in r.read().decode().splitlines()
                      if line and not line.startswith("#"))
    print("cm learn:", json.dumps({k: v for k, v in learn.items() if "gsi" in k or "cm" in k}))
    bound = GSI_PPS + GSI_PPS * (t1 - t0) + 1
    check(GSI_PPS <= passed <= bound, "green's flood: %d of %d MADs passed, within the burst and %d/s over %.1f s "
          "(at most %d)" % (passed, FLOOD + 5, GSI_PPS, t1 - t0, bound))
    check(learn.get("gsi_dropped_rate") == FLOOD + 5 - passed and drops.get("gsi") == learn.get("gsi_dropped_rate"),
          "the rest dropped as gsi and counted gsi_dropped_rate", (learn.get("gsi_dropped_rate"), drops.get("gsi")))
    check(series.get("roce_learn_gsi_dropped_rate_total") == str(learn.get("gsi_dropped_rate")) and
          series.get("roce_learn_cm_unmatched_total") == str(learn.get("cm_unmatched")) and
          series.get("roce_learn_cm_removed_total") == "0", "/metrics: the same counts",
          {k: v for k, v in series.items() if "gsi" in k or "_cm_" in k})
    check(learn.get("cm_unmatched") == passed and learn.get("cm_removed") == 0,
          "green's DREQs and DREPs with blue's IDs name no connection of green: cm_unmatched, nothing removed", learn)
    check(halves() == [18, 34], "blue keeps the halves its REQ and REP installed, to QPs 18 and 34", halves())
    rc, summary, err = stop_switch(sw, prefix)
    check(rc == 0 and summary is not None, "the RDMA-CM switch exits cleanly", err[-500:])
    got = {n: [bytes(f) for f in rdpcap(outs[n])] if os.path.exists(outs[n]) else [] for n in outs}
    mads = lambda n: [bytes(f)[14 + 20 + 8 + 20:][:256] for f in [Ether(d) for d in got[n]]]
    check(mads("b2") == [req, rtu] and mads("b1") == [rep], "blue's REQ, RTU and REP all arrive, byte-identical",
          (len(got["b1"]), len(got["b2"])))
    check(len(got["g1"]) + len(got["g2"]) == passed, "green's VMs received what passed and nothing more",
          (len(got["g1"]), len(got["g2"])))


def main():
    build = sys.argv[1]
    keep = "--keep" in sys.argv
    work = tempfile.mkdtemp(prefix="learn-")
    cfg = os.path.join(work, "learn.json")
    with open(cfg, "w") as f:
        json.dump(config(), f, indent=1)
    vm1 = [frame(VM1, PORT1, V1, V2, 33, psn) for psn in range(12)]
    vm1 += [frame(VM1, PORT1, V1, V2, 40, 0, UD_SEND_ONLY),   # UD: not learned from
            frame(VM1, PORT1, V2, V2, 41, 0),                 # not this port's vip
            frame("02:00:00:00:aa:99", PORT1, V1, V2, 42, 0)]  # this vip, another MAC
    vm1 += [frame(VM1, PORT1, V1, V2, 1000 + i, 0) for i in range(SCAN)]
    vm2 = [frame(VM2, PORT2, V2, V1, 17, psn, ACK) for psn in range(6)]
    red = [frame(VMR, PORTR, V1, V2, 33, psn) for psn in range(3)]
    # green reuses blue's vips and QPNs: 100 + psn in the payload tells its frames apart.
    green = [frame(VMG1, PORTG1, V1, V2, 33, 100 + psn) for psn in range(5)]
    paths = {}
    for name, frames in (("vm1", vm1), ("vm2", vm2), ("red", red), ("g1", green), ("g2", [])):
        paths[name] = os.path.join(work, name + ".pcap")
        wrpcap(paths[name], frames)
    outs = {n: os.path.join(work, "out-%s.pcap" % n) for n in ("vm1", "vm2", "red", "g1", "g2")}
    prefix = "%s-sw-%d" % (TAG, os.getpid())
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        metrics_port = probe.getsockname()[1]
    sw = start_switch_ready(build, prefix,
                            ["net_null0,no-rx=1",
                             "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (paths["vm1"], outs["vm1"]),
                             "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (paths["vm2"], outs["vm2"]),
                             "net_pcap2,rx_pcap=%s,tx_pcap=%s" % (paths["red"], outs["red"]),
                             "net_pcap3,rx_pcap=%s,tx_pcap=%s" % (paths["g1"], outs["g1"]),
                             "net_pcap4,rx_pcap=%s,tx_pcap=%s" % (paths["g2"], outs["g2"])],
                            cfg, "0,1", ["--learn-hold-ms", "300", "--metrics", "127.0.0.1:%d" % metrics_port])
    if not check(sw is not None, "the switch starts"):
        return check.finish(work, keep)
    # Everything read at start is resolved, delivered or dropped within the hold time.
    deadline = time.time() + 10
    learn = {}
    while time.time() < deadline:
        learn = telemetry(prefix, "/roce/learn") or {}
        # Every frame of a learning tenant's miss is released or unresolved in the end.
        if (learn.get("frames_held", 1) == 0 and
                learn.get("frames_released", 0) + learn.get("unresolved", 0) >= SCAN + 12 + 6 + 5):
            break
        time.sleep(0.1)
    time.sleep(0.5)
    learn = telemetry(prefix, "/roce/learn") or {}
    drops = telemetry(prefix, "/roce/drops") or {}
    conns = telemetry(prefix, "/roce/connections,blue") or {}
    print("learn:", json.dumps(learn))
    print("drops:", json.dumps({k: v for k, v in drops.items() if v}))
    learned = learn.get("learned", 0)
    check(learned >= 3 and learned <= QUOTA + 1, "blue learned its two connections and at most its quota, "
          "green its own", learned)
    check(learn.get("refused_quota", 0) >= 1, "the scan met blue's max_qps", learn)
    check(learn.get("refused_no_etcd", 0) == 0 and learn.get("refused_other", 0) == 0,
          "no refusal but the quota", learn)
    check(learn.get("frames_held") == 0 and learn.get("resolving") == 0, "nothing held any more", learn)
    check(drops.get("unresolved", 0) == SCAN - (learned - 3) and
          learn.get("unresolved") == drops.get("unresolved"),
          "every scanned QPN beyond the quota dropped as unresolved",
          (drops.get("unresolved"), learned))
    check(drops.get("no_connection", 0) == 1 + 3, "the UD frame and red's frames: no_connection", drops)
    check(drops.get("spoofed_source", 0) == 2, "another port's vip and another MAC: spoofed_source", drops)
    halves = [c for c in conns.values() if isinstance(c, dict)]
    check(any(c.get("half") == "out" for c in halves), "/roce/connections shows learned halves", conns)
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % metrics_port, timeout=10) as r:
        scrape = r.read().decode()
    series = dict(line.rsplit(" ", 1) for line in scrape.splitlines() if line and not line.startswith("#"))
    check(series.get("roce_learn_learned_total") == str(learned) and
          series.get('roce_learn_refused_total{reason="quota"}') == str(learn.get("refused_quota")) and
          series.get('roce_dropped_packets_total{reason="unresolved"}') == str(drops.get("unresolved")),
          "/metrics: the learner's counts and the unresolved drops",
          {k: v for k, v in series.items() if "learn" in k or "unresolved" in k})
    if shutil.which("promtool"):
        pc = subprocess.run(["promtool", "check", "metrics"], input=scrape, capture_output=True, text=True)
        check(pc.returncode == 0, "promtool accepts the scrape", pc.stdout + pc.stderr)
    # Idle expiry: qp_idle_s 2, the learner looks every second.
    deadline = time.time() + 8
    while time.time() < deadline:
        learn = telemetry(prefix, "/roce/learn") or {}
        if learn.get("learned_now") == 0:
            break
        time.sleep(0.2)
    conns = telemetry(prefix, "/roce/connections,blue") or {}
    check(learn.get("learned_now") == 0 and learn.get("expired", 0) >= 2,
          "idle learned connections expire after qp_idle_s", learn)
    check(not [c for c in conns.values() if isinstance(c, dict)], "and are gone from /roce/connections", conns)
    rc, summary, err = stop_switch(sw, prefix)
    check(rc == 0 and summary is not None, "clean exit", err[-500:])

    got2 = rdpcap(outs["vm2"]) if os.path.exists(outs["vm2"]) else []
    got1 = rdpcap(outs["vm1"]) if os.path.exists(outs["vm1"]) else []
    gotr = rdpcap(outs["red"]) if os.path.exists(outs["red"]) else []
    gotg = rdpcap(outs["g2"]) if os.path.exists(outs["g2"]) else []
    check([bth(f)[:2] for f in gotg] == [(33, 100 + p) for p in range(5)] and
          all(f[Ether].src == PORTG2 and f[Ether].dst == VMG2 for f in gotg),
          "green, with blue's vips and QPNs, learned its own: its 5 frames at green's .20 only",
          [bth(f)[:2] for f in gotg])
    check(all(bth(f)[1] < 100 for f in got1 + got2), "no green frame reached blue")
    check([bth(f)[:2] for f in got2 if bth(f)[0] == 33] == [(33, p) for p in range(12)],
          "blue .10 -> (.20, 33): all 12 SENDs delivered in order", [bth(f)[:2] for f in got2])
    scanned = sorted(bth(f)[0] for f in got2 if bth(f)[0] != 33)
    check(len(scanned) == len(set(scanned)) == learned - 3 and all(1000 <= q < 1000 + SCAN for q in scanned),
          "each scanned QPN learned within the quota delivered once", scanned)
    check([bth(f)[:2] for f in got1] == [(17, p) for p in range(6)],
          "blue .20 -> (.10, 17): all 6 ACKs delivered in order", [bth(f)[:2] for f in got1])
    check(not gotr, "red learned nothing and received nothing", len(gotr))
    ok = all(f[Ether].src == PORT2 and f[Ether].dst == VM2 and f[IP].src == V1 and f[IP].dst == V2 for f in got2)
    ok = ok and all(f[Ether].src == PORT1 and f[Ether].dst == VM1 and f[IP].src == V2 for f in got1)
    check(ok and got1 and got2, "hairpin: the ports' and VMs' MACs, the virtual IPs kept")
    ok = all(icrc_found(bytes(f)) == icrc_zlib(bytes(f)) == icrc_scapy(bytes(f)) for f in got1 + got2)
    check(ok and got1 and got2, "every delivered frame's ICRC is valid (zlib and scapy)")
    check(tshark_dqpns(outs["vm2"]) == [bth(f)[0] for f in got2], "tshark decodes the delivered DestQPs",
          tshark_dqpns(outs["vm2"]))
    cm_run(build, work)
    return check.finish(work, keep)


if __name__ == "__main__":
    sys.exit(main())
