#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""RDMA Estats through the real switch, with delays injected on the wire.

The switch runs on two af_packet ports over veth pairs (the tenant port of
blue's 192.168.1.10 and the uplink); this script plays both the tenant's RNIC
and the fabric on the veth peers, and decides when each answer leaves:

  round k: L sends SEND_ONLY PSN k (AckReq) to R; once it is out on the
           fabric, R's ACK of PSN k comes back D_NET later.  R sends
           SEND_ONLY PSN 1000 + k to L; once L has it, L's ACK leaves D_HOST
           later.  Every fifth round L sends its request twice before the ACK
           (a retransmission).  At the end R sends one NAK of each kind.

/roce/estats must then give, as medians, the network round trip and the host
response this script really injected (D_NET and D_HOST plus its sleeps'
overshoot, timed by the kernel on the veth peers) within 5 % plus 1 ms, no
sample shorter than the shortest injected, no
round trip sample for the rounds with a retransmission, the retransmissions
and each NAK kind counted under its name; /metrics must pass promtool.  The
same timeline runs again on a switch without --estats: every frame both
switches sent must be the same, byte for byte.

Usage: tests/estats/test_estats_switch.py BUILD_DIR
Exit 77 (skipped) when the switch has no --estats yet.  Final line:
"N passed, M failed".
"""
import json
import os
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "pipeline"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from roce_telemetry import telemetry  # noqa: E402
from roce_switch import start_switch_ready, stop_switch, threads_on  # noqa: E402
from pipeline_wire import BTH, AETH  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.packet import Raw  # noqa: E402

UPLINK_MAC, PEER_MAC, GW_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:fe"
PORT_MAC, VM_MAC = "02:00:00:00:01:01", "02:00:00:00:aa:10"
HOST, PEER, L_VIP, R_VIP = "10.0.0.1", "10.0.0.2", "192.168.1.10", "192.168.1.20"
L_VQPN, L_PQPN, R_VQPN, R_PQPN = 17, 4097, 33, 8193
SEND_ONLY, ACK = 0x04, 0x11
D_NET, D_HOST, ROUNDS = 0.060, 0.040, 25
NAKS = {"psn_sequence_error": 0x60, "invalid_request": 0x61, "remote_access_error": 0x62,
        "remote_operational_error": 0x63, "invalid_rd_request": 0x64, "rnr": 0x2e}

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)

passed = failed = 0


def check(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s%s" % (what, (": " + str(detail)) if detail != "" else ""))
    return cond


def config(dev_fabric, dev_tenant):
    def qp(vip, vqpn, pqpn, peer):
        return {"tenant": "blue", "vip": vip, "vqpn": vqpn, "pqpn": pqpn, "type": "rc",
                "peer": {"vip": peer[0], "vqpn": peer[1]}}
    return {
        "version": 1,
        "ports": [
            {"name": "fabric0", "device": dev_fabric, "role": "uplink", "ip": HOST, "mac": UPLINK_MAC,
             "gateway_mac": GW_MAC},
            {"name": "vm-blue-1", "device": dev_tenant, "role": "tenant", "tenant": "blue", "mac": PORT_MAC},
        ],
        "tenants": [{"name": "blue", "vni": 100}],
        "endpoints": [
            {"tenant": "blue", "vip": L_VIP, "host": HOST, "port": "vm-blue-1", "mac": VM_MAC},
            {"tenant": "blue", "vip": R_VIP, "host": PEER},
        ],
        "qps": [qp(L_VIP, L_VQPN, L_PQPN, (R_VIP, R_VQPN)), qp(R_VIP, R_VQPN, R_PQPN, (L_VIP, L_VQPN))],
        "neighbors": [{"ip": PEER, "mac": PEER_MAC}],
    }


def frame(src_mac, dst_mac, src, dst, opcode, dqpn, psn, ackreq=0, syndrome=None):
    p = (Ether(src=src_mac, dst=dst_mac) / IP(src=src, dst=dst, flags="DF", ttl=64) /
         UDP(sport=49152 + (psn & 0xff), dport=4791, chksum=0) /
         BTH(opcode=opcode, dqpn=dqpn, psn=psn, ackreq=ackreq))
    if syndrome is not None:
        p = p / AETH(syndrome=syndrome, msn=psn & 0xffff)
    else:
        p = p / Raw(bytes(range(32)))
    return bytes(p)


def from_l(opcode, psn, **kw):
    return frame(VM_MAC, PORT_MAC, L_VIP, R_VIP, opcode, R_VQPN, psn, **kw)


def from_r(opcode, psn, **kw):
    return frame(PEER_MAC, UPLINK_MAC, PEER, HOST, opcode, L_PQPN, psn, **kw)


class Wire:
    """Raw sockets on the veth peers: the tenant's side and the fabric's side."""

    def __init__(self, tenant_if, fabric_if):
        self.s = {}
        for name, ifc in (("tenant", tenant_if), ("fabric", fabric_if)):
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
            # The kernel's arrival time of each frame: this script's wake-up latency is not the wire's.
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            s.bind((ifc, 0))
            self.s[name] = s
        self.got = []   # every RoCEv2 frame the switch sent, in order: (side, bytes)

    def send(self, side, data):
        self.s[side].send(data)

    def expect(self, side, opcode, psn, timeout=2.0):
        """The next RoCEv2 frame the switch sends on @side with @opcode and @psn, and when it
        arrived (time.time(); None, None if none)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            r, _, _ = select.select([self.s[side]], [], [], max(0, end - time.monotonic()))
            if not r:
                break
            data, anc, _, addr = self.s[side].recvmsg(65536, 64)
            t = time.time()
            for level, kind, val in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", val[:16])
                    t = sec + nsec * 1e-9
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            p = Ether(data)
            if UDP not in p or p[UDP].dport != 4791 or BTH not in p:
                continue
            self.got.append((side, data))
            if p[BTH].opcode == opcode and p[BTH].psn == psn:
                return data, t
        return None, None

    def close(self):
        for s in self.s.values():
            s.close()


def frames():
    """Every frame of the timeline, built beforehand so that sending one takes no time."""
    f = {}
    for k in range(ROUNDS):
        f["req", k] = from_l(SEND_ONLY, k, ackreq=1)
        f["ack", k] = from_r(ACK, k, syndrome=0x1f)
        f["rreq", k] = from_r(SEND_ONLY, 1000 + k, ackreq=1)
        f["lack", k] = from_l(ACK, 1000 + k, syndrome=0x1f)
    for name, syn in NAKS.items():
        f["nak", name] = from_r(ACK, ROUNDS - 1, syndrome=syn)
    return f


def timeline(w, f):
    """The rounds.  The delays this script really injected, from a frame's arrival on a veth peer
    (the kernel's time stamp) to the answer's departure: {"net": [...], "host": [...]} (rounds
    with a retransmission left out)."""
    injected = {"net": [], "host": []}
    for k in range(ROUNDS):
        w.send("tenant", f["req", k])
        data, t = w.expect("fabric", SEND_ONLY, k)
        check(data is not None, "round %d: L's request forwarded" % k)
        if k % 5 == 4:
            w.send("tenant", f["req", k])
            data, t2 = w.expect("fabric", SEND_ONLY, k)
            check(data is not None, "round %d: L's retransmission forwarded" % k)
        while t is not None and time.time() < t + D_NET:
            time.sleep(max(0, t + D_NET - time.time()))
        if t is not None and k % 5 != 4:
            injected["net"].append(time.time() - t)
        w.send("fabric", f["ack", k])
        check(w.expect("tenant", ACK, k)[0] is not None, "round %d: R's ACK delivered" % k)
        w.send("fabric", f["rreq", k])
        data, t = w.expect("tenant", SEND_ONLY, 1000 + k)
        check(data is not None, "round %d: R's request delivered" % k)
        while t is not None and time.time() < t + D_HOST:
            time.sleep(max(0, t + D_HOST - time.time()))
        if t is not None:
            injected["host"].append(time.time() - t)
        w.send("tenant", f["lack", k])
        check(w.expect("fabric", ACK, 1000 + k)[0] is not None, "round %d: L's ACK forwarded" % k)
    for name in NAKS:
        w.send("fabric", f["nak", name])
        check(w.expect("tenant", ACK, ROUNDS - 1)[0] is not None, "NAK %s delivered" % name)
    return injected


def quantile(xs, q):
    """The value of rank ceil(q * n) of @xs, as estats/ ranks."""
    xs = sorted(xs)
    return xs[max(0, -(-int(q * 1000) * len(xs) // 1000) - 1)]


def veth_pair(a, b):
    subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
    for i in (a, b):
        subprocess.run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % i], check=False)
        subprocess.run(["ip", "link", "set", i, "up"], check=True)


def run(build, work, estats, tag):
    """One switch, the timeline; (wire frames, estats telemetry or None, /metrics text or None)."""
    sfx = "%d%s" % (os.getpid() % 10000, tag)
    ti, tp, fi, fp = "esT" + sfx, "esTp" + sfx, "esF" + sfx, "esFp" + sfx
    prefix = "est-sw-" + sfx
    port = 20000 + os.getpid() % 10000
    veth_pair(ti, tp)
    veth_pair(fi, fp)
    proc = w = None
    try:
        cfg = os.path.join(work, "estats-%s.json" % tag)
        with open(cfg, "w") as f:
            json.dump(config("net_af_packet0", "net_af_packet1"), f)
        args = ["--estats", "--metrics", "127.0.0.1:%d" % port] if estats else []
        proc = start_switch_ready(build, prefix, ["net_af_packet0,iface=%s" % fi, "net_af_packet1,iface=%s" % ti],
                                  cfg, "0", args)
        if not check(proc is not None, "%s: the switch starts" % tag):
            return [], None, None, None
        # The main lcore forwards on CPU 0: no other thread of the switch (the exporter's among
        # them) may take its time.
        on0 = threads_on(proc.pid, 0)
        check(not on0, "%s: no thread but the forwarding lcore may run on its CPU 0" % tag, on0)
        f = frames()
        w = Wire(tp, fp)
        time.sleep(0.3)
        injected = timeline(w, f)
        tel = telemetry(prefix, "/roce/estats,blue") if estats else None
        if estats:
            tel["hist"] = telemetry(prefix, "/roce/estats/hist,blue,%s,%d" % (L_VIP, L_VQPN))
        text = None
        if estats:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
                text = r.read().decode()
            scrape_under_siege(port, tag)
        return w.got, tel, text, injected
    finally:
        if w:
            w.close()
        if proc:
            rc, _, err = stop_switch(proc, prefix)
            check(rc == 0, "%s: the switch exits cleanly" % tag, err[-500:] if rc else "")
        for i in (ti, fi):
            subprocess.run(["ip", "link", "del", i], check=False)


def scrape_under_siege(port, tag):
    """300 idle TCP connections and 20 clients sending a header line every 2 s: a new scrape within 1 s."""
    held, slow = [], []
    try:
        for _ in range(300):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            slow.append(s)
        for k in range(2):
            time.sleep(1.0)
            for s in slow:
                s.sendall(b"X-Slow-%d: y\r\n" % k)
        t0 = time.time()
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=1) as r:
                ok = r.status == 200 and b"roce_cnp_forwarded_total" in r.read()
        except OSError:
            ok = False
        check(ok and time.time() - t0 <= 1.0, "%s: with 300 idle and 20 slow connections held, a scrape is "
              "answered within 1 s (%.2f s)" % (tag, time.time() - t0))
    finally:
        for s in held + slow:
            s.close()


def main():
    build = os.path.abspath(sys.argv[1])
    sw = os.path.join(build, "dataplane", "dpdk-roce-vswitch")
    helptext = subprocess.run([sw, "--no-pci", "--no-huge", "-m", "64", "--file-prefix", "est-help-%d" % os.getpid(),
                               "--", "--help"], capture_output=True, text=True)
    shutil.rmtree("/var/run/dpdk/est-help-%d" % os.getpid(), ignore_errors=True)
    if "--estats" not in helptext.stderr + helptext.stdout:
        print("the switch has no --estats yet: skipped")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="estats-sw-")
    try:
        got_on, tel, text, injected = run(build, work, True, "a")
        got_off, _, _, _ = run(build, work, False, "b")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    check(len(got_on) >= 4 * ROUNDS, "the switch forwarded the timeline", len(got_on))
    check(len(got_on) == len(got_off) and got_on == got_off,
          "every frame sent is the same byte for byte with and without Estats", (len(got_on), len(got_off)))
    if tel is None:
        print("%d passed, %d failed" % (passed, failed))
        sys.exit(1)
    hist = tel["hist"]
    conns = [v for k, v in tel.items() if k.isdigit()]
    c = [x for x in conns if x["local_vqpn"] == L_VQPN]
    if check(len(c) == 1, "/roce/estats shows the connection", conns):
        c = c[0]
        ambiguous = sum(1 for k in range(ROUNDS) if k % 5 == 4)
        net, host = c["network_rtt"], c["host_response"]
        check(net["count"] == ROUNDS - ambiguous, "a round trip sample per round without retransmission",
              net["count"])
        check(host["count"] == ROUNDS, "a host response sample per round", host["count"])
        # The switch times a frame from its burst's rx to the answer's burst's rx, a little more
        # than this script's veth peers see: its own polling adds to it, by milliseconds when the
        # machine is loaded.  The median must be within the histogram's 5 % and 1 ms; no sample
        # may be shorter than the shortest delay injected (the p90 is shown, not checked).
        for h, d, kind in ((net, injected["net"], "network round trip"), (host, injected["host"], "host response")):
            for p, q in (("p50_ns", 0.5), ("p90_ns", 0.9)):
                got, want = h[p] / 1e9, quantile(d, q)
                print("%s %s: %.3f ms measured by the switch, %.3f ms injected" % (kind, p, got * 1e3, want * 1e3))
            got, want = h["p50_ns"] / 1e9, quantile(d, 0.5)
            check(want * 0.95 - 0.001 <= got <= want * 1.05 + 0.001,
                  "%s median %.5f s for %.5f s injected" % (kind, got, want))
        for key, d, kind in (("network_rtt", injected["net"], "network"), ("host_response", injected["host"], "host")):
            low = hist[key]["min_ns"] / 1e9
            check(low >= min(d) * 0.95 - 0.0005, "%s: no sample below the shortest injected (%.5f s, %.5f s)"
                  % (kind, low, min(d)))
        check(c["retransmissions"] == ambiguous, "retransmissions counted", c["retransmissions"])
        for name in NAKS:
            check(c["naks_received"][name] == 1, "NAK %s counted under its name" % name, c["naks_received"])
        check(c["naks_received"]["reserved"] == 0, "no reserved NAK")
    ok = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    check(ok.returncode == 0, "promtool accepts /metrics", ok.stdout + ok.stderr)
    line = [x for x in text.splitlines() if x.startswith('roce_estats_network_rtt_seconds_count{tenant="blue"}')]
    check(line and float(line[0].split()[-1]) == ROUNDS - ambiguous, "the tenant's histogram in /metrics", line)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
