# SPDX-License-Identifier: BSD-3-Clause
"""Switches on af_packet ports over a Linux bridge, VMs in network namespaces, etcd on loopback.

The topology of tests/cluster/test_hosts.py, bench/run-etcd-latency and
scripts/run-etcd-demo (run as root, with /usr/bin/python3):

        netns TAGvmA           netns TAGvmB           netns TAGvmC
      VM 192.168.1.10        VM 192.168.1.20        VM 192.168.1.30
          TAGtAv                 TAGtBv                 TAGtCv
            |                      |                      |
          TAGtA  (tenant port)   TAGtB                  TAGtC
       [switch A 10.0.0.1]    [switch B 10.0.0.2]    [switch C 10.0.0.3]
          TAGuA  (uplink)        TAGuB                  TAGuC
            |                      |                      |
          TAGuAb ------------- bridge TAGbr ------------ TAGuCb
                                   |
                          TAGinj (the fabric's own injector)

Each switch runs in the root namespace on net_af_packet over its two veths
(so that it reaches etcd on 127.0.0.1); each VM is a raw socket opened inside
its namespace.  Frames a switch sends to the fabric are read on the
bridge side of its uplink veth (TAGuXb), before the bridge forwards them.
Every name starts with TAG, and everything made is removed by Hosts.close().
"""
import base64
import ctypes
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from roce_telemetry import telemetry  # noqa: E402
from roce_switch import start_switch_ready, stop_switch  # noqa: E402
from roce_layers import BTH  # noqa: E402
from test_etcd import until  # noqa: E402,F401 - the tests' polling helper, for the users of this module
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.packet import Raw  # noqa: E402

CLONE_NEWNET = 0x40000000
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
GW_MAC = "02:00:00:00:00:fe"
# name: (host IP, uplink MAC, tenant port MAC, VM MAC, VM vip)
HOSTS = {
    "A": ("10.0.0.1", "02:00:00:00:00:01", "02:00:00:00:01:01", "02:00:00:00:aa:0a", "192.168.1.10"),
    "B": ("10.0.0.2", "02:00:00:00:00:02", "02:00:00:00:01:02", "02:00:00:00:aa:14", "192.168.1.20"),
    "C": ("10.0.0.3", "02:00:00:00:00:03", "02:00:00:00:01:03", "02:00:00:00:aa:1e", "192.168.1.30"),
}
INJ_MAC = "02:00:00:00:00:99"
SEND_ONLY = 0x04


def sh(*args, check=True):
    return subprocess.run(list(args), check=check, capture_output=True, text=True)


def local_config(name, tenant=None, top=None):
    """Host @name's local file: its ports, its own IP, its neighbors and the tenant its port names
    (blue, with the fields of @tenant added), and the top-level sections of @top."""
    ip, up, port, _, _ = HOSTS[name]
    return dict(top or {}, **{
        "version": 1,
        "ports": [
            {"name": "fabric0", "device": "net_af_packet0", "role": "uplink", "ip": ip, "mac": up,
             "gateway_mac": GW_MAC},
            {"name": "vm-blue", "device": "net_af_packet1", "role": "tenant", "tenant": "blue", "mac": port},
        ],
        "tenants": [dict({"name": "blue", "vni": 100, "max_qps": 4096}, **(tenant or {}))],
        "neighbors": [{"ip": HOSTS[n][0], "mac": HOSTS[n][1]} for n in sorted(HOSTS) if n != name],
    })


def endpoint(name):
    ip, _, _, mac, vip = HOSTS[name]
    return {"tenant": "blue", "vip": vip, "host": ip, "port": "vm-blue", "mac": mac}


def qp(name, vqpn, peer, pvqpn, pqpn=None):
    """The QP @vqpn of host @name's VM, connected to @pvqpn of host @peer's VM (RC)."""
    r = {"tenant": "blue", "vip": HOSTS[name][4], "vqpn": vqpn, "type": "rc",
         "peer": {"vip": HOSTS[peer][4], "vqpn": pvqpn}}
    if pqpn is not None:
        r["pqpn"] = pqpn
    return r


def qp_key(name, vqpn):
    return "qps/blue/%s/%d" % (HOSTS[name][4], vqpn)


