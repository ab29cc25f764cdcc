#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Soak: traffic through the switch for a long time, with a reload every second.

  /usr/bin/python3 tests/soak/soak.py BUILD_DIR [--seconds N] [--warmup S] [--no-rss] [--keep]

The switch forwards in both directions (net_pcap infinite_rx on the uplink
and on two tenant ports, transmit to /dev/null) while this test reloads it
once a second, alternating between two configurations A and B: even
reloads through the telemetry command /roce/reload, odd ones by SIGHUP,
both re-reading one configuration file that is atomically replaced first.
A and B differ in every way a reload can: a connection kept, one renamed
(its peer's pqpn), one removed and one added, a memory region added, and
tenant red replaced by green on red's port.  No revocations (issue 7 part
2 is not here yet).

Every second it also samples the process's VmRSS (/proc/PID/status) and
the telemetry counters.  At the end (SIGTERM, the exit summary):
  - every reload was applied (telemetry replies and the SIGHUP log lines);
  - traffic flowed the whole time: the forwarded count grew every second;
  - the mbuf pool is back to its baseline (in_use_end == in_use_start,
    in_use_after_close == 0);
  - RSS is flat after the warm-up: max - min within 1 % of the median;
  - the counters add up: rx = forwarded + dropped = tx - NAKs + dropped (NAKs
    of revocations and of refused requests, at most one per refusal and some
    when a READ was refused), dropped is the sum of the named reasons, and the only reasons are those the two
    configurations explain (no_connection: a flow one of them lacks;
    mr_unknown: a READ into the region only B has);
  - no sanitizer report on stderr (for builds with ASan/UBSan).
Prints the figures, then exactly "N passed, M failed".
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import statistics
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

from roce_layers import BTH, AETH, RETH  # noqa: E402
from scapy.all import Ether, IP, UDP, Raw, wrpcap  # noqa: E402

UPLINK_MAC, PEER_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
BLUE_VM, BLUE_PORT = "02:00:00:00:aa:10", "02:00:00:00:01:01"
RED_VM, RED_PORT = "02:00:00:00:bb:10", "02:00:00:00:02:01"
SANITIZER_RE = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|"
                          r"SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer)")
EXPECTED_DROPS = {"no_connection", "mr_unknown", "revoked"}

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)
    return cond


# blue's connections: (local vqpn, remote vqpn, local pqpn, {config: remote pqpn})
BLUE = [(17, 33, 4113, {"A": 8193, "B": 9193}),   # kept, the peer renumbered in B
        (20, 40, 4116, {"A": 8201}),                # only in A
        (21, 41, 4117, {"B": 8202})]                # only in B


def config(which):
    """Configuration A or B of one host, 10.0.0.1."""
    other = "red" if which == "A" else "green"
    qps = []
    for lq, rq, lp, rp in BLUE:
        if which not in rp:
            continue
        qps.append({"tenant": "blue", "vip": "192.168.1.10", "vqpn": lq, "pqpn": lp, "type": "rc",
                    "peer": {"vip": "192.168.1.20", "vqpn": rq}})
        qps.append({"tenant": "blue", "vip": "192.168.1.20", "vqpn": rq, "pqpn": rp[which], "type": "rc",
                    "peer": {"vip": "192.168.1.10", "vqpn": lq}})
    qps.append({"tenant": other, "vip": "192.168.1.10", "vqpn": 17, "pqpn": 4200 if which == "A" else 4300,
                "type": "rc", "peer": {"vip": "192.168.1.20", "vqpn": 33}})
    qps.append({"tenant": other, "vip": "192.168.1.20", "vqpn": 33, "pqpn": 8300, "type": "rc",
                "peer": {"vip": "192.168.1.10", "vqpn": 17}})
    mrs = [{"tenant": "blue", "vip": "192.168.1.10", "rkey": "0x1234", "addr": "0x7f0000000000",
            "length": 65536, "target_rkey": "0xabcdef", "target_addr": "0x200000000",
            "access": ["remote_write"]}]
    if which == "B":
        mrs.append({"tenant": "blue", "vip": "192.168.1.10", "rkey": "0x5678", "addr": "0x7f0000100000",
                    "length": 4096, "target_rkey": "0xabcdf0", "target_addr": "0x300000000",
                    "access": ["remote_read"]})
    return {
        "version": 1,
        "comment": ["soak test configuration %s; see tests/soak/soak.py" % which],
        "ports": [
            {"name": "fabric0", "device": "net_pcap0", "role": "uplink", "ip": "10.0.0.1",
             "mac": UPLINK_MAC, "gateway_mac": "02:00:00:00:00:fe"},
            {"name": "vm-blue", "device": "net_pcap1", "role": "tenant", "tenant": "blue", "mac": BLUE_PORT},
            {"name": "vm-other", "device": "net_pcap2", "role": "tenant", "tenant": other, "mac": RED_PORT},
        ],
        "tenants": [{"name": "blue", "vni": 100, "mr_check": "enforce"},
                    {"name": other, "vni": 200 if which == "A" else 300, "mr_check": "enforce"}],
        "endpoints": [
            {"tenant": "blue", "vip": "192.168.1.10", "host": "10.0.0.1", "port": "vm-blue", "mac": BLUE_VM},
            {"tenant": "blue", "vip": "192.168.1.20", "host": "10.0.0.2"},
            {"tenant": other, "vip": "192.168.1.10", "host": "10.0.0.1", "port": "vm-other", "mac": RED_VM},
            {"tenant": other, "vip": "192.168.1.20", "host": "10.0.0.2"},
        ],
        "qps": qps,
        "mrs": mrs,
        "neighbors": [{"ip": "10.0.0.2", "mac": PEER_MAC}],
        "dcqcn": {"enabled": False},
        "offload": {"enabled": False},
    }


