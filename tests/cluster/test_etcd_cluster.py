#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The etcd follower against a 3-member etcd cluster, and over TLS with client certificates.

Part A: three etcd 3.4 members on loopback (clients 23790, 23792, 23794; peers
one above each; data in a temporary directory) and the switch
(dpdk-roce-vswitch --etcd with the three URLs). A QP pair put into etcd
forwards; the member the switch uses is killed: the switch moves to another
member, stays in step (a pair put through a surviving member forwards),
forwarding never stops, and nothing is rejected.

Part B: one member with TLS and --client-cert-auth (client 23796, peer 23797)
and a CA, server and client certificates made here with openssl. The switch
with --etcd-cacert, --etcd-cert and --etcd-key applies a pair put into etcd;
a switch without a client certificate is refused and says disconnected.

Usage: tests/cluster/test_etcd_cluster.py BUILD_DIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_etcd as t  # noqa: E402
from roce_telemetry import telemetry  # noqa: E402
from roce_switch import wait_socket  # noqa: E402

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def member(data, name, client, peer, cluster, tls=None):
    scheme = "https" if tls else "http"
    cmd = ["etcd", "--name", name, "--data-dir", os.path.join(data, name),
           "--listen-client-urls", "%s://127.0.0.1:%d" % (scheme, client),
           "--advertise-client-urls", "%s://127.0.0.1:%d" % (scheme, client),
           "--listen-peer-urls", "http://127.0.0.1:%d" % peer,
           "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer,
           "--initial-cluster", cluster, "--initial-cluster-state", "new"]
    if tls:
        cmd += ["--cert-file", tls["server"], "--key-file", tls["server_key"], "--client-cert-auth",
                "--trusted-ca-file", tls["ca"]]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ctl(endpoints, *args, tls=None):
    cmd = ["etcdctl", "--endpoints=" + endpoints, "--command-timeout=5s"]
    if tls:
        cmd += ["--cacert", tls["ca"], "--cert", tls["client"], "--key", tls["client_key"]]
    r = subprocess.run(cmd + list(args), capture_output=True, text=True, env=dict(os.environ, ETCDCTL_API="3"),
                       timeout=30)
    # "endpoint health" reports on stderr.
    return r.stdout + r.stderr


def switch(build, prefix, cfg, pcap, args):
    cmd = [os.path.join(build, "dataplane", "dpdk-roce-vswitch"), "-l", "1", "--no-pci", "-m", "512",
           "--file-prefix", prefix, "--log-level=warning", "--vdev", "net_null0,no-rx=1",
           "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap, "--vdev", "net_null1,no-rx=1", "--",
           "--config", cfg] + args
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def stop(sw, prefix):
    sw.send_signal(signal.SIGTERM)
    try:
        out, err = sw.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        sw.kill()
        out, err = sw.communicate()
    shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    return sw.returncode, out, err


def pair(endpoints, lq, lp, rq, rp, tls=None):
    for k, v in (("endpoints/blue/192.168.1.10", {"tenant": "blue", "vip": "192.168.1.10", "host": "10.0.0.1",
                                                  "port": "vm-blue-1", "mac": t.BLUE_VM}),
                 ("endpoints/blue/192.168.1.20", {"tenant": "blue", "vip": "192.168.1.20", "host": "10.0.0.2"}),
                 ("qps/blue/192.168.1.10/%d" % lq, t.qp("192.168.1.10", lq, lp, "192.168.1.20", rq)),
                 ("qps/blue/192.168.1.20/%d" % rq, t.qp("192.168.1.20", rq, rp, "192.168.1.10", lq))):
        ctl(endpoints, "put", "/roce/" + k, json.dumps(v), tls=tls)


def forwarding(prefix, vqpn):
    return t.until(lambda: t.conns(prefix).get(vqpn) if t.conns(prefix).get(vqpn, {}).get("egress_packets") else None)


def certs(d):
    def run(*a):
        subprocess.run(list(a), check=True, capture_output=True, cwd=d)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=dlt-ca",
        "-keyout", "ca.key", "-out", "ca.pem")
    with open(os.path.join(d, "san.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n")
    for who in ("server", "client"):
        run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=dlt-" + who, "-keyout",
            who + ".key", "-out", who + ".csr")
        run("openssl", "x509", "-req", "-in", who + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "1", "-extfile", "san.cnf", "-out", who + ".pem")
    return {"ca": os.path.join(d, "ca.pem"), "server": os.path.join(d, "server.pem"),
            "server_key": os.path.join(d, "server.key"), "client": os.path.join(d, "client.pem"),
            "client_key": os.path.join(d, "client.key")}


