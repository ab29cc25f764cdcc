#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Deltas through the control socket while the switch forwards.

The switch (dpdk-roce-vswitch --control) forwards
blue's traffic (net_pcap infinite_rx on the tenant port, net_null uplink) on
three flows while this test sends N batches through the control socket, in
turn "up" (add the connection 20 <-> 40 and move 33 to pqpn 9193) and "down"
(delete 20 <-> 40, 33 back to 8193), with three bad batches every 50, which
must be rejected with their JSON paths and change nothing. The connection
21 <-> 41 is in no batch: it must keep its state (its counters only grow,
its first frame's time stays). dpdk-dumpcap samples the uplink throughout.
roce-ctl sends some of the batches, from files and from stdin.

Pass: every answer is right; every sampled frame is right for its flow under
the mapping before or after some batch (addresses, MACs, DestQP, ICRC, IPv4
checksum); every frame received was forwarded or dropped as no_connection;
the untouched connection kept its state; the mbuf pool is back to its
baseline; the socket is mode 0600 and gone after the exit.

Usage: tests/delta/test_delta_switch.py BUILD_DIR [--batches N] [--big N]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import stat
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
# flow (UDP source port) -> (local vqpn, remote vqpn, remote pqpns it may leave with)
FLOWS = {50017: (17, 33, {8193, 9193}), 50020: (20, 40, {8201}), 50021: (21, 41, {8202})}

passed = failed = 0
LIMIT = 48 << 20  # --max-config-bytes of the switch under test
IDLE_S = 3       # --control-idle-s
HELD = 64 << 20  # --control-max-bytes
METRICS_PORT = 20000 + os.getpid() % 10000


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def qp(vip, vqpn, pqpn, pvip, pvqpn):
    return {"tenant": "blue", "vip": vip, "vqpn": vqpn, "pqpn": pqpn, "type": "rc",
            "peer": {"vip": pvip, "vqpn": pvqpn}}


def pair(lq, rq, rp):
    return [qp("192.168.1.10", lq, 4096 + lq, "192.168.1.20", rq), qp("192.168.1.20", rq, rp, "192.168.1.10", lq)]


def config():
    return {
        "version": 1,
        "ports": [
            {"name": "fabric0", "device": "net_null0", "role": "uplink", "ip": "10.0.0.1",
             "mac": UPLINK_MAC, "gateway_mac": "02:00:00:00:00:fe"},
            {"name": "vm-blue-1", "device": "net_pcap0", "role": "tenant", "tenant": "blue", "mac": BLUE_PORT},
            {"name": "vm-red", "device": "net_null1", "role": "tenant", "tenant": "red", "mac": "02:00:00:00:02:01"},
        ],
        "tenants": [{"name": "blue", "vni": 100}, {"name": "red", "vni": 200}],
        "endpoints": [
            {"tenant": "blue", "vip": "192.168.1.10", "host": "10.0.0.1", "port": "vm-blue-1", "mac": BLUE_VM},
            {"tenant": "blue", "vip": "192.168.1.20", "host": "10.0.0.2"},
        ],
        "qps": pair(17, 33, 8193) + pair(21, 41, 8202),
        "neighbors": [{"ip": "10.0.0.2", "mac": PEER_MAC}],
    }


UP = {"op": "apply", "put": {"qps": pair(20, 40, 8201) + [qp("192.168.1.20", 33, 9193, "192.168.1.10", 17)]}}
DOWN = {"op": "apply", "delete": {"qps": [{"tenant": "blue", "vip": "192.168.1.10", "vqpn": 20},
                                          {"tenant": "blue", "vip": "192.168.1.20", "vqpn": 40}]},
        "put": {"qps": [qp("192.168.1.20", 33, 8193, "192.168.1.10", 17)]}}
# Bad batches: (request text, a message that must be among the errors).
BAD = [
    ('{"op": "apply", "put": {"qps": [}', "request:1:"),
    (json.dumps({"op": "apply", "put": {"qps": [qp("192.168.1.10", 60, 4096 + 17, "192.168.1.20", 61),
                                                qp("192.168.1.20", 61, 8300, "192.168.1.10", 60)]}}),
     "put.qps[0].pqpn: 4113 is already used on host 10.0.0.1"),
    (json.dumps({"op": "apply", "delete": {"qps": [{"tenant": "blue", "vip": "192.168.1.20", "vqpn": 41}]},
                 "put": {"tenants": [{"name": "red", "vni": 100}]}}),
     "qps{blue 192.168.1.10 21}.peer: 192.168.1.20 qp 41 is not a qp of tenant \"blue\""),
]


def traffic(path):
    frames = []
    for sport, (lq, rq, _) in FLOWS.items():
        for psn in range(4):
            frames.append(Ether(src=BLUE_VM, dst=BLUE_PORT) /
                          IP(src="192.168.1.10", dst="192.168.1.20", flags="DF") /
                          UDP(sport=sport, dport=4791, chksum=0) /
                          BTH(opcode=0x04, dqpn=rq, psn=psn) / Raw(bytes(64)))
    wrpcap(path, frames)


class Ctl:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(20)
        self.s.connect(path)
        self.buf = b""

    def ask(self, text):
        self.s.sendall(text.encode() + b"\n")
        while b"\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise OSError("the switch closed the control socket")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)


def answered_within(sock, seconds=1.0):
    """A new client's status, or None when it takes longer than @seconds."""
    t0 = time.time()
    try:
        c = Ctl(sock)
        c.s.settimeout(seconds)
        r = c.ask('{"op": "status"}')
        c.s.close()
    except OSError:
        return None
    return r if time.time() - t0 <= seconds else None


def abuse(sock):
    """Clients that hold on, do not read or send without end cannot keep a new client out."""
    idle = []
    for _ in range(40):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock)
        idle.append(s)
    time.sleep(1.2)
    r = answered_within(sock)
    check(r and r.get("result") == "ok", "40 idle clients: a new client is answered within 1 s: %s" % r)
    for s in idle:
        s.close()
    # A client that sends requests and never reads its answers.
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow.connect(sock)
    slow.setblocking(False)
    sent = 0
    try:
        for _ in range(20000):
            sent += slow.send(b'{"op": "status"}\n' * 64)
    except BlockingIOError:
        pass
    r = answered_within(sock)
    check(r and r.get("result") == "ok" and sent > 65536,
          "a client that does not read (%d bytes of requests sent): another is answered within 1 s: %s" % (sent, r))
    slow.close()
    # Requests without an end, from several clients: past the bound in all, refused and closed.
    big = []
    refused = 0
    for _ in range(3):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock)
        s.settimeout(10)
        big.append(s)
    chunk = b"x" * (1 << 20)
    for s in big:
        try:
            for _ in range(30):
                s.sendall(chunk)
        except OSError:
            refused += 1        # closed by the switch while sending
            continue
        try:
            s.settimeout(2)
            got = s.recv(4096)
            refused += got == b"" or b"in all" in got
        except socket.timeout:
            pass                # still held: not refused
        except OSError:
            refused += 1        # reset: the switch closed it with the request unread
    for s in big:
        s.close()
    r = answered_within(sock)
    check(refused >= 1 and r and r.get("result") == "ok",
          "3 clients sending 30 MiB without a newline (bound %d MiB in all): %d refused; a new client answered: %s" % (
              HELD >> 20, refused, r))
    # A silent client is closed after the idle time.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    s.settimeout(IDLE_S + 3)
    t0 = time.time()
    try:
        closed = s.recv(16) == b""
    except OSError:
        closed = False
    check(closed and IDLE_S - 0.5 <= time.time() - t0 <= IDLE_S + 2,
          "a silent client is closed after about %d s (%.1f s)" % (IDLE_S, time.time() - t0))
    s.close()