def traffic(d):
    """Three pcaps: blue's and red's (or green's) frames, and the fabric's to both."""
    def tenant_frames(vm, port, conns):
        out = []
        for lq, rq in conns:
            for psn in range(4):
                out.append(Ether(src=vm, dst=port) / IP(src="192.168.1.10", dst="192.168.1.20", flags="DF") /
                           UDP(sport=50000 + lq, dport=4791, chksum=0) / BTH(opcode=0x04, dqpn=rq, psn=psn) /
                           Raw(bytes(64 + 64 * psn)))
        return out
    blue = tenant_frames(BLUE_VM, BLUE_PORT, [(lq, rq) for lq, rq, _, _ in BLUE])
    red = tenant_frames(RED_VM, RED_PORT, [(17, 33)])
    fab = []
    for lq, rq, lp, rp in BLUE:
        for psn in range(3):
            fab.append(Ether(src=PEER_MAC, dst=UPLINK_MAC) / IP(src="10.0.0.2", dst="10.0.0.1", flags="DF") /
                       UDP(sport=51000 + lq, dport=4791, chksum=0) / BTH(opcode=0x04, dqpn=lp, psn=psn) /
                       Raw(bytes(128)))
        fab.append(Ether(src=PEER_MAC, dst=UPLINK_MAC) / IP(src="10.0.0.2", dst="10.0.0.1", flags="DF") /
                   UDP(sport=51100 + lq, dport=4791, chksum=0) / BTH(opcode=0x11, dqpn=lp, psn=7) /
                   AETH(syndrome=0x1f, msn=3))
    # Memory: a WRITE into the region both have, a READ into the one only B has.
    fab.append(Ether(src=PEER_MAC, dst=UPLINK_MAC) / IP(src="10.0.0.2", dst="10.0.0.1", flags="DF") /
               UDP(sport=52000, dport=4791, chksum=0) / BTH(opcode=0x0a, dqpn=4113, psn=9) /
               RETH(va=0x7f0000000100, rkey=0x1234, dmalen=256) / Raw(bytes(256)))
    fab.append(Ether(src=PEER_MAC, dst=UPLINK_MAC) / IP(src="10.0.0.2", dst="10.0.0.1", flags="DF") /
               UDP(sport=52001, dport=4791, chksum=0) / BTH(opcode=0x0c, dqpn=4113, psn=10) /
               RETH(va=0x7f0000100000, rkey=0x5678, dmalen=1024))
    for psn in range(3):
        for pq in (4200, 4300):   # red's pqpn (A), green's (B)
            fab.append(Ether(src=PEER_MAC, dst=UPLINK_MAC) / IP(src="10.0.0.2", dst="10.0.0.1", flags="DF") /
                       UDP(sport=53000 + psn, dport=4791, chksum=0) / BTH(opcode=0x04, dqpn=pq, psn=psn) /
                       Raw(bytes(96)))
    paths = {}
    for name, frames in (("fabric", fab), ("blue", blue), ("red", red)):
        paths[name] = os.path.join(d, name + ".pcap")
        wrpcap(paths[name], frames)
    return paths


def vm_rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def hugepages_free_mb():
    try:
        with open("/proc/meminfo") as f:
            info = f.read()
        free = int(re.search(r"HugePages_Free:\s+(\d+)", info).group(1))
        size = int(re.search(r"Hugepagesize:\s+(\d+) kB", info).group(1))
        return free * size // 1024 if os.path.ismount("/dev/hugepages") else 0
    except (OSError, AttributeError):
        return 0