def vm_frame(src, dst, dvqpn, psn, sport=49152, tos=0):
    """A SEND Only from host @src's VM to host @dst's VM's QP @dvqpn (scapy fills the ICRC in)."""
    return bytes(Ether(src=HOSTS[src][3], dst=HOSTS[src][2]) /
                 IP(src=HOSTS[src][4], dst=HOSTS[dst][4], flags="DF", ttl=64, tos=tos) /
                 UDP(sport=sport, dport=4791, chksum=0) / BTH(opcode=SEND_ONLY, dqpn=dvqpn, psn=psn) /
                 Raw(struct.pack("!I", psn) + bytes(28)))


def roce(data):
    """(dst IP, BTH dqpn, psn) of a RoCEv2 frame over IPv4, else None."""
    if len(data) < 14 + 20 + 8 + 12 or data[12:14] != b"\x08\x00" or data[23] != 17:
        return None
    ihl = (data[14] & 0xf) * 4
    l4 = 14 + ihl
    if struct.unpack_from("!H", data, l4 + 2)[0] != 4791:
        return None
    bth = l4 + 8
    dqpn = struct.unpack_from("!I", data, bth + 4)[0] & 0xffffff
    psn = struct.unpack_from("!I", data, bth + 8)[0] & 0xffffff
    return socket.inet_ntoa(data[30:34]), dqpn, psn


def in_netns(ns, fn):
    """fn() run with this thread in network namespace @ns (a socket made there stays there)."""
    libc = ctypes.CDLL(None, use_errno=True)
    with open("/proc/self/ns/net") as home, open("/var/run/netns/" + ns) as there:
        if libc.setns(there.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + ns)
        try:
            return fn()
        finally:
            libc.setns(home.fileno(), CLONE_NEWNET)