def scrape(timeout=10.0):
    """Seconds one /metrics scrape took, or None when it failed."""
    import urllib.request
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % METRICS_PORT, timeout=timeout) as r:
            r.read()
    except OSError:
        return None
    return time.perf_counter() - t0


def scrape_during_change(sock, cfg, n_big):
    """A reload that holds the control lock for a long time (@n_big connections built, then back) keeps no scrape
    waiting: the slowest scrape meanwhile takes less than half the time the lock was held."""
    import threading
    big = config()
    big["tenants"][0]["max_qps"] = 2 * n_big + 10
    big["tenants"][0]["vni"] = 101  # a tenant change: the whole path, a new overlay built under the lock
    big["qps"] += [q for i in range(n_big) for q in (qp("192.168.1.10", 1000 + i, 100000 + i, "192.168.1.20", 1000 + i),
                                                     qp("192.168.1.20", 1000 + i, 200000 + i, "192.168.1.10", 1000 + i))]
    path = os.path.join(work, "big-qps.json")
    with open(path, "w") as f:
        json.dump(big, f, separators=(",", ":"))
    for target in (path, cfg):
        ans = {}

        def reload():
            c = Ctl(sock)
            c.s.settimeout(120)
            ans.update(c.ask(json.dumps({"op": "reload", "path": target})))

        th = threading.Thread(target=reload)
        th.start()
        lat = []
        while th.is_alive():
            lat.append(scrape())
        th.join()
        held_ms = ans.get("build_ms", 0) + ans.get("publish_ms", 0)
        worst = max((x for x in lat if x is not None), default=None)
        print("reload of %s: build %.0f ms, publish %.0f ms; %d scrapes meanwhile, the slowest %.1f ms" % (
            os.path.basename(target), ans.get("build_ms", 0), ans.get("publish_ms", 0), len(lat),
            1e3 * (worst or 0)))
        big_one = target == path
        check(ans.get("result") == "applied" and None not in lat and len(lat) >= 2 and
              (not big_one or (held_ms >= 100 and worst < 0.5 * held_ms / 1e3)),
              "scrapes during a reload holding the control lock %.0f ms: %d answered, the slowest in %.1f ms%s" % (
                  held_ms, len(lat), 1e3 * (worst or 0), "" if ans.get("result") == "applied" else ": %s" % ans))


