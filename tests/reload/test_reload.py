#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Live reload under traffic.

The switch forwards blue's traffic (net_pcap infinite_rx on the tenant port,
net_null uplink) while this test swaps between two configurations A and B
1 000 times through /roce/reload,PATH, with a malformed and a semantically
broken file every 100 reloads, which must be rejected while forwarding goes
on.  dpdk-dumpcap samples the uplink the whole time.

A and B differ in every way a reload can: B renumbers the peer of blue's
17 <-> 33 (pqpn 8193 -> 9193), removes 20 <-> 40, adds 21 <-> 41 and a
memory region, and replaces tenant red by green on red's port.

Pass: every sampled frame is correct under A or B for its flow (addresses,
MACs, DestQP, ICRC and IPv4 checksum), every frame the switch received was
forwarded or dropped as no_connection (a mapping the current configuration
does not have) and under no other reason, the mbuf pool is back to its
baseline, and the reload replies are right.

Usage: tests/reload/test_reload.py BUILD_DIR [--reloads N]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from roce_telemetry import telemetry  # noqa: E402
from roce_switch import wait_socket  # noqa: E402

from roce_layers import BTH  # noqa: E402
from scapy.all import Ether, IP, UDP, Raw, wrpcap  # noqa: E402

UPLINK_MAC, PEER_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
BLUE_VM, BLUE_PORT = "02:00:00:00:aa:10", "02:00:00:00:01:01"

# flow (UDP source port) -> (local vqpn, remote vqpn, {config: remote pqpn})
FLOWS = {
    50017: (17, 33, {"A": 8193, "B": 9193}),
    50020: (20, 40, {"A": 8201}),
    50021: (21, 41, {"B": 8202}),
}

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def config(which):
    qps, mrs = [], [{"tenant": "blue", "vip": "192.168.1.10", "rkey": 4660, "addr": "0x7f0000000000",
                     "length": 65536, "target_rkey": 11259375, "target_addr": "0x200000000",
                     "access": ["remote_write"]}]
    for sport, (lq, rq, pq) in FLOWS.items():
        if which not in pq:
            continue
        qps.append({"tenant": "blue", "vip": "192.168.1.10", "vqpn": lq, "pqpn": 4096 + lq, "type": "rc",
                    "peer": {"vip": "192.168.1.20", "vqpn": rq}})
        qps.append({"tenant": "blue", "vip": "192.168.1.20", "vqpn": rq, "pqpn": pq[which], "type": "rc",
                    "peer": {"vip": "192.168.1.10", "vqpn": lq}})
    other = "red" if which == "A" else "green"
    if which == "B":
        mrs.append({"tenant": "blue", "vip": "192.168.1.10", "rkey": 4661, "addr": "0x7f0000100000",
                    "length": 4096, "target_rkey": 11259376, "target_addr": "0x300000000",
                    "access": ["remote_read"]})
    return {
        "version": 1,
        "ports": [
            {"name": "fabric0", "device": "net_null0", "role": "uplink", "ip": "10.0.0.1",
             "mac": UPLINK_MAC, "gateway_mac": "02:00:00:00:00:fe"},
            {"name": "vm-blue-1", "device": "net_pcap0", "role": "tenant", "tenant": "blue",
             "mac": BLUE_PORT},
            {"name": "vm-other", "device": "net_null1", "role": "tenant", "tenant": other,
             "mac": "02:00:00:00:02:01"},
        ],
        "tenants": [{"name": "blue", "vni": 100}, {"name": other, "vni": 200 if which == "A" else 300}],
        "endpoints": [
            {"tenant": "blue", "vip": "192.168.1.10", "host": "10.0.0.1", "port": "vm-blue-1",
             "mac": BLUE_VM},
            {"tenant": "blue", "vip": "192.168.1.20", "host": "10.0.0.2"},
            {"tenant": other, "vip": "192.168.1.10", "host": "10.0.0.1", "port": "vm-other",
             "mac": "02:00:00:00:bb:10"},
        ],
        "qps": qps,
        "mrs": mrs,
        "neighbors": [{"ip": "10.0.0.2", "mac": PEER_MAC}],
    }


