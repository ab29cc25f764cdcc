#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Changes in a row while the forwarding lcore does not run.

A delta that only adds connections of unshaped tenants publishes its overlay
without waiting for the lcores; the next delta waits until every lcore has
taken the shaper changes of the one before.  An lcore that was not running
between the two (preempted, as on a loaded host) never sees the first
overlay at all, only the second: it must still take the first one's
changes, or the second delta waits for ever under the control lock and
every change, telemetry read and scrape behind it with it.

The switch runs its one forwarding lcore on CPU 1; a SCHED_FIFO thread on
CPU 1 takes the CPU away from it for 40 ms in every 80 while this test
sends batches through the control socket, three at a time: add a pair of
connections (in place, no wait), move a peer's pqpn (published before the
wait), delete the pair (a wait for the lcores).

Pass: every batch is answered within 10 s and applied; /roce/stats answers
at the end; the switch exits cleanly on SIGTERM.

Usage: tests/delta/test_delta_preempt.py BUILD_DIR [--pairs N]
"""
import argparse
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, HERE)
from roce_telemetry import telemetry  # noqa: E402
from roce_switch import wait_socket  # noqa: E402
from roce_checks import Checks  # noqa: E402
from test_delta_switch import Ctl, qp  # noqa: E402

check = Checks()


def pair(lq, rq):
    return [qp("192.168.1.10", lq, 4096 + lq, "192.168.1.20", rq), qp("192.168.1.20", rq, 8192 + rq, "192.168.1.10", lq)]


def config():
    return {
        "version": 1,
        "ports": [
            {"name": "fabric0", "device": "net_null0", "role": "uplink", "ip": "10.0.0.1",
             "mac": "02:00:00:00:00:01", "gateway_mac": "02:00:00:00:00:fe"},
            {"name": "vm-blue-1", "device": "net_null1", "role": "tenant", "tenant": "blue",
             "mac": "02:00:00:00:01:01"},
        ],
        "tenants": [{"name": "blue", "vni": 100}],
        "endpoints": [
            {"tenant": "blue", "vip": "192.168.1.10", "host": "10.0.0.1", "port": "vm-blue-1",
             "mac": "02:00:00:00:aa:10"},
            {"tenant": "blue", "vip": "192.168.1.20", "host": "10.0.0.2"},
        ],
        "qps": pair(17, 33),
        "neighbors": [{"ip": "10.0.0.2", "mac": "02:00:00:00:00:02"}],
    }


SCHED_FIFO = 1


class SchedParam(ctypes.Structure):
    _fields_ = [("sched_priority", ctypes.c_int)]


def preempt(cpu, stop, on_s=0.040, off_s=0.040):
    """Take @cpu away from everything else for @on_s in every @on_s + @off_s until @stop."""
    libc = ctypes.CDLL(None, use_errno=True)
    os.sched_setaffinity(0, {cpu})
    if libc.sched_setscheduler(0, SCHED_FIFO, ctypes.byref(SchedParam(10))) != 0:
        print("SCHED_FIFO refused (errno %d): the lcore is not preempted" % ctypes.get_errno())
        return
    while not stop.is_set():
        end = time.monotonic() + on_s
        while time.monotonic() < end:
            pass
        time.sleep(off_s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--pairs", type=int, default=150)
    a = ap.parse_args()
    switch = os.path.join(a.build, "dataplane", "dpdk-roce-vswitch")
    work = tempfile.mkdtemp(prefix="roce-preempt-")
    prefix = "preempt-%d" % os.getpid()
    cfg, sock = os.path.join(work, "cfg.json"), os.path.join(work, "ctl.sock")
    with open(cfg, "w") as f:
        json.dump(config(), f)
    cmd = [switch, "-l", "1", "--no-pci", "-m", "256", "--file-prefix", prefix, "--log-level=warning",
           "--vdev", "net_null0,no-rx=1", "--vdev", "net_null1", "--", "--config", cfg, "--control", sock]
    sw = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop = threading.Event()
    spinner = None
    try:
        check(wait_socket(prefix, sw), "the switch answers telemetry")
        ctl = Ctl(sock)
        ctl.s.settimeout(10)
        spinner = threading.Thread(target=preempt, args=(1, stop), daemon=True)
        spinner.start()
        applied = 0
        t0 = time.time()
        for i in range(a.pairs):
            lq, rq = 100 + i % 50, 200 + i % 50
            try:
                up = ctl.ask(json.dumps({"op": "apply", "put": {"qps": pair(lq, rq)}}))
                move = ctl.ask(json.dumps({"op": "apply", "put": {"qps": [
                    qp("192.168.1.20", 33, 9000 + i % 2, "192.168.1.10", 17)]}}))
                down = ctl.ask(json.dumps({"op": "apply", "delete": {"qps": pair(lq, rq)}}))
            except (OSError, ValueError) as e:
                check(False, "pair %d: a batch not answered within 10 s (%s): the control plane is stuck" % (i, e))
                break
            ok = (up.get("result") == "applied" and up.get("connections", {}).get("added") == 1 and
                  move.get("result") == "applied" and move.get("connections", {}).get("changed") == 1 and
                  down.get("result") == "applied" and down.get("connections", {}).get("removed") == 1)
            if not ok:
                check(False, "pair %d: %s / %s / %s" % (i, up, move, down))
                break
            applied += 1
        check(applied == a.pairs, "%d of %d add/delete pairs applied in place while the lcore was preempted "
              "(%.1f s)" % (applied, a.pairs, time.time() - t0))
        stop.set()
        spinner.join()
        st = telemetry(prefix, "/roce/stats", timeout=10)
        check(isinstance(st, dict), "/roce/stats answers after the changes")
    finally:
        stop.set()
        if spinner:
            spinner.join()
        sw.send_signal(signal.SIGTERM)
        try:
            _, err = sw.communicate(timeout=20)
            check(sw.returncode == 0, "the switch exits cleanly (rc %s)%s" % (sw.returncode, "" if sw.returncode == 0
                                                                             else ": " + err[-2000:]))
        except subprocess.TimeoutExpired:
            sw.kill()
            sw.communicate()
            check(False, "the switch exits on SIGTERM within 20 s")
        shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    return check.finish(work)


if __name__ == "__main__":
    sys.exit(main())