def reload_files():
    """What reload_paths() asks the switch to load, made in @work: (fifo, secret, big, many)."""
    fifo = os.path.join(work, "fifo")
    os.mkfifo(fifo)
    secret = os.path.join(work, "secret")
    with open(secret, "w") as f:
        f.write("hunter2secret:$6$salt$hash:19000:0:99999:7:::\n")
    big = os.path.join(work, "big.json")
    with open(big, "w") as f:
        json.dump({"version": 1, "comment": "x" * (LIMIT + 1)}, f)
    many = os.path.join(work, "many-errors.json")
    bad = config()
    bad["qps"] = [{"tenant": "nope-%d" % i, "vip": "192.168.1.10", "vqpn": 100 + i, "pqpn": 20000 + i, "type": "ud"}
                  for i in range(3000)]
    with open(many, "w") as f:
        json.dump(bad, f)
    return fifo, secret, big, many


def reload_paths(ctl, st, files=None):
    """Reloads of what is not a configuration file (@files, or reload_files()): refused at once, whole, valid,
    quoting nothing."""
    fifo, secret, big, many = files or reload_files()
    for path, what in ((fifo, "not a regular file"), ("/dev/zero", "not a regular file"),
                       (work, "is a directory"), (big, "more than the largest file taken"),
                       (secret, "not a JSON object")):
        t0 = time.time()
        r = ctl.ask(json.dumps({"op": "reload", "path": path}))
        errs = r.get("errors", [])
        check(r.get("result") == "rejected" and len(errs) == 1 and what in errs[0] and
              "hunter2" not in json.dumps(r) and time.time() - t0 < 5,
              "reload of %s refused at once (%s), quoting nothing: %s" % (path, what, r))
    r = ctl.ask(json.dumps({"op": "reload", "path": many}))
    errs = r.get("errors", [])
    check(r.get("result") == "rejected" and len(errs) > 1000 and len(json.dumps(r)) > 65536,
          "a reload with 3000 errors is answered whole, as valid JSON (%d errors, %d bytes)" % (
              len(errs), len(json.dumps(r))))
    after = ctl.ask('{"op": "status"}')
    check(all(st[k] == after[k] for k in ("tenants", "endpoints", "qps", "connections", "mrs")),
          "the refused reloads changed nothing: %s" % after)