def part_a(build, work, cfg, pcap):
    clients = [23790, 23792, 23794]
    cluster = ",".join("m%d=http://127.0.0.1:%d" % (i, c + 1) for i, c in enumerate(clients))
    urls = ",".join("http://127.0.0.1:%d" % c for c in clients)
    members = [member(work, "m%d" % i, c, c + 1, cluster) for i, c in enumerate(clients)]
    prefix = "dlt-etcd3-%d" % os.getpid()
    sw = None
    try:
        check(t.until(lambda: ctl(urls, "endpoint", "health").count("is healthy") == 3, 20), "three healthy members")
        pair(urls, 17, 4113, 33, 8193)
        sw = switch(build, prefix, cfg, pcap, ["--etcd", urls])
        check(wait_socket(prefix, sw), "the switch answers telemetry")
        c = forwarding(prefix, 17)
        check(c is not None and c["remote_pqpn"] == 8193, "17 <-> 33 forwards: %s" % c)
        used = telemetry(prefix, "/roce/cluster")["member"]
        i = ["http://127.0.0.1:%d" % x for x in clients].index(used)
        members[i].send_signal(signal.SIGKILL)
        members[i].wait()
        survivors = ",".join("http://127.0.0.1:%d" % x for j, x in enumerate(clients) if j != i)
        p0 = t.conns(prefix)[17]["egress_packets"]
        pair(survivors, 21, 4121, 41, 8202)
        c = forwarding(prefix, 21)
        cl = telemetry(prefix, "/roce/cluster")
        check(c is not None and cl["member"] != used and cl["etcd"] == "connected",
              "after member %s was killed: moved to %s, 21 <-> 41 applied (%s)" % (used, cl["member"], c))
        check(t.conns(prefix)[17]["egress_packets"] > p0, "17 forwarded throughout")
        # The pair is two puts: a QP seen before its peer waits (counted once as rejected) and
        # is applied when the peer comes; nothing else may be rejected.
        check(cl["records_rejected"] == 0 or (cl["records_rejected"] <= 2 and "is not a qp of tenant" in
                                              (cl.get("last_error") or "")),
              "nothing rejected but a QP that came before its peer: %s" % cl)
    finally:
        if sw:
            rc, out, err = stop(sw, prefix)
            check(rc == 0, "the switch exits cleanly (%s): %s" % (rc, err[-300:]))
        for m in members:
            if m.poll() is None:
                m.send_signal(signal.SIGTERM)
                m.wait(timeout=20)


def part_b(build, work, cfg, pcap):
    tls = certs(work)
    url = "https://127.0.0.1:23796"
    m = member(os.path.join(work, "tls"), "t0", 23796, 23797, "t0=http://127.0.0.1:23797", tls)
    prefix = "dlt-etcdtls-%d" % os.getpid()
    sws = []
    try:
        check(t.until(lambda: "is healthy" in ctl(url, "endpoint", "health", tls=tls), 20), "the TLS member is healthy")
        pair(url, 17, 4113, 33, 8193, tls=tls)
        sw = switch(build, prefix, cfg, pcap, ["--etcd", url, "--etcd-cacert", tls["ca"], "--etcd-cert", tls["client"],
                                               "--etcd-key", tls["client_key"]])
        sws.append((sw, prefix))
        check(wait_socket(prefix, sw), "the switch answers telemetry")
        c = forwarding(prefix, 17)
        check(c is not None and c["local_pqpn"] == 4113, "over TLS with a client certificate: 17 <-> 33 forwards")
        # Without a client certificate etcd refuses it.
        prefix2 = prefix + "b"
        sw2 = subprocess.Popen([os.path.join(build, "dataplane", "dpdk-roce-vswitch"), "-l", "0", "--no-pci", "-m",
                                "512", "--file-prefix", prefix2, "--log-level=warning", "--vdev", "net_null0,no-rx=1",
                                "--vdev", "net_null2,no-rx=1", "--vdev", "net_null1,no-rx=1", "--", "--config",
                                cfg.replace(".json", "-null.json"), "--etcd", url, "--etcd-cacert", tls["ca"]],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sws.append((sw2, prefix2))
        check(wait_socket(prefix2, sw2), "the second switch answers telemetry")
        time.sleep(1.5)
        cl = telemetry(prefix2, "/roce/cluster")
        check(cl["etcd"] == "disconnected" and cl["records_applied"] == 0 and cl["last_error"],
              "without a client certificate: refused (%s)" % cl)
    finally:
        for sw, p in sws:
            rc, out, err = stop(sw, p)
            check(rc == 0, "the switch exits cleanly (%s): %s" % (rc, err[-300:]))
        m.send_signal(signal.SIGTERM)
        m.wait(timeout=20)


def main():
    build = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="dlt-etcd3-")
    try:
        cfg = os.path.join(work, "local.json")
        with open(cfg, "w") as f:
            json.dump(t.local_config(), f)
        null = t.local_config()
        null["ports"][1]["device"] = "net_null2"
        with open(cfg.replace(".json", "-null.json"), "w") as f:
            json.dump(null, f)
        pcap = os.path.join(work, "blue.pcap")
        t.traffic(pcap)
        part_a(build, work, cfg, pcap)
        part_b(build, work, cfg, pcap)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
