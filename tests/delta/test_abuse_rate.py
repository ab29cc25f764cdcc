#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Forwarding while the operator surfaces are abused.

The switch forwards blue's traffic (net_pcap infinite_rx to net_null) on
one lcore, CPU 1, with the control socket and the /metrics exporter open.
This test runs on CPU 0, as an operator's clients or a hostile tenant's
would on a host whose forwarding CPUs are reserved, and measures the
forwarding rate (/roce/stats rx_packets, in windows of 0.25 s) before,
during and after each abuse, each repeated for at least 3 s:

- /metrics: 300 idle TCP connections and 20 clients sending one header
  line a second, then scrapes in a loop from four clients;
- the control socket: 40 idle clients, a client that never reads its
  answers, three clients sending 30 MiB without a newline, a silent client
  (test_delta_switch.abuse());
- reloads of a FIFO, a device, a directory, a file past --max-config-bytes
  and 3 000 errors (test_delta_switch.reload_paths()).

Pass: each abuse's own checks (a new client answered within 1 s, the
bounds, valid answers); the forwarding lcore never waits for its CPU
(less than 2 % of the time on a run queue); and, during each abuse, a
median forwarding rate of at least 0.9 of the median just before and just
after it.  The virtual machines this runs on lose their CPUs to their host
for seconds at a time, which the guest cannot see (no steal time): so the
before/during/after measure is taken up to three times, and the best one
decides.  An abuse that does slow forwarding fails all three.

Usage: tests/delta/test_abuse_rate.py BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile
import statistics
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "tests", "estats"))
sys.path.insert(0, HERE)
import test_delta_switch as tds  # noqa: E402
import test_estats_switch as tes  # noqa: E402
from roce_checks import Checks  # noqa: E402
from roce_switch import stop_switch, wait_socket  # noqa: E402
from roce_telemetry import telemetry  # noqa: E402

check = Checks()
BASE_S = 2.0   # the rate measured before and after each abuse
ABUSE_S = 3.0  # each abuse repeated for at least this long
ATTEMPTS = 3   # before, during and after, until the rate holds


def rx(prefix):
    return telemetry(prefix, "/roce/stats", timeout=10)["rx_packets"]


def lcore_wait(pid):
    """Seconds the switch's main thread (its forwarding lcore) has waited on a run queue."""
    with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as f:
        return int(f.read().split()[1]) / 1e9


def window_rates(prefix, running, step=0.25):
    """The forwarding rate in each @step of time while @running() is true (at least one window)."""
    rates = []
    t0, n0 = time.monotonic(), rx(prefix)
    while True:
        time.sleep(step)
        t1, n1 = time.monotonic(), rx(prefix)
        rates.append((n1 - n0) / (t1 - t0))
        t0, n0 = t1, n1
        if not running():
            return rates


def rates_for(prefix, seconds):
    end = time.monotonic() + seconds
    return window_rates(prefix, lambda: time.monotonic() < end)


def rates_during(prefix, fn, at_least_s):
    """fn() run again and again for @at_least_s; the window rates meanwhile, and how many runs."""
    done = threading.Event()
    runs = [0]

    def loop():
        end = time.monotonic() + at_least_s
        try:
            while True:
                fn()
                runs[0] += 1
                if time.monotonic() >= end:
                    break
        finally:
            done.set()
    t = threading.Thread(target=loop)
    t.start()
    rates = window_rates(prefix, lambda: not done.is_set())
    t.join()
    return rates, runs[0]


def metrics_siege():
    tes.scrape_under_siege(tds.METRICS_PORT, "metrics")
    stop = time.monotonic() + 3.0

    def scrape_loop():
        while time.monotonic() < stop:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % tds.METRICS_PORT, timeout=5) as r:
                    r.read()
            except OSError:
                pass
    ts = [threading.Thread(target=scrape_loop) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def main():
    build = os.path.abspath(sys.argv[1])
    switch = os.path.join(build, "dataplane", "dpdk-roce-vswitch")
    tds.work = work = tempfile.mkdtemp(prefix="abuse-rate-")
    prefix = "abuse-rate-%d" % os.getpid()
    sock, cfg, pcap = (os.path.join(work, n) for n in ("ctl.sock", "A.json", "blue.pcap"))
    with open(cfg, "w") as f:
        tds.json.dump(tds.config(), f)
    tds.traffic(pcap)
    cmd = [switch, "-l", "1", "--no-pci", "-m", "512", "--file-prefix", prefix, "--log-level=warning",
           "--vdev", "net_null0,no-rx=1", "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap,
           "--vdev", "net_null1,no-rx=1", "--", "--config", cfg, "--control", sock,
           "--max-config-bytes", str(tds.LIMIT), "--control-idle-s", str(tds.IDLE_S),
           "--control-max-bytes", str(tds.HELD), "--metrics", "127.0.0.1:%d" % tds.METRICS_PORT]
    sw = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        if not check(wait_socket(prefix, sw), "the switch answers telemetry"):
            return check.finish(work)
        # The forwarding lcore has CPU 1; the clients here stay on CPU 0 with the switch's other threads.
        os.sched_setaffinity(0, {0})
        ctl = tds.Ctl(sock)
        st = ctl.ask('{"op": "status"}')
        ctl.s.close()

        files = tds.reload_files()  # made before: writing 48 MiB is this test's load, not the switch's

        def reloads():
            c = tds.Ctl(sock)
            tds.reload_paths(c, st, files)
            c.s.close()
        for name, fn in (("/metrics siege and scrapes", metrics_siege),
                         ("control socket clients", lambda: tds.abuse(sock)),
                         ("reloads of FIFOs, devices, huge files", reloads)):
            tries, w0 = [], lcore_wait(sw.pid)
            for _ in range(ATTEMPTS):
                before = rates_for(prefix, BASE_S)
                during, runs = rates_during(prefix, fn, ABUSE_S)
                after = rates_for(prefix, BASE_S)
                base, mid = statistics.median(before + after), statistics.median(during)
                tries.append((mid / base if base else 0, mid, base, runs, len(during)))
                if tries[-1][0] >= 0.9:
                    break
            best = max(tries)
            check(best[0] >= 0.9, "%s: forwarding %.2f Mpps during (%d runs, %d windows of 0.25 s), %.2f before and "
                  "after (medians; %.2f of it, 0.90 at least; attempts: %s)" % (
                      name, best[1] / 1e6, best[3], best[4], best[2] / 1e6, best[0],
                      " ".join("%.2f" % t[0] for t in tries)))
            waited = lcore_wait(sw.pid) - w0
            check(waited < 0.02 * ATTEMPTS * (2 * BASE_S + ABUSE_S),
                  "%s: the forwarding lcore waited %.3f s for its CPU meanwhile" % (name, waited))
        # The abuses' own checks (a new client answered within 1 s, the bounds, the answers), every time they ran.
        check(tds.failed + tes.failed == 0 and tds.passed + tes.passed > 0,
              "the abuses' own checks: %d passed, %d failed (their FAIL lines above)" % (
                  tds.passed + tes.passed, tds.failed + tes.failed))
    finally:
        rc, _, err = stop_switch(sw, prefix)
        check(rc == 0, "the switch exits cleanly", err[-500:] if rc else "")
    return check.finish(work)


if __name__ == "__main__":
    sys.exit(main())
