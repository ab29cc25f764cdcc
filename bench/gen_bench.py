#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark inputs: a configuration with CONNS connections of one tenant and,
for each frame size, a pcap of tenant-to-fabric frames spread over them.

Usage: /usr/bin/python3 bench/gen_bench.py OUT_DIR [CONNS]
Connection i's remote vip is 192.168.(1 + i // 250).(1 + i % 250) for the first
63 750 (as it always was), then 172.16.0.0/12 (see remote_vip()), so up to
1 063 750 connections, each with a remote endpoint of its own.
Writes OUT_DIR/bench.json, OUT_DIR/bench-shaped.json (the same with tenant and QP
caps that never bind) and OUT_DIR/{ack62,write1082,write4154}.pcap; for the
XRC comparison, OUT_DIR/bench-xrc.json (the same connections as XRC initiators
toward targets with one SRQ each) with OUT_DIR/{xrc62,xrc1082,xrc4154}.pcap
(XRC SEND Only, then SEND Middles, the SRQ renamed) and OUT_DIR/send62.pcap
(RC SEND Only of the same 62 bytes).
The tenant port is net_pcap0 and the uplink net_null0, as bench/run-switch runs them.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gen"))
from roce_layers import AETH, BTH, XRCETH  # noqa: E402
from scapy.all import Ether, IP, UDP, Raw, wrpcap  # noqa: E402

LOCAL_MAC = "02:00:00:00:aa:10"
PORT_MAC = "02:00:00:00:01:01"


# The 192.168.0.0/16 scheme ends at 192.168.255.250; the connections beyond take
# 172.(16 + j // 62500).(1 + j // 250 % 250).(1 + j % 250).  192.168.250.0/24 and up
# are also bench/run-delta's batch vips, which it moves away at those sizes.
VIPS_192 = 255 * 250
MAX_CONNS = VIPS_192 + 16 * 62500


def remote_vip(i):
    """The remote vip of connection i (0 <= i < MAX_CONNS)."""
    if i < VIPS_192:
        return "192.168.%d.%d" % (1 + i // 250, 1 + i % 250)
    j = i - VIPS_192
    if j >= 16 * 62500:
        raise ValueError("connection %d: at most %d connections" % (i, MAX_CONNS))
    return "172.%d.%d.%d" % (16 + j // 62500, 1 + j // 250 % 250, 1 + j % 250)


def config(conns, shaped=False, xrc=False):
    qps = []
    endpoints = [{"tenant": "blue", "vip": "192.168.0.10", "host": "10.0.0.1",
                  "port": "vm-blue", "mac": LOCAL_MAC}]
    for i in range(conns):
        rvip = remote_vip(i)
        qps.append({"tenant": "blue", "vip": "192.168.0.10", "vqpn": 16 + i, "pqpn": 4096 + i,
                    "type": "rc", "peer": {"vip": rvip, "vqpn": 32}})
        qps.append({"tenant": "blue", "vip": rvip, "vqpn": 32, "pqpn": 8192 + i,
                    "type": "rc", "peer": {"vip": "192.168.0.10", "vqpn": 16 + i}})
    if shaped:
        # Shaping on and never binding: caps far above what a core forwards.
        for q in qps:
            q["rate"] = {"gbps": 400}
    if xrc:
        for q in qps:
            q["type"] = "xrc_ini" if q["vip"] == "192.168.0.10" else "xrc_tgt"
    rvips = sorted({q["vip"] for q in qps if q["vip"] != "192.168.0.10"})
    endpoints += [dict({"tenant": "blue", "vip": v, "host": "10.0.0.2"},
                       **({"xrc_srqs": [{"vsrqn": 5, "psrqn": 7000 + i}]} if xrc else {}))
                  for i, v in enumerate(rvips)]
    return {
        "comment": ["Benchmark: one tenant port (net_pcap0, infinite_rx) to the uplink (net_null0)."],
        "version": 1,
        "ports": [
            {"name": "fabric0", "device": "net_null0", "role": "uplink", "ip": "10.0.0.1",
             "mac": "02:00:00:00:00:01", "gateway_mac": "02:00:00:00:00:fe"},
            {"name": "vm-blue", "device": "net_pcap0", "role": "tenant", "tenant": "blue",
             "mac": PORT_MAC},
        ],
        "tenants": [dict({"name": "blue", "vni": 100, "max_qps": 2 * conns + 16},
                         **({"rate": {"gbps": 1000}} if shaped else {}))],
        "endpoints": endpoints,
        "qps": qps,
        "neighbors": [{"ip": "10.0.0.2", "mac": "02:00:00:00:00:02"}],
    }


def frames(conns, kind):
    out = []
    for i in range(conns):
        rvip = remote_vip(i)
        base = (Ether(src=LOCAL_MAC, dst=PORT_MAC) /
                IP(src="192.168.0.10", dst=rvip, ttl=64, flags="DF") /
                UDP(sport=49152 + i, dport=4791, chksum=0))
        if kind == "ack62":
            p = base / BTH(opcode=0x11, dqpn=32, psn=i) / AETH(syndrome=0, msn=i)
        elif kind == "send62":
            p = base / BTH(opcode=0x04, dqpn=32, psn=i) / Raw(bytes(4))
        elif kind.startswith("xrc"):
            # XRC SEND Only (62 bytes) or SEND Middle, the XRCETH naming the target's SRQ 5.
            n = {"xrc62": 0, "xrc1082": 1020, "xrc4154": 4092}[kind]
            p = base / BTH(opcode=0xa4 if n == 0 else 0xa1, dqpn=32, psn=i) / XRCETH(xrcsrq=5)
            if n:
                p = p / Raw(bytes(n))
        else:
            size = 1024 if kind == "write1082" else 4096
            p = base / BTH(opcode=0x07, dqpn=32, psn=i) / Raw(bytes(size))
        out.append(p)
    return out


def main():
    out = sys.argv[1]
    conns = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump(config(conns), f, indent=1)
    with open(os.path.join(out, "bench-shaped.json"), "w") as f:
        json.dump(config(conns, shaped=True), f, indent=1)
    with open(os.path.join(out, "bench-xrc.json"), "w") as f:
        json.dump(config(conns, xrc=True), f, indent=1)
    for kind in ("ack62", "write1082", "write4154", "send62", "xrc62", "xrc1082", "xrc4154"):
        wrpcap(os.path.join(out, kind + ".pcap"), frames(conns, kind))


if __name__ == "__main__":
    main()
