# SPDX-License-Identifier: BSD-3-Clause
"""Starting and stopping the switch for the tests that drive it through real vdevs."""
import json
import os
import shutil
import signal
import sys
import subprocess
import time

from roce_telemetry import telemetry

# Memory without hugepages: every virtual device the tests use works with it.
EAL_MEM = ["--no-huge", "-m", "512"]


def start_switch(build, prefix, vdevs, cfg_path, lcores, args=(), eal_mem=EAL_MEM, logs=None):
    """The switch of @build on EAL --lcores @lcores with --vdev @vdevs and --config @cfg_path,
    plus the switch's own @args; stdout and stderr are pipes, or the files @logs.out and @logs.err
    (for a long run whose pipes nobody reads while it runs: a full pipe blocks the switch's writer)."""
    cmd = [os.path.join(build, "dataplane", "dpdk-roce-vswitch"), "--lcores", lcores, "--no-pci",
           "--file-prefix", prefix, "--log-level", "lib.eal:warning"] + list(eal_mem)
    for v in vdevs:
        cmd += ["--vdev", v]
    cmd += ["--", "--config", cfg_path] + list(args)
    if logs is None:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    with open(logs + ".out", "w") as out, open(logs + ".err", "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, start_new_session=True)
    proc.logs = logs
    return proc


def wait_socket(prefix, proc, seconds=30):
    """True once the switch of --file-prefix @prefix answers /roce/stats (False if @proc exits first)."""
    end = time.time() + seconds
    while time.time() < end and proc.poll() is None:
        try:
            # The socket is there from EAL's start; the commands once the switch registers them.
            if telemetry(prefix, "/roce/stats") is not None:
                return True
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    return False


def start_switch_ready(build, prefix, vdevs, cfg_path, lcores, args=(), eal_mem=EAL_MEM, logs=None,
                       tries=5, seconds=30):
    """start_switch(), then wait_socket(): the running switch, or None (its stderr is printed).

    DPDK 22.11's net_af_packet joins a PACKET_FANOUT group numbered (pid ^ ifindex) & 0xffff, and
    the numbers are shared by every process of the network namespace.  Two switches started one
    after the other on two ends of a veth (consecutive pids, consecutive ifindexes) can draw the
    same number for different devices, and the second one's probe then fails with EINVAL ("could
    not set PACKET_FANOUT").  Such a start is tried again, up to @tries times: a new pid draws
    another number.  Any other failure is final."""
    for _ in range(tries):
        proc = start_switch(build, prefix, vdevs, cfg_path, lcores, args, eal_mem, logs)
        if wait_socket(prefix, proc, seconds):
            return proc
        _, _, err = stop_switch(proc, prefix)
        if "PACKET_FANOUT" not in err:
            break
    sys.stderr.write(err[-2000:])
    return None


def cpus_allowed(pid, tid):
    """The CPUs thread @tid of process @pid may run on (/proc's Cpus_allowed_list)."""
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        line = next(x for x in f if x.startswith("Cpus_allowed_list:"))
    cpus = set()
    for part in line.split(":", 1)[1].strip().split(","):
        a, _, b = part.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus


def threads_on(pid, cpu):
    """Names of the threads of @pid, but its main thread, that may run on @cpu (a forwarding lcore's)."""
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        if int(tid) == pid:
            continue
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                name = f.read().strip()
            if cpu in cpus_allowed(pid, int(tid)):
                out.append(name)
        except OSError:
            pass
    return out


def stop_switch(proc, prefix):
    """SIGTERM, then (returncode, the exit summary or None, stderr); removes the runtime directory."""
    try:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    if getattr(proc, "logs", None):
        with open(proc.logs + ".out") as o, open(proc.logs + ".err") as e:
            out, err = o.read(), e.read()
    summary = None
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            try:
                summary = json.loads(line)
            except ValueError:
                pass
            break
    return proc.returncode, summary, err