def write_atomic(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description="soak: traffic and a reload every second")
    ap.add_argument("build")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=None,
                    help="seconds left out of the RSS check (default: a sixth of the run, 5 to 30)")
    ap.add_argument("--no-rss", action="store_true",
                    help="skip the RSS check (sanitizer builds: ASan's allocator grows RSS by design, "
                         "and LeakSanitizer checks for leaks at exit instead)")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    warmup = a.warmup if a.warmup is not None else min(30, max(5, a.seconds // 6))
    switch = os.path.join(os.path.abspath(a.build), "dataplane", "dpdk-roce-vswitch")
    if not os.access(switch, os.X_OK):
        print("FAIL: %s not built" % switch)
        print("0 passed, 1 failed")
        return 1
    work = tempfile.mkdtemp(prefix="roce-soak-")
    prefix = "soak-%d" % os.getpid()
    cfgs = {w: config(w) for w in "AB"}
    live = os.path.join(work, "live.json")
    write_atomic(live, cfgs["A"])
    pcaps = traffic(work)
    # Hugepages keep the mbuf pool out of VmRSS, which then shows the heap alone.
    huge = hugepages_free_mb() >= 256
    mem = ["-m", "256"] if huge else ["--no-huge", "-m", "512"]
    cmd = [switch, "-l", "1", "--no-pci", "--file-prefix", prefix, "--log-level=warning"] + mem + [
        "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1,tx_pcap=/dev/null" % pcaps["fabric"],
        "--vdev", "net_pcap1,rx_pcap=%s,infinite_rx=1,tx_pcap=/dev/null" % pcaps["blue"],
        "--vdev", "net_pcap2,rx_pcap=%s,infinite_rx=1,tx_pcap=/dev/null" % pcaps["red"],
        "--", "--config", live]
    errlog = open(os.path.join(work, "stderr.log"), "w+")
    sw = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errlog, text=True, start_new_session=True)
    rss, fwd_samples, tel_ok, tel_total, hup_total = [], [], 0, 0, 0
    timings = []
    t0 = time.time()
    try:
        if not check(wait_socket(prefix, sw), "the switch answers telemetry"):
            raise RuntimeError("no telemetry")
        current = "A"
        revoke_total = revoke_ok = 0
        start = time.time()
        for i in range(a.seconds):
            # One reload a second, on the second.
            delay = start + i + 1 - time.time()
            if delay > 0:
                time.sleep(delay)
            if sw.poll() is not None:
                break
            current = "B" if current == "A" else "A"
            write_atomic(live, cfgs[current])
            if i % 2 == 0:
                r = telemetry(prefix, "/roce/reload")
                tel_total += 1
                ok = r.get("result") == "applied"
                tel_ok += ok
                if ok:
                    timings.append(r.get("load_us", 0) + r.get("build_us", 0) + r.get("publish_us", 0))
                elif tel_total - tel_ok <= 3:
                    print("FAIL: reload %d to %s: %s" % (i, current, r))
            else:
                sw.send_signal(signal.SIGHUP)
                hup_total += 1
            # Revocations mixed in: blue 17 <-> 33 (in both files) is cut off
            # on every third second and given back on the next.
            if i % 3 == 1:
                r = telemetry(prefix, "/roce/revoke,blue,192.168.1.10,%d" % BLUE[0][0])
                revoke_total += 1
                revoke_ok += r.get("revoked") == 1
            elif i % 3 == 2:
                r = telemetry(prefix, "/roce/unrevoke,blue,192.168.1.10,%d" % BLUE[0][0])
                revoke_total += 1
                revoke_ok += r.get("restored") == 1
            rss.append(vm_rss_kb(sw.pid))
            st = telemetry(prefix, "/roce/stats")
            fwd_samples.append(st["forwarded_egress"] + st["forwarded_ingress"] + st["forwarded_hairpin"])
        elapsed = time.time() - start
        # Let the last SIGHUP reload finish before the summary.
        time.sleep(0.3)
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        check(False, "soak loop: %r" % e)
        elapsed = time.time() - t0
    finally:
        if sw.poll() is None:
            sw.send_signal(signal.SIGTERM)
        try:
            out, _ = sw.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(sw.pid, signal.SIGKILL)
            out, _ = sw.communicate()
        shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
        for f in glob.glob("/dev/hugepages/%smap_*" % prefix):
            os.unlink(f)
    errlog.seek(0)
    err = errlog.read()
    errlog.close()

    check(sw.returncode == 0, "the switch exits 0 after SIGTERM (rc %s): %s" % (
        sw.returncode, " | ".join(err.strip().splitlines()[-3:])))
    san = [line for line in err.splitlines() if SANITIZER_RE.search(line)]
    check(not san, "no sanitizer report: %s" % "; ".join(san[:5]))
    hup_applied = len(re.findall(r'^reload .*"result": "applied"', err, re.M))
    hup_lines = len(re.findall(r"^reload ", err, re.M))
    check(tel_total > 0 and tel_ok == tel_total, "telemetry reloads applied: %d of %d" % (tel_ok, tel_total))
    check(revoke_total < 2 or revoke_ok == revoke_total,
          "revocations and restorations took effect: %d of %d" % (revoke_ok, revoke_total))
    check(hup_applied == hup_total and hup_lines == hup_total,
          "SIGHUP reloads applied: %d of %d (%d logged)" % (hup_applied, hup_total, hup_lines))
    check(len(fwd_samples) == a.seconds, "sampled every second: %d of %d" % (len(fwd_samples), a.seconds))
    stalls = [i for i in range(1, len(fwd_samples)) if fwd_samples[i] <= fwd_samples[i - 1]]
    check(not stalls and fwd_samples and fwd_samples[0] > 0,
          "forwarding every second (stalled after seconds %s)" % stalls[:10])

    summ = None
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            summ = json.loads(line)
            break
    if not check(summ is not None, "the exit summary is printed"):
        print("%d passed, %d failed" % (passed, failed))
        return 1
    fwd = sum(summ["forwarded"].values())
    drops = {k: v for k, v in summ["drops"].items() if v}
    check(summ["rx_packets"] == fwd + summ["dropped"],
          "rx %d = forwarded %d + dropped %d" % (summ["rx_packets"], fwd, summ["dropped"]))
    # The switch's own frames go out too: NAKs to the requesters of revoked connections, and
    # NAKs of refused RC requests (the READ into B's region, refused under A).
    naks = summ["naks_sent"] + summ.get("naks_refused", -10**12)
    check(summ["rx_packets"] + naks == summ["tx_packets"] + summ["dropped"],
          "rx %d + NAKs %d (revocations %d, refusals %s) = tx %d + dropped %d" % (
              summ["rx_packets"], naks, summ["naks_sent"], summ.get("naks_refused"), summ["tx_packets"],
              summ["dropped"]))
    # Each refused READ follows a forwarded WRITE on its connection, which re-arms its NAK; the
    # switch re-arms per rx burst, so two READs in one burst share one NAK: at most one per refusal.
    refusable = sum(drops.get(r, 0) for r in ("mr_unknown", "mr_out_of_bounds", "mr_access_denied",
                                               "acl_denied"))
    check(0 < summ.get("naks_refused", 0) <= refusable if refusable else summ.get("naks_refused") == 0,
          "NAKs of refused requests: %s, for %d refusals" % (summ.get("naks_refused"), refusable))
    check(revoke_total < 2 or (summ["revocations"] > 0 and drops.get("revoked", 0) > 0),
          "revocations counted (%d) and their frames dropped as revoked" % summ["revocations"])
    check(summ["dropped"] == sum(summ["drops"].values()), "dropped = the sum of the reasons")
    check(set(drops) <= EXPECTED_DROPS, "drops only for reasons the configurations explain: %s" % drops)
    check(drops.get("no_connection", 0) > 0, "both configurations were in force (no_connection drops)")
    m = summ.get("mbufs", {})
    check(m.get("in_use_end") == m.get("in_use_start") and m.get("in_use_after_close") == 0,
          "mbuf pool back to its baseline: %s" % m)
    post = [r for r in rss[warmup:] if r]
    if a.no_rss:
        print("RSS not checked (--no-rss)")
    elif check(len(post) >= 2, "RSS samples after the %d s warm-up: %d" % (warmup, len(post))):
        med = statistics.median(post)
        spread = (max(post) - min(post)) / med * 100
        check(spread <= 1.0, "RSS flat after warm-up: %d..%d kB, spread %.2f %% of the median (limit 1 %%)" % (
            min(post), max(post), spread))

    print("soak: %d s (%.1f s), %s, reloads %d by telemetry + %d by SIGHUP" % (
        a.seconds, elapsed, "hugepages" if huge else "--no-huge", tel_total, hup_total))
    if summ:
        print("frames: rx %d, forwarded %d (%.2f Mpps), dropped %d %s" % (
            summ["rx_packets"], fwd, summ["rx_packets"] / max(elapsed, 1e-9) / 1e6, summ["dropped"],
            json.dumps(drops)))
        print("mbufs: %s" % json.dumps(summ.get("mbufs")))
    if rss and all(rss):
        print("RSS kB: first %d, at warm-up end %d, min %d, max %d, last %d (warm-up %d s)" % (
            rss[0], rss[min(warmup, len(rss) - 1)], min(post or rss), max(post or rss), rss[-1], warmup))
        print("RSS per second: %s" % " ".join(str(r) for r in rss))
    if timings:
        timings.sort()
        print("telemetry reload time (load + build + publish): median %.2f ms, max %.2f ms" % (
            timings[len(timings) // 2] / 1000, timings[-1] / 1000))
    if a.keep:
        print("kept %s" % work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