def raw_socket(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind((ifname, 0))
    s.setblocking(False)
    return s


class Etcd:
    """An etcd 3.4 cluster of @n members on loopback: member i has client port base + 2i and
    peer port base + 2i + 1 (base + 6 + i as its other client port); data under @work."""

    def __init__(self, work, base, n=3, tag="h3"):
        self.work, self.base, self.n, self.tag = work, base, n, tag
        self.procs = [None] * n
        self.cluster = ",".join("%se%d=http://127.0.0.1:%d" % (tag, i, base + 2 * i + 1) for i in range(n))

    def client(self, i, alt=False):
        return self.base + 6 + i if alt else self.base + 2 * i

    def urls(self, alt=False):
        return ",".join("http://127.0.0.1:%d" % self.client(i, alt) for i in range(self.n))

    def start(self, i, alt=False):
        url = "http://127.0.0.1:%d" % self.client(i, alt)
        peer = "http://127.0.0.1:%d" % (self.base + 2 * i + 1)
        log = open(os.path.join(self.work, "etcd%d.log" % i), "a")
        self.procs[i] = subprocess.Popen(
            ["etcd", "--name", "%se%d" % (self.tag, i), "--data-dir", os.path.join(self.work, "etcd%d" % i),
             "--listen-client-urls", url, "--advertise-client-urls", url, "--listen-peer-urls", peer,
             "--initial-advertise-peer-urls", peer, "--initial-cluster", self.cluster,
             "--initial-cluster-state", "new", "--initial-cluster-token", self.tag + "-fabric"],
            stdout=log, stderr=log)
        log.close()

    def start_all(self, alt=False):
        for i in range(self.n):
            if self.procs[i] is None:
                self.start(i, alt)
        return self.healthy(alt)

    def stop(self, i, sig=signal.SIGTERM):
        p = self.procs[i]
        if p is None:
            return
        p.send_signal(sig)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        self.procs[i] = None

    def stop_all(self):
        for i in range(self.n):
            self.stop(i)

    def ctl(self, *args, alt=False):
        live = ",".join("http://127.0.0.1:%d" % self.client(i, alt) for i in range(self.n) if self.procs[i])
        r = subprocess.run(["etcdctl", "--endpoints=" + live, "--command-timeout=5s"] + list(args),
                           capture_output=True, text=True, env=dict(os.environ, ETCDCTL_API="3"), timeout=30)
        return r.stdout + r.stderr

    def healthy(self, alt=False, seconds=20):
        end = time.time() + seconds
        while time.time() < end:
            if all(self.procs) and self.ctl("endpoint", "health", alt=alt).count("is healthy") == self.n:
                return True
            time.sleep(0.2)
        return False

    def gateway(self, path, body, i=None, alt=False):
        """POST @body (a dict) to the JSON gateway /v3/@path of member @i (the first live one)."""
        live = [i] if i is not None else [k for k in range(self.n) if self.procs[k]]
        end = time.time() + 15
        while True:
            for k in live:
                url = "http://127.0.0.1:%d/v3/%s" % (self.client(k, alt), path)
                try:
                    with urllib.request.urlopen(url, json.dumps(body).encode(), timeout=5) as r:
                        return json.loads(r.read().decode())
                except (urllib.error.URLError, OSError):
                    # A member that lost its leader answers 503 until the election is over.
                    if time.time() > end:
                        raise
            time.sleep(0.05)

    def put(self, key, value, prefix="/roce/", alt=False):
        """One record (a dict, or a string sent as it is) at @prefix@key."""
        v = value if isinstance(value, str) else json.dumps(value)
        self.gateway("kv/put", {"key": b64(prefix + key), "value": b64(v)}, alt=alt)

    def put_many(self, records, prefix="/roce/", alt=False):
        """Several records in one transaction (one revision): {key: record}."""
        ops = [{"requestPut": {"key": b64(prefix + k), "value": b64(json.dumps(v))}} for k, v in records.items()]
        return self.gateway("kv/txn", {"success": ops}, alt=alt)

    def delete(self, key, prefix="/roce/", alt=False):
        self.gateway("kv/deleterange", {"key": b64(prefix + key)}, alt=alt)

    def get(self, key, prefix="/roce/", alt=False):
        r = self.gateway("kv/range", {"key": b64(prefix + key)}, alt=alt)
        kvs = r.get("kvs") or []
        return json.loads(base64.b64decode(kvs[0]["value"])) if kvs else None

    def revision(self, alt=False):
        return int(self.gateway("kv/range", {"key": b64("/")}, alt=alt)["header"]["revision"])

    def compact(self, alt=False):
        rev = self.revision(alt)
        self.gateway("kv/compaction", {"revision": rev, "physical": True}, alt=alt)
        return rev


def b64(s):
    return base64.b64encode(s.encode()).decode()


class Hosts:
    """The bridge, the veths, the VM namespaces and (start()) the three switches."""

    def __init__(self, build, work, tag="h3", names=("A", "B", "C"), lcores=None, tenant=None, top=None):
        self.build, self.work, self.tag, self.names = build, work, tag, list(names)
        self.tenant = tenant
        self.top = top
        self.lcores = lcores or {"A": "0", "B": "1", "C": "0"}
        self.sw = {}
        self.prefix = {n: "%s-%s-%d" % (tag, n, os.getpid()) for n in self.names}
        self.vm = {}
        self.fab = {}
        self.inj = None
        self.made_links, self.made_ns = [], []

    def link(self, kind, name):
        return "%s%s%s" % (self.tag, kind, name)

    def setup(self):
        br = self.tag + "br"
        self.clean()
        # No multicast snooping: the bridge would join 224.0.0.106 and flood IGMP reports to the switches.
        sh("ip", "link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0", "mcast_snooping", "0")
        self.made_links.append(br)
        for n in self.names + ["inj"]:
            up, upb = (self.link("u", n), self.link("u", n) + "b") if n != "inj" else (self.tag + "inj",
                                                                                      self.tag + "injb")
            sh("ip", "link", "add", up, "type", "veth", "peer", "name", upb)
            self.made_links.append(up)
            sh("ip", "link", "set", upb, "master", br)
            for i in (up, upb):
                sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % i, check=False)
                sh("ip", "link", "set", i, "up")
            if n == "inj":
                continue
            ns, t, tv = self.tag + "vm" + n, self.link("t", n), self.link("t", n) + "v"
            sh("ip", "netns", "add", ns)
            self.made_ns.append(ns)
            sh("ip", "link", "add", t, "type", "veth", "peer", "name", tv)
            self.made_links.append(t)
            sh("ip", "link", "set", tv, "netns", ns)
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % t, check=False)
            sh("ip", "link", "set", t, "up")
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", check=False)
            sh("ip", "netns", "exec", ns, "ip", "link", "set", tv, "up")
        for i in (br,):
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % i, check=False)
            sh("ip", "link", "set", i, "up")
        for n in self.names:
            self.vm[n] = in_netns(self.tag + "vm" + n, lambda n=n: raw_socket(self.link("t", n) + "v"))
            self.fab[n] = raw_socket(self.link("u", n) + "b")
        self.inj = raw_socket(self.tag + "inj")

    def start(self, etcd_urls, extra=(), only=None):
        """Start every switch (or those named in @only) with --etcd @etcd_urls; True once all answer
        telemetry."""
        for n in only or self.names:
            cfg = os.path.join(self.work, "host-%s.json" % n)
            with open(cfg, "w") as f:
                json.dump(local_config(n, self.tenant, self.top), f, indent=1)
            # A start that draws a taken af_packet fanout group is tried again (roce_switch.py).
            self.sw[n] = start_switch_ready(self.build, self.prefix[n],
                                            ["net_af_packet0,iface=%s" % self.link("u", n),
                                             "net_af_packet1,iface=%s" % self.link("t", n)],
                                            cfg, self.lcores[n], ["--etcd", etcd_urls] + list(extra),
                                            eal_mem=["--no-huge", "-m", "256"],
                                            logs=os.path.join(self.work, "switch-%s" % n))
            if self.sw[n] is None:
                del self.sw[n]
                return False
        return all(self.sw[n].poll() is None for n in only or self.names)

    def tel(self, n, cmd):
        return telemetry(self.prefix[n], cmd)

    def cluster(self, n):
        """/roce/cluster of switch @n ({} until the switch has registered it)."""
        return self.tel(n, "/roce/cluster") or {"etcd": None, "records_applied": 0}

    def conns(self, n):
        return {c["local_vqpn"]: c for c in (self.tel(n, "/roce/connections,blue") or {}).values()
                if isinstance(c, dict)}

    def drops(self, n):
        return self.tel(n, "/roce/drops")

    def send(self, n, data):
        self.vm[n].send(data)

    def drain(self):
        """Forget everything queued on the VM and fabric sockets."""
        for s in list(self.vm.values()) + list(self.fab.values()) + [self.inj]:
            while True:
                try:
                    s.recv(65536)
                except BlockingIOError:
                    break

    def collect(self, seconds, done=None):
        """Frames arriving within @seconds: [(where, time, bytes)], where is "vmX" (delivered to X's VM)
        or "fabX" (sent to the fabric by X's switch); kernel time stamps; outgoing copies left out.
        Stops early once done(list) is true."""
        socks = {s: "vm" + n for n, s in self.vm.items()}
        socks.update({s: "fab" + n for n, s in self.fab.items()})
        got = []
        end = time.time() + seconds
        while time.time() < end:
            r, _, _ = select.select(list(socks), [], [], max(0, min(0.05, end - time.time())))
            for s in r:
                got.extend(read_all(s, socks[s]))
            if done and done(got):
                break
        return got

    def close(self):
        """Stop the switches ({name: (rc, summary, stderr)}) and remove everything made."""
        out = {}
        for n, p in self.sw.items():
            out[n] = stop_switch(p, self.prefix[n])
        self.sw = {}
        for s in list(self.vm.values()) + list(self.fab.values()) + ([self.inj] if self.inj else []):
            s.close()
        self.vm, self.fab, self.inj = {}, {}, None
        self.clean()
        return out

    def clean(self):
        for n in self.names:
            for f in os.listdir("/dev/hugepages") if os.path.isdir("/dev/hugepages") else []:
                if f.startswith(self.prefix[n] + "map_"):
                    os.unlink(os.path.join("/dev/hugepages", f))
            shutil.rmtree("/var/run/dpdk/" + self.prefix[n], ignore_errors=True)
        for n in self.names + ["inj"]:
            for i in (self.link("u", n), self.link("t", n), self.tag + "inj"):
                if os.path.exists("/sys/class/net/" + i):
                    sh("ip", "link", "del", i, check=False)
            ns = self.tag + "vm" + n
            if os.path.exists("/var/run/netns/" + ns):
                sh("ip", "netns", "del", ns, check=False)
        if os.path.exists("/sys/class/net/%sbr" % self.tag):
            sh("ip", "link", "del", self.tag + "br", check=False)


def read_all(s, where):
    got = []
    while True:
        try:
            data, anc, _, addr = s.recvmsg(65536, 64)
        except BlockingIOError:
            return got
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        t = time.time()
        for level, kind, val in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", val[:16])
                t = sec + nsec * 1e-9
        got.append((where, t, data))


def fabric_frame(src, dst, dpqpn, psn, sport=49152):
    """A SEND Only as host @src's switch would send it to host @dst's pqpn @dpqpn, from the
    bridge's injector port (its own source MAC)."""
    return bytes(Ether(src=INJ_MAC, dst=HOSTS[dst][1]) /
                 IP(src=HOSTS[src][0], dst=HOSTS[dst][0], flags="DF", ttl=64) /
                 UDP(sport=sport, dport=4791, chksum=0) / BTH(opcode=SEND_ONLY, dqpn=dpqpn, psn=psn) /
                 Raw(struct.pack("!I", psn) + bytes(28)))