def traffic(path):
    frames = []
    for sport, (lq, rq, _) in FLOWS.items():
        for psn in range(4):
            frames.append(Ether(src=BLUE_VM, dst=BLUE_PORT) /
                          IP(src="192.168.1.10", dst="192.168.1.20", flags="DF") /
                          UDP(sport=sport, dport=4791, chksum=0) /
                          BTH(opcode=0x04, dqpn=rq, psn=psn) / Raw(bytes(64)))
    wrpcap(path, frames)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--reloads", type=int, default=1000)
    a = ap.parse_args()
    switch = os.path.join(os.path.abspath(a.build), "dataplane", "dpdk-roce-vswitch")
    inspect = os.path.join(os.path.abspath(a.build), "tools", "roce-inspect")
    work = tempfile.mkdtemp(prefix="roce-reload-")
    prefix = "reload-%d" % os.getpid()
    paths = {}
    for which in ("A", "B"):
        paths[which] = os.path.join(work, which + ".json")
        with open(paths[which], "w") as f:
            json.dump(config(which), f)
    bad_syntax = os.path.join(work, "bad-syntax.json")
    with open(bad_syntax, "w") as f:
        f.write('{"version": 1,\n "ports": [}\n')
    bad_meaning = os.path.join(work, "bad-meaning.json")
    broken = config("A")
    broken["qps"][1]["pqpn"] = broken["qps"][3]["pqpn"]
    with open(bad_meaning, "w") as f:
        json.dump(broken, f)
    bad_ports = os.path.join(work, "bad-ports.json")
    moved = config("A")
    moved["ports"][2]["device"] = "net_null7"
    with open(bad_ports, "w") as f:
        json.dump(moved, f)
    pcap = os.path.join(work, "blue.pcap")
    traffic(pcap)
    capture = os.path.join(work, "uplink.pcapng")

    cmd = [switch, "-l", "1", "--no-pci", "--file-prefix", prefix, "--log-level=warning",
           "--vdev", "net_null0,no-rx=1", "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap,
           "--vdev", "net_null1,no-rx=1", "--", "--config", paths["A"]]
    sw = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dumpcap = None
    try:
        check(wait_socket(prefix, sw), "the switch answers telemetry")
        # A bounded sample (about 3.5 M frames, a few seconds at dumpcap's pace):
        # the reloads start at once and take seconds too.
        dumpcap = subprocess.Popen(["dpdk-dumpcap", "--file-prefix=" + prefix, "-i", "0", "-w", capture,
                                    "-s", "128", "-q", "-a", "filesize:600000"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        t0 = time.time()
        rejected_ok = applied_ok = 0
        last_tx = 0
        current = "A"
        for i in range(a.reloads):
            if i % 100 == 50:
                for bad, what in ((bad_syntax, "bad-syntax.json:2:"), (bad_meaning, "is already used on host"),
                                  (bad_ports, "ports[2].device")):
                    r = telemetry(prefix, "/roce/reload," + bad)
                    ok = r.get("result") == "rejected" and any(what in e for e in r.get("errors", []))
                    rejected_ok += ok
                    if not ok:
                        print("FAIL: %s not rejected as expected: %s" % (bad, r))
                stats = telemetry(prefix, "/roce/stats")
                check(stats["tx_packets"] > last_tx, "forwarding continues after rejected reloads (%d)" % i)
                last_tx = stats["tx_packets"]
            current = "B" if current == "A" else "A"
            r = telemetry(prefix, "/roce/reload," + paths[current])
            expect_added = 1 if current == "B" else 1
            ok = (r.get("result") == "applied" and r.get("connections_removed") == 1 and
                  r.get("connections_added") == expect_added and r.get("connections_changed") == 1 and
                  r.get("tenants_added") == 1 and r.get("tenants_removed") == 1)
            applied_ok += ok
            if not ok and applied_ok + 5 > i:
                print("FAIL: reload %d to %s: %s" % (i, current, r))
        elapsed = time.time() - t0
        check(applied_ok == a.reloads, "%d of %d reloads applied with the right summary" % (applied_ok, a.reloads))
        check(rejected_ok == 3 * (a.reloads // 100), "%d bad files rejected with their error" % rejected_ok)
        conns = telemetry(prefix, "/roce/connections,blue")
        check(conns["total"] == 2, "two blue connections after the last reload (%s)" % conns.get("total"))
        time.sleep(0.5)
    finally:
        if dumpcap:
            dumpcap.send_signal(signal.SIGINT)
            try:
                dumpcap.wait(timeout=20)
            except subprocess.TimeoutExpired:
                dumpcap.kill()
        sw.send_signal(signal.SIGTERM)
        try:
            out, err = sw.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            sw.kill()
            out, err = sw.communicate()
        shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    check(sw.returncode == 0, "the switch exits cleanly (%s): %s" % (sw.returncode, err[-500:]))
    summary = json.loads(out.strip().splitlines()[-1])
    drops = {k: v for k, v in summary["drops"].items() if v}
    fwd = summary["forwarded"]["egress"] + summary["forwarded"]["ingress"] + summary["forwarded"]["hairpin"]
    check(set(drops) <= {"no_connection"}, "drops only for mappings a configuration lacks: %s" % drops)
    check(summary["rx_packets"] == fwd + drops.get("no_connection", 0),
          "received %d = forwarded %d + dropped %d" % (summary["rx_packets"], fwd, summary["dropped"]))
    check(drops.get("no_connection", 0) > 0 and fwd > 0, "both configurations were in force")
    m = summary["mbufs"]
    check(m["in_use_end"] == m["in_use_start"] and m["in_use_after_close"] == 0, "mbuf pool back to baseline: %s" % m)

    # Every sampled frame is right for its flow under A or B.
    # Streamed: the sample holds millions of frames.
    dec = subprocess.Popen([inspect, capture], stdout=subprocess.PIPE, text=True)
    bad = n_frames = 0
    seen = set()
    for line in dec.stdout:
        f = json.loads(line)
        n_frames += 1
        sport = f.get("udp", {}).get("sport")
        allowed = set(FLOWS[sport][2].values()) if sport in FLOWS else set()
        ok = (f["ok"] and f["icrc_ok"] and f.get("ipv4_csum_ok") and f["ip"]["src"] == "10.0.0.1" and
              f["ip"]["dst"] == "10.0.0.2" and f["eth"]["src"] == UPLINK_MAC and f["eth"]["dst"] == PEER_MAC
              and f["bth"]["dqpn"] in allowed)
        if ok:
            seen.add((sport, f["bth"]["dqpn"]))
        elif bad < 5:
            print("FAIL: sampled frame wrong for its flow: %s" % json.dumps(f)[:400])
        bad += not ok
    check(dec.wait() == 0, "roce-inspect read the sample")
    check(n_frames > 1000, "dumpcap sampled %d frames" % n_frames)
    check(bad == 0, "%d of %d sampled frames wrong" % (bad, n_frames))
    check(len(seen) == 4, "all four (flow, pqpn) pairs of A and B seen: %s" % sorted(seen))
    print("reloads: %d in %.1f s (%.2f ms each), frames received %d, sampled %d" %
          (a.reloads, elapsed, 1000 * elapsed / max(a.reloads, 1), summary["rx_packets"], n_frames))
    shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