def conn21(prefix):
    for c in telemetry(prefix, "/roce/connections,blue").values():
        if isinstance(c, dict) and c.get("local_vqpn") == 21:
            return c
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--batches", type=int, default=500)
    ap.add_argument("--big", type=int, default=120000,
                    help="connections of the reload scraped through (the lock must be held 100 ms or more)")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    switch = os.path.join(build, "dataplane", "dpdk-roce-vswitch")
    inspect = os.path.join(build, "tools", "roce-inspect")
    rocectl = os.path.join(ROOT, "tools", "roce-ctl")
    global work
    work = tempfile.mkdtemp(prefix="dlt-delta-")
    prefix = "dlt-delta-%d" % os.getpid()
    sock = os.path.join(work, "ctl.sock")
    cfg = os.path.join(work, "A.json")
    with open(cfg, "w") as f:
        json.dump(config(), f)
    up_file = os.path.join(work, "up.json")
    with open(up_file, "w") as f:
        json.dump({"qps": pair(20, 40, 8201)}, f)
    pcap = os.path.join(work, "blue.pcap")
    traffic(pcap)
    capture = os.path.join(work, "uplink.pcapng")

    cmd = [switch, "-l", "1", "--no-pci", "-m", "512", "--file-prefix", prefix, "--log-level=warning",
           "--vdev", "net_null0,no-rx=1", "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap,
           "--vdev", "net_null1,no-rx=1", "--", "--config", cfg, "--control", sock,
           "--max-config-bytes", str(LIMIT), "--control-idle-s", str(IDLE_S),
           "--control-max-bytes", str(HELD), "--metrics", "127.0.0.1:%d" % METRICS_PORT, "--max-connections", str(max(65536, 2 * a.big))]
    sw = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dumpcap = None
    lat = []
    try:
        check(wait_socket(prefix, sw), "the switch answers telemetry")
        check(os.path.exists(sock) and stat.S_IMODE(os.stat(sock).st_mode) == 0o600 and
              os.stat(sock).st_uid == os.getuid(), "the control socket is mode 0600, ours")
        abuse(sock)
        ctl = Ctl(sock)
        st = ctl.ask('{"op": "status", "id": 7}')
        check(st.get("id") == 7 and st.get("result") == "ok" and st.get("qps") == 4 and st.get("connections") == 2,
              "status: %s" % st)
        # roce-ctl: put from a file, delete from stdin, status.
        r = subprocess.run([rocectl, "-s", sock, "put", up_file], capture_output=True, text=True)
        ans = json.loads(r.stdout) if r.stdout else {}
        check(r.returncode == 0 and ans.get("connections", {}).get("added") == 1,
              "roce-ctl put FILE: %s %s" % (r.stdout, r.stderr))
        r = subprocess.run([rocectl, "-s", sock, "delete", "-"], input=json.dumps({"qps": pair(20, 40, 8201)}),
                           capture_output=True, text=True)
        ans = json.loads(r.stdout) if r.stdout else {}
        check(r.returncode == 0 and ans.get("connections", {}).get("removed") == 1,
              "roce-ctl delete -: %s %s" % (r.stdout, r.stderr))
        r = subprocess.run([rocectl, "-s", sock, "delete", "-"], input=json.dumps({"qps": pair(20, 40, 8201)}),
                           capture_output=True, text=True)
        check(r.returncode == 1 and "delete.qps[0]: no such qp" in r.stdout, "roce-ctl: a rejected batch exits 1")
        reload_paths(ctl, st)
        scrape_during_change(sock, cfg, a.big)
        # That took longer than the idle time: the switch has closed this client.
        ctl = Ctl(sock)

        dumpcap = subprocess.Popen(["dpdk-dumpcap", "--file-prefix=" + prefix, "-i", "0", "-w", capture,
                                    "-s", "128", "-q", "-a", "filesize:400000"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        first = conn21(prefix)
        check(first is not None and first["first_seen_ns"] > 0, "connection 21 carries traffic: %s" % first)
        good = bad_ok = 0
        last_pkts = first["egress_packets"] if first else 0
        kept_ok = True
        for i in range(a.batches):
            if i % 50 == 25:
                before = ctl.ask('{"op": "status"}')
                for text, what in BAD:
                    r = ctl.ask(text)
                    ok = r.get("result") == "rejected" and any(what in e for e in r.get("errors", []))
                    bad_ok += ok
                    if not ok:
                        print("FAIL: bad batch not rejected as expected: %s" % r)
                after = ctl.ask('{"op": "status"}')
                check(all(before[k] == after[k] for k in ("tenants", "endpoints", "qps", "connections", "mrs")),
                      "rejected batches changed nothing (%d)" % i)
                c = conn21(prefix)
                kept_ok &= c is not None and c["first_seen_ns"] == first["first_seen_ns"] and \
                    c["egress_packets"] >= last_pkts
                last_pkts = c["egress_packets"] if c else last_pkts
            up = i % 2 == 0
            # Paced so that the batches span dumpcap's sample (a few seconds), which ends by itself.
            time.sleep(0.004)
            t0 = time.perf_counter()
            r = ctl.ask(json.dumps(UP if up else DOWN))
            lat.append(time.perf_counter() - t0)
            cn = r.get("connections", {})
            ok = (r.get("result") == "applied" and cn.get("added") == (1 if up else 0) and
                  cn.get("removed") == (0 if up else 1) and cn.get("changed") == 1 and cn.get("kept") == 1)
            good += ok
            if not ok and good + 5 > i:
                print("FAIL: batch %d (%s): %s" % (i, "up" if up else "down", r))
        check(good == a.batches, "%d of %d batches applied with the right summary" % (good, a.batches))
        check(bad_ok == len(BAD) * len([i for i in range(a.batches) if i % 50 == 25]),
              "%d bad batches rejected by JSON path" % bad_ok)
        c = conn21(prefix)
        check(kept_ok and c is not None and c["first_seen_ns"] == first["first_seen_ns"] and
              c["egress_packets"] > first["egress_packets"],
              "the untouched connection kept its state: %s -> %s" % (first, c))
        time.sleep(0.3)
    finally:
        # The switch goes first: a dumpcap that leaves while the switch forwards races with the
        # switch's pdump callback in DPDK 22.11 (rte_pcapng_copy into the leaving dumpcap's pool).
        sw.send_signal(signal.SIGTERM)
        try:
            out, err = sw.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            sw.kill()
            out, err = sw.communicate()
        if dumpcap:
            dumpcap.send_signal(signal.SIGINT)
            try:
                dumpcap.wait(timeout=10)
            except subprocess.TimeoutExpired:
                dumpcap.kill()
                dumpcap.wait()
        shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    check(sw.returncode == 0, "the switch exits cleanly (%s): %s" % (sw.returncode, err[-500:]))
    check(not os.path.exists(sock), "the control socket is removed at exit")
    summary = json.loads(out.strip().splitlines()[-1])
    drops = {k: v for k, v in summary["drops"].items() if v}
    fwd = summary["forwarded"]["egress"] + summary["forwarded"]["ingress"] + summary["forwarded"]["hairpin"]
    check(set(drops) <= {"no_connection"}, "drops only for mappings not in force: %s" % drops)
    check(summary["rx_packets"] == fwd + drops.get("no_connection", 0),
          "received %d = forwarded %d + dropped %d" % (summary["rx_packets"], fwd, summary["dropped"]))
    m = summary["mbufs"]
    check(m["in_use_end"] == m["in_use_start"] and m["in_use_after_close"] == 0, "mbuf pool back to baseline: %s" % m)

    dec = subprocess.Popen([inspect, capture], stdout=subprocess.PIPE, text=True)
    bad = n_frames = 0
    seen = set()
    for line in dec.stdout:
        f = json.loads(line)
        n_frames += 1
        sport = f.get("udp", {}).get("sport")
        allowed = FLOWS[sport][2] if sport in FLOWS else set()
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
    check(len(seen) == 4, "all four (flow, pqpn) pairs seen: %s" % sorted(seen))
    lat.sort()
    if lat:
        print("batches: %d, answer latency p50 %.3f ms, p99 %.3f ms" %
              (len(lat), 1e3 * lat[len(lat) // 2], 1e3 * lat[min(len(lat) - 1, len(lat) * 99 // 100)]))
    shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


work = None

if __name__ == "__main__":
    try:
        rc = main()
    finally:
        # Also when a step raised: the temporary directory goes.
        if work:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(rc)
