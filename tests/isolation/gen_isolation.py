#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
The isolation suite's world and its hostile traffic.

World: two hosts, H1 (10.0.0.1 and fd00::1) and H2 (10.0.0.2 and fd00::2),
each with an IPv4 uplink, an IPv6 uplink and one tenant port per tenant.
Three tenants, blue, red and green, are identical: the same vIPs, vQPNs,
endpoint MACs, rkeys and advertised addresses (only the pqpns, the port and
the target of each memory window differ).  The two host configurations
share one cluster description and differ only in their ports.

    blue/red/green, each:                 H1                    H2
      192.168.1.10 qp 17 (rc) <--------------------------> 192.168.1.20 qp 33
      192.168.1.11 qp 18 <-> .10 qp 19 (rc hairpin on H1)   .21 qp 18 <-> .20 qp 19 (H2)
      192.168.1.10 qp 21 (uc) <--------------------------> 192.168.1.20 qp 37
      ud: .10/40 .11/41 (H1)                               .20/42 .21/43 (H2)
      fd00:1::10 qp 17 (rc) <----------------------------> fd00:1::20 qp 33
      ud: fd00:1::10/40 (H1)                               fd00:1::20/42 (H2)
      memory: .10 and .20: rkey 0x1234 write-only, 0x5678 read+atomic;
              fd00:1::10 and fd00:1::20: rkey 0x1234 read+write+atomic
    green only: 192.168.1.30 ud 43 on H2

    H1 ports: fabric0 (uplink 10.0.0.1)  fabric6 (uplink fd00::1)
              vm-blue  vm-red  vm-green;      H2 likewise.

Traffic: for each host, a seeded random mix of frame classes (see CLASSES),
most of them hostile; every frame is run through model.HostModel, which
says what must become of it.  Every frame's PSN is a unique id, and every
payload starts with its tenant's marker, so that any frame that comes out
can be traced to the frame that went in.

Usable on its own to look at the traffic:
  /usr/bin/python3 tests/isolation/gen_isolation.py OUTDIR [--seed N] [--frames N]
"""

import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from wire import (  # noqa: E402
    Frame, OPS, INVALID_OPCODES, EXT_LEN, SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM,
    SEND_ONLY, SEND_ONLY_IMM, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM, WRITE_ONLY,
    WRITE_ONLY_IMM, READ_REQ, RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY, ACK, ATOMIC_ACK, CMP_SWAP,
    FETCH_ADD, SEND_LAST_INV, SEND_ONLY_INV, UC, XRC, UD_SEND_ONLY, UD_SEND_ONLY_IMM, CNP,
    FLUSH, ATOMIC_WRITE, BODY_LEN, write_pcap, ip_ver, ip_extent)
from model import (Cluster, HostModel, Drop, Fwd, norm, VLAN_POLICY, NAK_REASONS,  # noqa: E402
                   AETH_RESPONSES)

TENANTS = ["blue", "red", "green"]
MARKERS = {"blue": b"blue", "red": b"red!", "green": b"grn!"}
MTU_FRAME = 9216            # the switch's default --mbuf-size: the largest linear frame
RX_BURST = 32               # frames the switch takes from a port at once (DP_BURST)
HOSTS = {1: {"ip4": "10.0.0.1", "ip6": "fd00::1", "main": "192.168.1.10", "partner": "192.168.1.11",
             "main6": "fd00:1::10"},
         2: {"ip4": "10.0.0.2", "ip6": "fd00::2", "main": "192.168.1.20", "partner": "192.168.1.21",
             "main6": "fd00:1::20"}}
EP_MAC = {"192.168.1.10": "02:00:00:00:aa:10", "192.168.1.11": "02:00:00:00:aa:11",
          "192.168.1.20": "02:00:00:00:aa:20", "192.168.1.21": "02:00:00:00:aa:21",
          "fd00:1::10": "02:00:00:00:aa:16", "fd00:1::20": "02:00:00:00:aa:26",
          "192.168.1.30": "02:00:00:00:aa:30"}
UPLINK_MAC = {("1", 4): "02:00:00:00:00:01", ("1", 6): "02:00:00:00:06:01",
              ("2", 4): "02:00:00:00:00:02", ("2", 6): "02:00:00:00:06:02"}
WIN_W = (0x7f0000000000, 0x10000)      # rkey 0x1234 on .10/.20: remote_write only
WIN_RA = (0x7f0000100000, 0x1000)      # rkey 0x5678 on .10/.20: remote_read, remote_atomic
WIN_6 = (0x7f0000000000, 0x10000)      # rkey 0x1234 on fd00:1::10/20: everything


def qp_table():
    """(kind, tenant index) -> the QP records of every tenant; pqpns unique per host."""
    kinds = [  # (name, host, vip, vqpn, type, peer name)
        ("rc_a1", 1, "192.168.1.10", 17, "rc", "rc_a2"), ("rc_a2", 2, "192.168.1.20", 33, "rc", "rc_a1"),
        ("hp_b1", 1, "192.168.1.11", 18, "rc", "hp_m1"), ("hp_m1", 1, "192.168.1.10", 19, "rc", "hp_b1"),
        ("hp_b2", 2, "192.168.1.21", 18, "rc", "hp_m2"), ("hp_m2", 2, "192.168.1.20", 19, "rc", "hp_b2"),
        ("uc_1", 1, "192.168.1.10", 21, "uc", "uc_2"), ("uc_2", 2, "192.168.1.20", 37, "uc", "uc_1"),
        ("ud_m1", 1, "192.168.1.10", 40, "ud", None), ("ud_b1", 1, "192.168.1.11", 41, "ud", None),
        ("ud_m2", 2, "192.168.1.20", 42, "ud", None), ("ud_b2", 2, "192.168.1.21", 43, "ud", None),
        ("rc6_1", 1, "fd00:1::10", 17, "rc", "rc6_2"), ("rc6_2", 2, "fd00:1::20", 33, "rc", "rc6_1"),
        ("ud6_1", 1, "fd00:1::10", 40, "ud", None), ("ud6_2", 2, "fd00:1::20", 42, "ud", None),
    ]
    out = []
    for ti, t in enumerate(TENANTS):
        for k, (name, h, vip, vqpn, typ, peer) in enumerate(kinds):
            q = {"tenant": t, "vip": vip, "vqpn": vqpn, "pqpn": 0x1000 * h + 0x100 + 16 * k + ti,
                 "type": typ}
            if peer:
                pk = next(x for x in kinds if x[0] == peer)
                q["peer"] = {"vip": pk[2], "vqpn": pk[3]}
            out.append(q)
    out.append({"tenant": "green", "vip": "192.168.1.30", "vqpn": 43, "pqpn": 0x2300, "type": "ud"})
    return out


def cluster_config():
    """The part of the configuration that both hosts share."""
    eps, mrs = [], []
    for ti, t in enumerate(TENANTS):
        for h, hv in HOSTS.items():
            for key, host in (("main", "ip4"), ("partner", "ip4"), ("main6", "ip6")):
                vip = hv[key]
                eps.append({"tenant": t, "vip": vip, "host": hv[host], "port": "vm-" + t,
                            "mac": EP_MAC[vip]})
            base = 0x100000000 * (ti + 1) + 0x10000000 * h
            mrs.append({"tenant": t, "vip": hv["main"], "rkey": "0x1234", "addr": hex(WIN_W[0]),
                        "length": hex(WIN_W[1]), "target_rkey": hex(0xa00000 + 0x100 * ti + 0x10 * h + 1),
                        "target_addr": hex(base), "access": ["remote_write"]})
            mrs.append({"tenant": t, "vip": hv["main"], "rkey": "0x5678", "addr": hex(WIN_RA[0]),
                        "length": hex(WIN_RA[1]), "target_rkey": hex(0xa00000 + 0x100 * ti + 0x10 * h + 2),
                        "target_addr": hex(base + 0x1000000), "access": ["remote_read", "remote_atomic"]})
            mrs.append({"tenant": t, "vip": hv["main6"], "rkey": "0x1234", "addr": hex(WIN_6[0]),
                        "length": hex(WIN_6[1]), "target_rkey": hex(0xa00000 + 0x100 * ti + 0x10 * h + 6),
                        "target_addr": hex(base + 0x2000000),
                        "access": ["remote_read", "remote_write", "remote_atomic"]})
    eps.append({"tenant": "green", "vip": "192.168.1.30", "host": "10.0.0.2", "port": "vm-green",
                "mac": EP_MAC["192.168.1.30"]})
    return {
        "version": 1,
        "tenants": [{"name": t, "vni": 100 * (i + 1), "max_qps": 64, "mr_check": "enforce"}
                    for i, t in enumerate(TENANTS)],
        "endpoints": eps,
        "qps": qp_table(),
        "mrs": mrs,
        "neighbors": [{"ip": HOSTS[h][v], "mac": UPLINK_MAC[(str(h), 4 if v == "ip4" else 6)]}
                      for h in HOSTS for v in ("ip4", "ip6")],
        "dcqcn": {"enabled": False},
        "offload": {"enabled": False},
    }


def host_ports(h):
    ports = [
        {"name": "fabric0", "device": "net_pcap0", "role": "uplink", "ip": HOSTS[h]["ip4"],
         "mac": UPLINK_MAC[(str(h), 4)], "gateway_mac": "02:00:00:00:00:fe"},
        {"name": "fabric6", "device": "net_pcap1", "role": "uplink", "ip": HOSTS[h]["ip6"],
         "mac": UPLINK_MAC[(str(h), 6)], "gateway_mac": "02:00:00:00:06:fe"},
    ]
    for i, t in enumerate(TENANTS):
        ports.append({"name": "vm-" + t, "device": "net_pcap%d" % (i + 2), "role": "tenant",
                      "tenant": t, "mac": "02:00:00:%02x:%02x:01" % (h, i + 1)})
    return ports


def host_config(h, cluster=None):
    c = dict(cluster or cluster_config())
    c["comment"] = ["isolation suite, host H%d; see tests/isolation/gen_isolation.py" % h]
    c["ports"] = host_ports(h)
    return c


# ---------------------------------------------------------------------------
# Frames of the world.

def payload(tenant, n, salt, pad=0):
    """@n bytes of body (the tenant's marker first), then @pad zero bytes."""
    mark = MARKERS.get(tenant, b"????")
    body = (mark + bytes(((salt * 31) + 7 * i) & 0xff for i in range(max(n - 4, 0))))[:n]
    return body + bytes(pad)


def alias6(ip4):
    """The IPv6 address whose first four bytes are the IPv4 address, the rest zero."""
    b = bytes(int(x) for x in ip4.split(".")) + bytes(12)
    return norm(":".join("%x" % int.from_bytes(b[i:i + 2], "big") for i in range(0, 16, 2)))


class Record:
    """One input frame and what must happen to it."""
    __slots__ = ("id", "port", "data", "cls", "outcome", "tenant", "psn", "icrc_bad", "note", "hostile",
                 "frame")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))


class Gen:
    """Generates one host's input for one run, and predicts it with a HostModel."""

    def __init__(self, h, cluster, rng, psn_base):
        self.h = h
        self.o = 2 if h == 1 else 1
        self.c = cluster
        self.rng = rng
        self.model = HostModel(cluster, host_ports(h))
        self.records = []
        self.psn_base = psn_base
        self.psn_count = 0
        self.hostile = 0
        self.by_class = {}
        self.samples = {}       # class -> frames kept for the scapy cross-check
        # finish(): the NAKs of refused requests, as records of their own
        # (id, port, psn: the request's; outcome: a Fwd of kind "nak"), and
        # each port's output in the order the switch sends it.
        self.nak_records = []
        self.out_seq = None

    # -- ids and bookkeeping
    def next_psn(self):
        self.psn_count += 1
        return (self.psn_base + self.psn_count) & 0xffffff

    def emit(self, port, f, cls, hostile=True, expect=None, data=None, reason=None, note=""):
        """
        Feed @f (a Frame) or raw @data with a fixed parse @reason into @port.
        @expect, when given, is what the class means to provoke ("fwd" or a
        reason); the model must agree, or the generator is wrong.
        """
        rid = len(self.records)
        if data is None:
            data = f.build()
            out = self.model.process(port, f, len(data))
            if isinstance(out, Fwd):
                out.data = out.frame.build()
                assert len(out.data) == len(data), "generator: a rename changed the length"
            kept = self.samples.setdefault(cls, [])
            if len(kept) < 3:
                kept.append(f)
        else:
            t = self.model.ports[port].get("tenant")
            out = Drop(reason, t)
            self.model.count(port, len(data), out)
        if expect is not None:
            got = "fwd" if isinstance(out, Fwd) else out.reason
            assert got == expect, "generator: class %s expects %s, model says %s (%s)" % (
                cls, expect, got, note)
        tenant = self.model.ports[port].get("tenant")
        if tenant is None and f is not None:
            tenant = out.tenant if isinstance(out, (Fwd, Drop)) else None
        self.records.append(Record(id=rid, port=port, data=data, cls=cls, outcome=out, tenant=tenant,
                                   psn=f.psn if f is not None else None, hostile=hostile,
                                   icrc_bad=bool(f is not None and f.icrc_xor), note=note, frame=f))
        self.hostile += hostile
        self.by_class[cls] = self.by_class.get(cls, 0) + 1
        return out

    def finish(self):
        """
        The NAKs of refused RC requests, once every frame is in: the switch
        takes up to RX_BURST frames of a port at a time, polling its ports
        in configuration order on one lcore; within a burst it forwards
        (re-arming a direction's NAK with a forwarded request, noting the
        MSN of a forwarded answer) before it counts the burst's drops and
        sends their NAKs, in order.  A direction (sender, receiver) of an RC
        connection sends one NAK, then none until one of its requests is
        forwarded; the NAK's MSN is the last the receiver sent the sender
        (0 if none).  Also each port's output in sending order (out_seq),
        which phase 2 replays.
        """
        def key(q):
            return (q["tenant"], q["vip"], q["vqpn"])

        per = {p: [r for r in self.records if r.port == p] for p in self.model.port_order}
        self.out_seq = {p: [] for p in self.model.port_order}
        silenced, msn = set(), {}
        while any(per.values()):
            for p in self.model.port_order:
                burst, per[p] = per[p][:RX_BURST], per[p][RX_BURST:]
                for rec in burst:
                    if not isinstance(rec.outcome, Fwd) or rec.frame is None:
                        continue
                    c = self.model.conn_of(p, rec.frame)
                    if c is None:
                        continue
                    if rec.frame.op.request:
                        silenced.discard((key(c[0]), key(c[1])))
                    elif rec.frame.opcode in AETH_RESPONSES:
                        msn[(key(c[0]), key(c[1]))] = rec.frame.ext("AETH")["msn"] & 0xffffff
                for rec in burst:
                    out = rec.outcome
                    if isinstance(out, Fwd):
                        self.out_seq[out.port].append(rec)
                        continue
                    f = rec.frame
                    if out.reason not in NAK_REASONS or f is None or not f.op.request:
                        continue
                    c = self.model.conn_of(p, f)
                    if c is None or (key(c[0]), key(c[1])) in silenced:
                        continue
                    silenced.add((key(c[0]), key(c[1])))
                    n, nport = self.model.nak_frame(p, f, c[0], c[1], msn.get((key(c[1]), key(c[0])), 0))
                    nak = Fwd(nport, n, "nak", rec.tenant, False, False)
                    nak.data = n.build()
                    self.model.count_nak(nport, len(nak.data))
                    nrec = Record(id=rec.id, port=p, data=nak.data, cls="NAK of: " + rec.cls, outcome=nak,
                                  tenant=rec.tenant, psn=f.psn, hostile=rec.hostile, icrc_bad=False,
                                  note=out.reason + (", " + rec.note if rec.note else ""), frame=n)
                    self.nak_records.append(nrec)
                    self.out_seq[nport].append(nrec)
        return self

    # -- the parties
    def qps(self, tenant, **kw):
        return [q for q in self.c.qps.values() if q["tenant"] == tenant and
                all(q.get(k) == v for k, v in kw.items())]

    def local_conns(self, tenant, types=("rc", "uc")):
        """(L, R) for every local L with a peer."""
        return [(q, self.c.peer(q)) for q in self.c.qps.values()
                if q["tenant"] == tenant and q["type"] in types and self.model.local(q)]

    def remote_conns(self, tenant):
        return [(l, r) for l, r in self.local_conns(tenant) if not self.model.local(r)]

    def hairpins(self, tenant):
        return [(l, r) for l, r in self.local_conns(tenant) if self.model.local(r)]

    def vary(self, f, ver):
        r = self.rng
        f.sport = 0xc000 | r.randrange(0x4000)
        f.ttl = r.randrange(1, 256)
        f.tos = (r.choice([0, 10, 26, 34, 46]) << 2) | r.choice([0, 1, 2])   # never CE
        f.se, f.m = r.randrange(2), r.randrange(2)
        f.pkey = r.choice([0xffff, 0x8001, 0x7fff])
        f.fecn, f.becn = r.randrange(2), r.randrange(2)
        f.ackreq = r.randrange(2)
        if ver == 4:
            f.ip_id = r.randrange(0x10000)
            f.ip_flags = r.choice([0, 2])
        else:
            f.fl = r.randrange(1 << 20)
        return f

    def body(self, f, tenant, n=None, pad=None):
        if f.op is None or not f.op.payload:
            f.payload, f.pad = b"", 0
            return f
        r = self.rng
        if n is None:
            n = r.choice([0, 4, 16, 64, 256, 1024, r.randrange(4, 1500)])
        pad = r.randrange(4) if pad is None else pad
        if n < 4:
            pad = 0
        f.payload, f.pad = payload(tenant, n, f.psn, pad), pad
        return f

    def out(self, lq, rq, op, exts=(), n=None, pad=None, **kw):
        """A well-formed frame L sends to R, as it arrives on L's tenant port."""
        le = self.model.ep(lq["tenant"], lq["vip"])
        port = le["port"]
        f = Frame(eth_dst=self.model.ports[port]["mac"], eth_src=le["mac"], src=lq["vip"],
                  dst=rq["vip"], opcode=op, dqpn=rq["vqpn"], psn=self.next_psn(), exts=exts)
        self.vary(f, ip_ver(lq["vip"]))
        self.body(f, lq["tenant"], n, pad)
        for k, v in kw.items():
            setattr(f, k, v)
        return port, f

    def inc(self, lq, rq, op, exts=(), n=None, pad=None, **kw):
        """A well-formed frame R's host sends to L's pqpn, as it arrives on L's uplink."""
        up = self.model.uplink_for(lq["host"])
        f = Frame(eth_dst=up["mac"], eth_src=self.c.neigh[rq["host"]], src=rq["host"],
                  dst=lq["host"], opcode=op, dqpn=lq["pqpn"], psn=self.next_psn(), exts=exts)
        self.vary(f, ip_ver(lq["host"]))
        self.body(f, lq["tenant"], n, pad)
        for k, v in kw.items():
            setattr(f, k, v)
        return up["name"], f

    def ud_out(self, lq, rq, n=None, **kw):
        """A tenant's datagram: a Q_Key with bit 31 clear (a controlled one is c_controlled_qkey's)."""
        op = self.rng.choice([UD_SEND_ONLY, UD_SEND_ONLY_IMM])
        exts = [("DETH", {"qkey": self.rng.randrange(1 << 31), "srcqp": lq["vqpn"]})]
        if op == UD_SEND_ONLY_IMM:
            exts.append(("ImmDt", {"imm": self.rng.randrange(1 << 32)}))
        return self.out(lq, rq, op, exts, n=n, **kw)

    def ud_inc(self, lq, rq, n=None, **kw):
        op = self.rng.choice([UD_SEND_ONLY, UD_SEND_ONLY_IMM])
        exts = [("DETH", {"qkey": self.rng.randrange(1 << 32), "srcqp": rq["pqpn"]})]
        if op == UD_SEND_ONLY_IMM:
            exts.append(("ImmDt", {"imm": self.rng.randrange(1 << 32)}))
        return self.inc(lq, rq, op, exts, n=n, **kw)

    @staticmethod
    def has_memory(vip):
        return norm(vip) in {norm(hv[k]) for hv in HOSTS.values() for k in ("main", "main6")}

    def owner_keys(self, vip):
        """The rkeys @vip advertises."""
        return [0x1234] if ip_ver(vip) == 6 else [0x1234, 0x5678]

    def owner_window(self, vip, need):
        """(rkey, addr, length) of a window of @vip with access @need (read, write, atomic)."""
        if ip_ver(vip) == 6:
            return (0x1234,) + WIN_6
        return (0x1234,) + WIN_W if need == "write" else (0x5678,) + WIN_RA

    # -- helpers for requests
    def legit_ops(self, lq, rq):
        """A random legitimate frame from L to R: (op, exts, payload length or None)."""
        r = self.rng
        uc = lq["type"] == "uc"
        base = UC if uc else 0
        owner = rq["vip"]
        choices = ["send", "send_imm", "write", "ack", "rr", "atomic", "read", "cnp", "inv"]
        if uc:
            choices = ["send", "send_imm", "write"]
        if not self.has_memory(owner):
            # No window to name, and an IETH's R_Key would be unknown to the owner.
            choices = [c for c in choices if c not in ("write", "read", "atomic", "inv")]
        k = r.choice(choices)
        if k == "send":
            return base | SEND_ONLY, [], None
        if k == "send_imm":
            return base | SEND_ONLY_IMM, [("ImmDt", {"imm": r.randrange(1 << 32)})], None
        if k == "inv":     # an R_Key the owner advertised: translated at the owner's host
            return SEND_ONLY_INV, [("IETH", {"rkey": r.choice(self.owner_keys(owner))})], None
        if k == "write":
            rkey, addr, length = self.owner_window(owner, "write")
            n = r.randrange(0, 2048)
            va = addr + r.randrange(0, length - n + 1)
            return base | WRITE_ONLY, [("RETH", {"va": va, "rkey": rkey, "dmalen": n})], n
        if k == "read":
            rkey, addr, length = self.owner_window(owner, "read")
            n = r.randrange(0, length + 1)
            va = addr + r.randrange(0, length - n + 1)
            return READ_REQ, [("RETH", {"va": va, "rkey": rkey, "dmalen": n})], None
        if k == "atomic":
            rkey, addr, length = self.owner_window(owner, "atomic")
            va = addr + 8 * r.randrange(length // 8)
            return r.choice([CMP_SWAP, FETCH_ADD]), [("AtomicETH", {
                "va": va, "rkey": rkey, "swap": r.randrange(1 << 64), "comp": r.randrange(1 << 64)})], None
        if k == "ack":
            if r.randrange(2):
                return ACK, [("AETH", {"syndrome": r.choice([0x1f, 0x60, 0x61, 0x20]),
                                       "msn": r.randrange(1 << 24)})], None
            return ATOMIC_ACK, [("AETH", {"syndrome": 0x1f, "msn": r.randrange(1 << 24)}),
                                ("AtomicAckETH", {"orig": r.randrange(1 << 64)})], None
        if k == "rr":
            op = r.choice([RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY])
            ex = [] if op == RR_MIDDLE else [("AETH", {"syndrome": 0x1f, "msn": r.randrange(1 << 24)})]
            return op, ex, None
        return CNP, [("CNPPadding", {})], None

    def message_frames(self, lq, rq, mk, window_ok=True):
        """A multi-packet SEND or WRITE message: [(op, exts, n)]."""
        r = self.rng
        uc = UC if lq["type"] == "uc" else 0
        k = r.randrange(1, 4)
        n = 256
        if r.randrange(2) or not self.has_memory(rq["vip"]):
            seq = [(uc | SEND_FIRST, [], n)] + [(uc | SEND_MIDDLE, [], n)] * k
            last = r.choice([SEND_LAST, SEND_LAST_IMM] + ([] if uc or not self.has_memory(rq["vip"])
                                                          else [SEND_LAST_INV]))
        else:
            rkey, addr, length = self.owner_window(rq["vip"], "write")
            total = n * (k + 2)
            va = addr + r.randrange(0, length - total + 1)
            seq = [(uc | WRITE_FIRST, [("RETH", {"va": va, "rkey": rkey, "dmalen": total})], n)]
            seq += [(uc | WRITE_MIDDLE, [], n)] * k
            last = r.choice([WRITE_LAST, WRITE_LAST_IMM])
        ex = {SEND_LAST_IMM: [("ImmDt", {"imm": 5})], WRITE_LAST_IMM: [("ImmDt", {"imm": 6})],
              SEND_LAST_INV: [("IETH", {"rkey": r.choice(self.owner_keys(rq["vip"]))})]}.get(last, [])
        seq.append((uc | last, ex, 100))
        return seq


# ---------------------------------------------------------------------------
# Classes: each adds one or a few frames; the name says what it tries.

def tr(q):
    """The opcode base of a QP's transport (RC 0x00, UC 0x20)."""
    return UC if q["type"] == "uc" else 0


def c_legit_out(g):
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.local_conns(t))
    op, ex, n = g.legit_ops(lq, rq)
    port, f = g.out(lq, rq, op, ex, n=n)
    if g.rng.randrange(8) == 0 and f.ver == 4:
        f.ip_options = b"\x94\x04\x00\x00"
    if g.rng.randrange(8) == 0:
        f.udp_csum = True
    g.emit(port, f, "legit: tenant frame on its connection", hostile=False)


def c_legit_message(g):
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.local_conns(t))
    for op, ex, n in g.message_frames(lq, rq, None):
        port, f = g.out(lq, rq, op, ex, n=n, pad=0)
        g.emit(port, f, "legit: multi-packet message", hostile=False, expect="fwd")


def c_legit_ud(g):
    t = g.rng.choice(TENANTS)
    lq = g.rng.choice([q for q in g.qps(t, type="ud") if g.model.local(q)])
    rq = g.rng.choice([q for q in g.qps(t, type="ud") if q is not lq and ip_ver(q["vip"]) == ip_ver(lq["vip"])])
    port, f = g.ud_out(lq, rq)
    g.emit(port, f, "legit: UD datagram", hostile=False, expect="fwd")


def c_legit_fabric(g):
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.remote_conns(t))
    op, ex, n = g.legit_ops(rq, lq)
    port, f = g.inc(lq, rq, op, ex, n=n)
    g.emit(port, f, "legit: fabric frame to its connection", hostile=False)


def c_legit_fabric_ud(g):
    t = g.rng.choice(TENANTS)
    lq = g.rng.choice([q for q in g.qps(t, type="ud") if g.model.local(q)])
    rq = g.rng.choice([q for q in g.qps(t, type="ud") if not g.model.local(q) and
                       ip_ver(q["vip"]) == ip_ver(lq["vip"])])
    port, f = g.ud_inc(lq, rq)
    g.emit(port, f, "legit: fabric UD datagram", hostile=False, expect="fwd")


def c_padded(g):
    """
    Legitimate frames followed by Ethernet padding: a short frame padded to
    the Ethernet minimum of 60 bytes (a zero-length SEND Only over IPv4 is
    58), a kept FCS, junk or zeros.  The frame ends where its IP length
    says; the padding changes no decision and stays on the frame.
    """
    r = g.rng
    t = r.choice(TENANTS)
    way = r.randrange(3)
    if way == 0:
        lq, rq = r.choice(g.local_conns(t))
        op, ex, n = (tr(lq) | SEND_ONLY, [], 0) if r.randrange(2) else g.legit_ops(lq, rq)
        port, f = g.out(lq, rq, op, ex, n=n)
    elif way == 1:
        lq, rq = r.choice(g.remote_conns(t))
        op, ex, n = (tr(lq) | SEND_ONLY, [], 0) if r.randrange(2) else g.legit_ops(rq, lq)
        port, f = g.inc(lq, rq, op, ex, n=n)
    else:
        lq = r.choice([q for q in g.qps(t, type="ud") if g.model.local(q)])
        rq = r.choice([q for q in g.qps(t, type="ud") if q is not lq and ip_ver(q["vip"]) == ip_ver(lq["vip"])])
        port, f = g.ud_out(lq, rq, n=r.choice([0, 4, 64]))
    f.udp_csum = bool(r.randrange(4) == 0)
    n = len(f.build())
    kind = r.randrange(4)
    if kind == 0 and n < 60:
        f.l2_pad = bytes(60 - n)
    elif kind == 1:
        f.l2_pad = bytes(r.randrange(256) for _ in range(4))
    elif kind == 2:
        f.l2_pad = bytes(r.randrange(256) for _ in range(r.randrange(1, 65)))
    else:
        f.l2_pad = bytes(r.randrange(1, 17))
    g.emit(port, f, "legit: frame with Ethernet padding", hostile=False, note="%d + %d bytes of padding" % (
        n, len(f.l2_pad)))


def c_spoof_vip(g):
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.local_conns(t))
    op, ex, n = g.legit_ops(lq, rq)
    port, f = g.out(lq, rq, op, ex, n=n)
    v4 = ip_ver(lq["vip"]) == 4
    cands = (["192.168.1.10", "192.168.1.11", "192.168.1.20", "192.168.1.21", "192.168.1.30",
              "10.0.0.1", "10.0.0.2", "192.168.1.%d" % g.rng.randrange(256)] if v4 else
             ["fd00:1::10", "fd00:1::20", "fd00::1", "fd00::2", "fe80::1", "::"])
    f.src = g.rng.choice([c for c in cands if norm(c) != lq["vip"]])
    g.emit(port, f, "forged source vIP", expect="spoofed_source")


def c_spoof_mac(g):
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.local_conns(t))
    op, ex, n = g.legit_ops(lq, rq)
    port, f = g.out(lq, rq, op, ex, n=n)
    le = g.model.ep(t, lq["vip"])
    f.eth_src = g.rng.choice([m for m in list(EP_MAC.values()) + ["02:00:00:00:bb:10", "ff:ff:ff:ff:ff:ff",
                                                                 "00:00:00:00:00:00"] if m != le["mac"]])
    g.emit(port, f, "forged source MAC", expect="spoofed_source")


def c_invalidate(g):
    """
    SEND Only, or First ... Last, with Invalidate at the memory's owner (from
    the fabric, or on a hairpin): an R_Key the owner never advertised (a
    target key, another endpoint's, any) is mr_unknown; an advertised one is
    translated (the hairpin partner advertises none: always unknown).
    """
    r = g.rng
    t = r.choice(TENANTS)
    if r.randrange(2):
        lq, rq = r.choice(g.hairpins(t))
        owner, mk = rq["vip"], g.out
    else:
        lq, rq = r.choice([c for c in g.remote_conns(t) if c[0]["type"] == "rc"])
        owner, mk = lq["vip"], g.inc
    good = g.has_memory(owner) and r.randrange(3) == 0
    key = r.choice(g.owner_keys(owner)) if good else r.choice([0x9999, 0xa00001, 0xa00112, 0, 0x77])
    if r.randrange(2):
        port, f = mk(lq, rq, SEND_FIRST, n=256, pad=0)
        g.emit(port, f, "a First", hostile=False, expect="fwd")
        op = SEND_LAST_INV
    else:
        op = SEND_ONLY_INV
    port, f = mk(lq, rq, op, [("IETH", {"rkey": key})], n=64, pad=0)
    g.emit(port, f, "SEND with Invalidate at the owner, %s R_Key" % ("an advertised" if good else "an unknown"),
           expect="fwd" if good else "mr_unknown", note="rkey %#x" % key)


def c_controlled_qkey(g):
    """
    A tenant's datagram with a controlled Q_Key (bit 31): privileged_qkey,
    which no tenant here has; checked after the sender, so a forged sender
    with one is still spoofed_source.  (From the fabric a datagram's Q_Key
    is not checked: c_legit_fabric_ud's are any 32 bits.)
    """
    t = g.rng.choice(TENANTS)
    lq = g.rng.choice([q for q in g.qps(t, type="ud") if g.model.local(q)])
    rq = g.rng.choice([q for q in g.qps(t, type="ud") if q is not lq and ip_ver(q["vip"]) == ip_ver(lq["vip"])])
    port, f = g.ud_out(lq, rq)
    f.ext("DETH")["qkey"] |= 0x80000000
    if g.rng.randrange(4):
        g.emit(port, f, "UD with a controlled Q_Key (bit 31)", expect="privileged_qkey")
    else:
        f.ext("DETH")["srcqp"] = 99
        g.emit(port, f, "UD with a controlled Q_Key from an unknown sender QP", expect="spoofed_source")


def c_spoof_ud(g):
    t = g.rng.choice(TENANTS)
    locs = [q for q in g.qps(t, type="ud") if g.model.local(q)]
    lq = g.rng.choice(locs)
    rq = g.rng.choice([q for q in g.qps(t, type="ud") if q is not lq and ip_ver(q["vip"]) == ip_ver(lq["vip"])])
    port, f = g.ud_out(lq, rq)
    way = g.rng.randrange(5)
    d = f.ext("DETH")
    if way == 0:    # the source QPN of another QP of the same endpoint host
        d["srcqp"] = g.rng.choice([q["vqpn"] for q in g.qps(t, type="ud") if q["vqpn"] != lq["vqpn"]])
    elif way == 1:  # an unknown source QPN
        d["srcqp"] = g.rng.choice([2, 3, 99, 0xffffff])
    elif way == 2:  # a remote UD QP's identity (vIP and vqpn)
        rem = g.rng.choice([q for q in g.qps(t, type="ud") if not g.model.local(q) and
                            ip_ver(q["vip"]) == ip_ver(lq["vip"])])
        f.src, d["srcqp"] = rem["vip"], rem["vqpn"]
        f.eth_src = g.model.ep(t, rem["vip"])["mac"]
    elif way == 3:  # the right QP, the wrong MAC
        f.eth_src = g.rng.choice([m for m in EP_MAC.values() if m != f.eth_src])
    else:           # the source QPN of an RC connection's peer
        _, rr = g.rng.choice(g.local_conns(t))
        f.src, d["srcqp"] = rr["vip"], rr["vqpn"]
        if ip_ver(rr["vip"]) != ip_ver(f.dst):
            f.src = lq["vip"]
    g.emit(port, f, "forged UD sender (DETH source QPN, vIP or MAC)", expect="spoofed_source")


def c_other_pqpn(g):
    """Fabric identities (host IPs, pqpns of any tenant) sent from a tenant port."""
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.local_conns(t))
    op, ex, n = g.legit_ops(lq, rq)
    port, f = g.out(lq, rq, op, ex, n=n)
    other = g.rng.choice([q for q in g.c.qps.values() if ip_ver(q["vip"]) == ip_ver(lq["vip"])])
    f.dqpn = other["pqpn"]
    f.dst = g.rng.choice([other["host"], rq["vip"], other["vip"]])
    g.emit(port, f, "another tenant's (or any) pqpn from a tenant port")


def c_foreign_vip(g):
    t = g.rng.choice(["blue", "red"])
    lq = g.rng.choice([q for q in g.qps(t, type="ud") if g.model.local(q) and ip_ver(q["vip"]) == 4])
    green30 = g.c.qps[("green", "192.168.1.30", 43)]
    port, f = g.ud_out(lq, green30)
    if g.rng.randrange(2):
        f.dst = "192.168.%d.%d" % (g.rng.randrange(2, 256), g.rng.randrange(256))
    g.emit(port, f, "a vIP only another tenant has (or nobody)", expect="wrong_tenant")


def c_unmapped_vqpn(g):
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.local_conns(t))
    port, f = g.out(lq, rq, SEND_ONLY)
    used = {q["vqpn"] for q in g.c.qps.values()}
    f.dqpn = g.rng.choice([x for x in (0, 2, 5, 34, 99, 4097, 0xffffff) if x not in used])
    g.emit(port, f, "a tenant's vIP with a QPN it does not have", expect="no_connection")


def c_gsi(g):
    if g.rng.randrange(2):
        t = g.rng.choice(TENANTS)
        lq = g.rng.choice([q for q in g.qps(t, type="ud") if g.model.local(q)])
        rq = g.rng.choice([q for q in g.qps(t, type="ud") if ip_ver(q["vip"]) == ip_ver(lq["vip"])])
        port, f = g.ud_out(lq, rq, n=256, dqpn=1)
    else:
        t = g.rng.choice(TENANTS)
        lq, rq = g.rng.choice(g.remote_conns(t))
        port, f = g.inc(lq, rq, UD_SEND_ONLY, [("DETH", {"qkey": 0x80010000, "srcqp": 1})], n=256, dqpn=1)
    g.emit(port, f, "DestQP 1 (GSI)", expect="gsi")


def c_type_mismatch(g):
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.local_conns(t))
    r = g.rng
    if lq["type"] == "rc":
        op = r.choice([UC | SEND_ONLY, UC | WRITE_ONLY, UD_SEND_ONLY, XRC | SEND_ONLY, XRC | READ_REQ,
                       XRC | ACK])
    else:
        op = r.choice([SEND_ONLY, READ_REQ, ACK, CMP_SWAP, UD_SEND_ONLY, XRC | SEND_ONLY])
    ex = []
    for n in OPS[op].exts:
        ex.append((n, {"XRCETH": {"xrcsrq": 5}, "DETH": {"qkey": 1, "srcqp": lq["vqpn"]},
                       "RETH": {"va": 0x7f0000000000, "rkey": 0x1234, "dmalen": 16},
                       "AETH": {"syndrome": 0x1f, "msn": 1}, "ImmDt": {"imm": 1},
                       "AtomicETH": {"va": 0x7f0000100000, "rkey": 0x5678, "swap": 1, "comp": 2}}[n]))
    if r.randrange(2) and not g.model.local(rq):
        port, f = g.inc(lq, rq, op, ex)
    else:
        port, f = g.out(lq, rq, op, ex)
    g.emit(port, f, "opcode of another transport (UC/UD/XRC on RC, RC on UC)", expect="type_mismatch")


def c_rc_to_ud(g):
    t = g.rng.choice(TENANTS)
    lq = g.rng.choice([q for q in g.qps(t, type="ud") if g.model.local(q)])
    if g.rng.randrange(2):
        rq = g.rng.choice([q for q in g.qps(t, type="ud") if ip_ver(q["vip"]) == ip_ver(lq["vip"])])
        port, f = g.out(lq, rq, g.rng.choice([SEND_ONLY, UC | SEND_ONLY]))
    else:
        rq = g.rng.choice([q for q in g.qps(t, type="ud") if not g.model.local(q) and
                           ip_ver(q["vip"]) == ip_ver(lq["vip"])])
        if g.rng.randrange(2):
            port, f = g.inc(lq, rq, SEND_ONLY)
        else:
            port, f = g.inc(lq, rq, ACK, [("AETH", {"syndrome": 0x1f, "msn": 3})])
    g.emit(port, f, "RC/UC opcode to a UD QP (no DETH)", expect="type_mismatch")


def mem_variant(g, owner, need):
    """
    A (rkey, va, length, what) near the edges of one of @owner's windows,
    chosen whatever access the window grants (so that a READ may aim at a
    write-only window), or with an rkey nobody advertised.
    """
    r = g.rng
    windows = [(0x1234,) + WIN_6] if ip_ver(owner) == 6 else [(0x1234,) + WIN_W, (0x5678,) + WIN_RA]
    rkey, addr, length = r.choice(windows)
    if need == "atomic":
        ways = [("lo", addr, 8), ("hi", addr + length - 8, 8), ("lo-1", addr - 1, 8),
                ("hi+1", addr + length - 7, 8), ("past", addr + length, 8), ("wrap", (1 << 64) - 4, 8)]
    else:
        ways = [("lo", addr, r.randrange(1, 64)), ("hi", None, r.randrange(1, 64)),
                ("lo-1", addr - 1, r.randrange(1, 64)), ("hi+1", None, r.randrange(1, 64)),
                ("zero@lo", addr, 0), ("zero@end", addr + length, 0), ("zero@end+1", addr + length + 1, 0),
                ("zero@lo-1", addr - 1, 0), ("all", addr, length), ("all+1", addr, length + 1),
                ("all@+1", addr + 1, length), ("max", addr, 0xffffffff), ("max@0", 0, 0xffffffff),
                ("wrap", (1 << 64) - 16, 64), ("zero@0", 0, 0)]
    name, va, n = r.choice(ways)
    if name == "hi":
        va = addr + length - n
    elif name == "hi+1":
        va = addr + length - n + 1
    name = "rkey %#x %s" % (rkey, name)
    if r.randrange(6) == 0:     # an rkey nobody advertised, or a target rkey
        rkey = r.choice([0x9999, 0xa00001, 0xa00111, 0xa00212, 0])
        name += ", unknown rkey %#x" % rkey
    return rkey, va & 0xffffffffffffffff, n, name


def mem_frame(g, lq, rq, direction, need, name_prefix):
    """A request with a RETH/AtomicETH near the edges, toward the owner R (egress) or L (ingress)."""
    owner = rq["vip"] if direction == "out" else lq["vip"]
    rkey, va, n, what = mem_variant(g, owner, need)
    r = g.rng
    if need == "atomic":
        op = r.choice([CMP_SWAP, FETCH_ADD])
        ex = [("AtomicETH", {"va": va, "rkey": rkey, "swap": 7, "comp": 9})]
        body = None
    elif need == "read":
        op, ex, body = READ_REQ, [("RETH", {"va": va, "rkey": rkey, "dmalen": n})], None
    else:
        op = r.choice([WRITE_ONLY, WRITE_ONLY_IMM, WRITE_FIRST])
        ex = [("RETH", {"va": va, "rkey": rkey, "dmalen": n})]
        if op == WRITE_ONLY_IMM:
            ex.append(("ImmDt", {"imm": 3}))
        body = min(n, 512) if op != WRITE_FIRST else 256
    if lq["type"] == "uc":
        if need != "write":
            return None
        op |= UC
    if direction == "out":
        port, f = g.out(lq, rq, op, ex, n=body, pad=0)
    else:
        port, f = g.inc(lq, rq, op, ex, n=body, pad=0)
    return port, f, "%s %s %s" % (name_prefix, need, what)


def c_mem_edges(g, direction):
    """RETH/AtomicETH off by one at both ends, zero and maximum lengths, wrong access, unknown rkeys."""
    t = g.rng.choice(TENANTS)
    conns = g.hairpins(t) if direction == "out" else g.remote_conns(t)
    conns = [(l, r) for l, r in conns if g.has_memory(r["vip"] if direction == "out" else l["vip"])]
    lq, rq = g.rng.choice(conns)
    need = g.rng.choice(["write", "read", "atomic"])
    made = mem_frame(g, lq, rq, direction, need, "memory edge")
    if made is None:
        return
    port, f, what = made
    if g.rng.randrange(6) == 0:     # tagged: a refusal's NAK carries the request's tags
        f.vlans = [(0x8100, g.rng.randrange(1, 4095), g.rng.randrange(8))]
        if g.rng.randrange(2):
            f.vlans.insert(0, (0x88a8, g.rng.randrange(1, 4095), g.rng.randrange(8)))
        what += ", %d VLAN tag%s" % (len(f.vlans), "s" if len(f.vlans) > 1 else "")
    out = g.emit(port, f, "memory window edges (%s)" % ("hairpin" if direction == "out" else "fabric"),
                 note=what)
    # A denied First leaves its message denied: Middles and the Last are dropped.
    if f.op.position == "first":
        uc = UC if lq["type"] == "uc" else 0
        for op in [WRITE_MIDDLE] * g.rng.randrange(0, 3) + [g.rng.choice([WRITE_LAST, WRITE_LAST_IMM])]:
            ex = [("ImmDt", {"imm": 1})] if op == WRITE_LAST_IMM else []
            mk = g.out if direction == "out" else g.inc
            port, f2 = mk(lq, rq, uc | op, ex, n=256, pad=0)
            g.emit(port, f2, "rest of a message after its First (%s)" % (
                "denied" if isinstance(out, Drop) else "allowed"),
                expect="message_denied" if isinstance(out, Drop) else "fwd")


def c_mem_unknown_owner(g):
    """RETH toward an endpoint that owns no memory on this host (the hairpin partner)."""
    t = g.rng.choice(TENANTS)
    hp = [(l, r) for l, r in g.hairpins(t) if r["vip"].endswith((".11", ".21"))]
    lq, rq = g.rng.choice(hp)
    port, f = g.out(lq, rq, g.rng.choice([WRITE_ONLY, READ_REQ]),
                    [("RETH", {"va": WIN_W[0], "rkey": 0x1234, "dmalen": 16})], n=16, pad=0)
    g.emit(port, f, "RETH to an endpoint with no memory windows", expect="mr_unknown")


def c_seq_nonsense(g):
    """Opcode sequences that make no sense; DESIGN: no open message, forward under the rename."""
    t = g.rng.choice(TENANTS)
    r = g.rng
    way = r.randrange(4)
    conns = g.local_conns(t)
    lq, rq = r.choice(conns)
    uc = UC if lq["type"] == "uc" else 0
    mk = g.out
    if way == 3 and not g.model.local(rq):
        mk = g.inc
    if way in (0, 3):   # a Last or a Middle with no First
        op = uc | r.choice([SEND_LAST, SEND_MIDDLE, WRITE_MIDDLE, WRITE_LAST])
        port, f = mk(lq, rq, op, n=r.choice([0, 64, 256]))
        g.emit(port, f, "a Middle or Last with no First")
    elif way == 1:      # First on one connection, Middle/Last on another
        others = [(l, r_) for l, r_ in conns if l is not lq]
        lq2, rq2 = r.choice(others)
        port, f = g.out(lq, rq, uc | SEND_FIRST, n=256, pad=0)
        g.emit(port, f, "a First", hostile=False)
        uc2 = UC if lq2["type"] == "uc" else 0
        port, f = g.out(lq2, rq2, uc2 | r.choice([SEND_MIDDLE, WRITE_MIDDLE, SEND_LAST]), n=256, pad=0)
        g.emit(port, f, "a Middle or Last on a different connection than its First")
    else:               # a First of one kind, continued with another kind
        port, f = g.out(lq, rq, uc | SEND_FIRST, n=256, pad=0)
        g.emit(port, f, "a First", hostile=False)
        port, f = g.out(lq, rq, uc | r.choice([WRITE_MIDDLE, WRITE_LAST]), n=256, pad=0)
        g.emit(port, f, "a SEND First continued by WRITE Middle/Last")


def c_seq_cross_tenant(g):
    """First from one tenant, its Middle from another tenant with the same identity."""
    t1, t2 = g.rng.sample(TENANTS, 2)
    conns1 = g.remote_conns(t1)
    lq, rq = g.rng.choice([c for c in conns1 if c[0]["type"] == "rc"])
    port, f = g.out(lq, rq, SEND_FIRST, n=256, pad=0)
    g.emit(port, f, "a First", hostile=False)
    lq2 = g.c.qps[(t2, lq["vip"], lq["vqpn"])]
    port, f = g.out(lq2, g.c.peer(lq2), g.rng.choice([SEND_MIDDLE, SEND_LAST]), n=256, pad=0)
    g.emit(port, f, "a Middle from another tenant with the same vIP and vQPN", expect="fwd")


def c_remote_oob(g):
    """Requests outside the remote owner's windows: forwarded here, the owner's host drops them."""
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice([c for c in g.remote_conns(t)])
    need = g.rng.choice(["write", "read", "atomic"])
    made = mem_frame(g, lq, rq, "out", need, "remote memory")
    if made is None:
        return
    port, f, what = made
    g.emit(port, f, "memory edges toward a remote owner (checked by the owner's host)", note=what,
           expect="fwd")
    if f.op.position == "first":
        uc = UC if lq["type"] == "uc" else 0
        for op in [WRITE_MIDDLE] * g.rng.randrange(0, 3) + [WRITE_LAST]:
            port, f2 = g.out(lq, rq, uc | op, n=256, pad=0)
            g.emit(port, f2, "rest of a message toward a remote owner", expect="fwd")


def c_vlan(g):
    r = g.rng
    if r.randrange(2):
        t = r.choice(TENANTS)
        lq, rq = r.choice(g.local_conns(t))
        op, ex, n = g.legit_ops(lq, rq)
        port, f = g.out(lq, rq, op, ex, n=n)
        cls = "VLAN tags on a tenant port"
    else:
        t = r.choice(TENANTS)
        lq, rq = r.choice(g.remote_conns(t))
        op, ex, n = g.legit_ops(rq, lq)
        port, f = g.inc(lq, rq, op, ex, n=n)
        cls = "VLAN tags on an uplink"
    tags = [(0x8100, r.randrange(1, 4095), r.randrange(8))]
    if r.randrange(3) == 0:
        tags.insert(0, (0x88a8, r.randrange(1, 4095), r.randrange(8)))
    f.vlans = tags
    g.emit(port, f, cls, expect="fwd" if VLAN_POLICY == "forward" and op not in (
        SEND_FIRST, WRITE_FIRST) else None)


def c_mixed_ip(g):
    """IPv4 and IPv6 mixed: IPv6 frames whose addresses alias IPv4 identities, and the reverse."""
    t = g.rng.choice(TENANTS)
    r = g.rng
    way = r.randrange(4)
    if way == 0:    # RC: an IPv6 frame whose addresses are the IPv4 vIPs' bytes, zero-padded
        lq, rq = r.choice([c for c in g.remote_conns(t) if ip_ver(c[0]["vip"]) == 4 and c[0]["type"] == "rc"])
        port, f = g.out(lq, rq, SEND_ONLY, n=64)
        f.src, f.dst = alias6(lq["vip"]), alias6(rq["vip"])
        g.emit(port, f, "IPv6 frame with IPv4 vIPs as zero-padded IPv6 addresses (RC)",
               expect="wrong_tenant")
    elif way == 1:  # UD: the sender an IPv4 UD QP in IPv6 clothes, to an IPv6 UD QP
        lq = g.c.qps[(t, HOSTS[g.h]["main"], 40 if g.h == 1 else 42)]
        rq = r.choice([q for q in g.qps(t, type="ud") if ip_ver(q["vip"]) == 6 and q["vip"] != HOSTS[g.h]["main6"]])
        port, f = g.ud_out(lq, rq, n=64)
        f.src = alias6(lq["vip"])
        f.dst = rq["vip"]
        g.emit(port, f, "IPv6 UD frame whose source aliases an IPv4 UD QP", expect="spoofed_source")
    elif way == 2:  # IPv4-mapped IPv6 addresses
        lq, rq = r.choice([c for c in g.remote_conns(t) if ip_ver(c[0]["vip"]) == 4])
        port, f = g.out(lq, rq, SEND_ONLY, n=64)
        f.src, f.dst = "::ffff:" + lq["vip"], "::ffff:" + rq["vip"]
        g.emit(port, f, "IPv6 frame with IPv4-mapped vIPs", expect="wrong_tenant")
    else:           # a fabric frame whose destination aliases our IPv4 host in IPv6
        lq, rq = r.choice([c for c in g.remote_conns(t) if ip_ver(c[0]["vip"]) == 4])
        port, f = g.inc(lq, rq, SEND_ONLY, n=64)
        f.src, f.dst = alias6(rq["host"]), alias6(lq["host"])
        port = "fabric6"
        g.emit(port, f, "fabric IPv6 frame to our IPv4 host's bytes", expect="not_our_host")


def c_cross_uplink(g):
    """Stateless fabric frames for an IPv4 connection on the IPv6 uplink and the reverse."""
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice([c for c in g.remote_conns(t) if c[0]["type"] == "rc"])
    op = g.rng.choice([ACK, RR_MIDDLE, RR_ONLY, CNP])
    ex = {ACK: [("AETH", {"syndrome": 0x1f, "msn": 9})], RR_ONLY: [("AETH", {"syndrome": 0x1f, "msn": 9})],
          CNP: [("CNPPadding", {})]}.get(op, [])
    port, f = g.inc(lq, rq, op, ex)
    port = "fabric6" if port == "fabric0" else "fabric0"
    g.emit(port, f, "IPv4 and IPv6 mixed: a frame on the other version's uplink", expect="fwd")


def c_fab_unmapped(g):
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.remote_conns(t))
    port, f = g.inc(lq, rq, SEND_ONLY, n=64)
    ours = {(q["host"], q["pqpn"]) for q in g.c.qps.values()
            if g.model.local(q) and (q["type"] == "ud" or "peer" in q)}
    pick = [q["pqpn"] for q in g.c.qps.values() if (lq["host"], q["pqpn"]) not in ours]
    f.dqpn = g.rng.choice(pick + [0, 2, 0x123456, 0xffffff, 17, 33])
    g.emit(port, f, "fabric frame to an unmapped pqpn", expect="no_connection")


def c_fab_not_ours(g):
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.remote_conns(t))
    port, f = g.inc(lq, rq, SEND_ONLY, n=64)
    v4 = ip_ver(lq["host"]) == 4
    f.dst = g.rng.choice(["10.0.0.%d" % g.o, "10.0.0.9", "192.168.1.10", "255.255.255.255", "127.0.0.1"]
                         if v4 else ["fd00::%d" % g.o, "fd00::9", "fd00:1::10", "ff02::1"])
    g.emit(port, f, "fabric frame for another host", expect="not_our_host")


def c_fab_wrong_src(g):
    t = g.rng.choice(TENANTS)
    r = g.rng
    if r.randrange(3) == 0:
        lq, rq = r.choice(g.hairpins(t))
        port, f = g.inc(lq, lq, SEND_ONLY, n=64)
        f.src = lq["host"]
        g.emit(port, f, "fabric frame claiming a local peer (own host as source)", expect="spoofed_source")
        return
    lq, rq = r.choice(g.remote_conns(t))
    op, ex, n = g.legit_ops(rq, lq)
    port, f = g.inc(lq, rq, op, ex, n=n)
    f.src = r.choice(["10.0.0.3", "10.0.0.%d" % g.h, "0.0.0.0", "192.168.1.20"]
                     if f.ver == 4 else ["fd00::3", "fd00::%d" % g.h, "fd00:1::20"])
    g.emit(port, f, "fabric frame from a host that is not the peer's", expect="spoofed_source")


def c_fab_ud_spoof(g):
    t = g.rng.choice(TENANTS)
    r = g.rng
    lq = r.choice([q for q in g.qps(t, type="ud") if g.model.local(q)])
    rq = r.choice([q for q in g.qps(t, type="ud") if not g.model.local(q) and ip_ver(q["vip"]) == ip_ver(lq["vip"])])
    port, f = g.ud_inc(lq, rq)
    d = f.ext("DETH")
    way = r.randrange(4)
    if way == 0:    # another tenant's remote UD QP
        d["srcqp"] = r.choice([q["pqpn"] for q in g.c.qps.values() if q["tenant"] != t and
                               q["type"] == "ud" and q["host"] == rq["host"]])
    elif way == 1:  # a local UD QP (only the hairpin speaks for those)
        loc = r.choice([q for q in g.qps(t, type="ud") if g.model.local(q) and ip_ver(q["vip"]) == f.ver])
        f.src, d["srcqp"] = loc["host"], loc["pqpn"]
    elif way == 2:  # nobody
        d["srcqp"] = r.choice([0, 2, 0x777, 0xffffff])
    else:           # the pqpn of an RC QP of the peer host
        rc = r.choice([q for q in g.qps(t) if q["type"] == "rc" and not g.model.local(q) and
                       ip_ver(q["vip"]) == f.ver])
        d["srcqp"] = rc["pqpn"]
    g.emit(port, f, "fabric UD frame with a forged sender", expect="spoofed_source")


def c_bad_icrc(g):
    t = g.rng.choice(TENANTS)
    if g.rng.randrange(2):
        lq, rq = g.rng.choice(g.local_conns(t))
        port, f = g.out(lq, rq, tr(lq) | SEND_ONLY, n=g.rng.choice([0, 64, 300]))
    else:
        lq, rq = g.rng.choice(g.remote_conns(t))
        port, f = g.inc(lq, rq, tr(lq) | SEND_ONLY, n=g.rng.choice([0, 64, 300]))
    f.icrc_xor = g.rng.randrange(1, 1 << 32)
    g.emit(port, f, "corrupted ICRC (must stay corrupted)", expect="fwd")


def c_max_len(g):
    """The largest linear frame (the mbuf size) forwards; one byte more arrives chained."""
    t = g.rng.choice(TENANTS)
    r = g.rng
    if r.randrange(2):
        lq, rq = r.choice([c for c in g.local_conns(t) if c[0]["type"] == "rc"])
        port, f = g.out(lq, rq, SEND_ONLY, n=0, pad=0)
    else:
        lq, rq = r.choice([c for c in g.remote_conns(t) if c[0]["type"] == "rc"])
        port, f = g.inc(lq, rq, SEND_ONLY, n=0, pad=0)
    over = r.randrange(2)
    n = MTU_FRAME - len(f.build()) + (r.randrange(1, 64) if over else 0)
    f.payload = payload(t, n, f.psn)
    if over:
        g.emit(port, f, "frame longer than an mbuf (arrives as a chain)", expect="nonlinear")
    else:
        g.emit(port, f, "frame exactly as long as an mbuf", expect="fwd")


def c_cnp_bad(g):
    t = g.rng.choice(TENANTS)
    lq, rq = g.rng.choice(g.local_conns(t))
    port, f = g.out(lq, rq, CNP, [])
    k = g.rng.choice([0, 8, 12, 15, 17, 32])
    g.emit(port, None, "CNP of the wrong size", data=f.build(l4_payload=f.bth_rest() + bytes(k) + bytes(4)),
           reason="bad_payload")


PARSE_REASONS = ["truncated_eth", "truncated_vlan", "too_many_vlans", "not_ip", "truncated_ip",
                 "bad_ip_version", "bad_ip_ihl", "ip_fragment", "bad_ip_length", "not_udp",
                 "truncated_udp", "bad_udp_length", "not_roce_port", "truncated_bth", "bad_tver",
                 "bad_opcode", "truncated_ext", "truncated_icrc", "bad_payload", "bad_pad"]


def malformed_bytes(g, f, reason):
    """@f broken in exactly one way that roce_parse() names @reason."""
    r = g.rng
    b = bytearray(f.build())
    l3 = 14 + 4 * len(f.vlans)
    v4 = f.ver == 4
    ihl = 20 + len(f.ip_options) if v4 else 40
    l4 = l3 + ihl

    def fix_ip_len(buf, l4_len):
        if v4:
            buf[l3 + 2:l3 + 4] = (ihl + l4_len).to_bytes(2, "big")
        else:
            buf[l3 + 4:l3 + 6] = l4_len.to_bytes(2, "big")
        return buf

    if reason == "truncated_eth":
        return bytes(b[:r.randrange(1, 14)])
    if reason == "truncated_vlan":
        n = r.randrange(1, 3)
        return f.copy(vlans=[(0x8100, 5, 0)] * n).build()[:r.randrange(14, 14 + 4 * n)]
    if reason == "too_many_vlans":
        return f.copy(vlans=[(r.choice([0x8100, 0x88a8]), r.randrange(4095), 0) for _ in range(r.randrange(3, 5))]).build()
    if reason == "not_ip":
        b[l3 - 2:l3] = r.choice([0x0806, 0x88b5, 0x8847, 0x88cc, 0x0000, 0xffff, 0x86dc]).to_bytes(2, "big")
        return bytes(b)
    if reason == "truncated_ip":
        return bytes(b[:r.randrange(l3, l3 + (20 if v4 else 40))])
    if reason == "bad_ip_version":
        b[l3] = (r.choice([x for x in range(16) if x != (4 if v4 else 6)]) << 4) | (b[l3] & 0xf)
        return bytes(b)
    if reason == "bad_ip_ihl":
        if not v4:
            return None
        b[l3] = 0x40 | r.randrange(5)
        return bytes(b)
    if reason == "ip_fragment":
        if not v4:
            return None
        v = r.choice([0x2000, 0x2000 | r.randrange(1, 0x2000), r.randrange(1, 0x2000)])
        v |= r.choice([0, 0x4000])    # DF may be set as well
        b[l3 + 6:l3 + 8] = v.to_bytes(2, "big")
        return bytes(b)
    if reason == "bad_ip_length":
        # An IP length past the end of the frame (a frame cut short of its
        # length), or an IPv4 total length below the header length.  A
        # shorter IP length is no longer this: the rest of the frame is
        # Ethernet padding (see truncated_udp and bad_udp_length).
        off = (l3 + 2) if v4 else (l3 + 4)
        cur = int.from_bytes(b[off:off + 2], "big")
        ways = [cur + 1, cur + 4, 0xffff]
        if v4:
            ways += [0, r.randrange(ihl), ihl - 1]
        b[off:off + 2] = r.choice(ways).to_bytes(2, "big")
        return bytes(b)
    if reason == "not_udp":
        b[l3 + (9 if v4 else 6)] = r.choice([6, 1, 44, 58, 0, 255])
        return bytes(b)
    if reason == "truncated_udp":
        k = r.randrange(0, 8)
        if r.randrange(2):      # the frame ends inside the UDP header
            return bytes(fix_ip_len(bytearray(b[:l4 + k]), k))
        # The IP length leaves k < 8 bytes of UDP (IPv4 total length = IHL,
        # IPv6 payload length 0, ...); the whole frame follows as padding,
        # which never makes up for the UDP header.
        return bytes(fix_ip_len(b, k))
    if reason == "bad_udp_length":
        cur = int.from_bytes(b[l4 + 4:l4 + 6], "big")
        way = r.randrange(3)
        if way == 0:            # the IP length agrees with the frame, UDP does not
            b[l4 + 4:l4 + 6] = r.choice([x for x in (0, 8, cur - 1, cur + 1, 0xffff) if x != cur]).to_bytes(2, "big")
            return bytes(b)
        if way == 1:            # the IP length k short of the frame: UDP runs k bytes into the padding
            k = r.randrange(1, min(cur - 8, 64) + 1)
            return bytes(fix_ip_len(b, cur - k))
        # Padding after a well-formed frame, and a UDP length covering j of its bytes.
        n = r.choice([1, 2, 4, 8, 17, 60])
        j = r.randrange(1, n + 1)
        b += bytes(n) if r.randrange(2) else bytes(r.randrange(256) for _ in range(n))
        b[l4 + 4:l4 + 6] = (cur + j).to_bytes(2, "big")
        return bytes(b)
    if reason == "not_roce_port":
        b[l4 + 2:l4 + 4] = r.choice([4790, 4792, 53, 0, 0xffff, 4791 << 1]).to_bytes(2, "big")
        return bytes(b)
    if reason == "truncated_bth":
        return f.build(l4_payload=f.bth_rest()[:r.randrange(0, 12)])
    if reason == "bad_tver":
        return f.copy(tver=r.randrange(1, 16)).build()
    if reason == "bad_opcode":
        # Any invalid opcode, or one next to FLUSH and ATOMIC WRITE: their
        # UC and XRC forms do not exist, nor do 0x1e and 0x1f.
        near = [o for o in (0x1e, 0x1f, UC | FLUSH, UC | ATOMIC_WRITE, XRC | FLUSH, XRC | ATOMIC_WRITE)
                if o in INVALID_OPCODES]
        return f.copy(opcode=r.choice(r.choice([INVALID_OPCODES, near]))).build()
    if reason == "truncated_ext":
        op = r.choice([WRITE_FIRST, READ_REQ, CMP_SWAP, ACK, UD_SEND_ONLY, XRC | SEND_ONLY, ATOMIC_ACK,
                       FLUSH, ATOMIC_WRITE])
        hl = sum(EXT_LEN[n] for n in OPS[op].exts)
        bth = f.copy(opcode=op, exts=[], payload=b"", pad=0).bth_rest()
        return f.build(l4_payload=bth + bytes(r.randrange(0, hl)))
    if reason == "truncated_icrc":
        op = r.choice([SEND_ONLY, ACK, WRITE_ONLY, CNP, FLUSH, ATOMIC_WRITE])
        # The CNP's 16 bytes are its body, not a header: it has none (and
        # the ATOMIC WRITE's 8 bytes are its body, after the RETH).
        hl = 0 if op == CNP else sum(EXT_LEN[n] for n in OPS[op].exts)
        bth = f.copy(opcode=op, exts=[], payload=b"", pad=0).bth_rest()
        return f.build(l4_payload=bth + bytes(hl) + bytes(r.randrange(0, 4)))
    if reason == "bad_payload":
        op = r.choice([ACK, READ_REQ, CMP_SWAP, CNP, ATOMIC_ACK, FLUSH, ATOMIC_WRITE])
        hl = 0 if op == CNP else sum(EXT_LEN[n] for n in OPS[op].exts)
        if op in BODY_LEN:      # a body of the wrong size (CNP 16, ATOMIC WRITE 8)
            n = r.choice([x for x in (0, 1, 4, 7, 9, 15, 17, 20) if x != BODY_LEN[op]])
            return f.build(l4_payload=f.copy(opcode=op, exts=[], payload=b"", pad=0).bth_rest()
                           + bytes(hl) + bytes(n) + bytes(4))
        bth = f.copy(opcode=op, exts=[], payload=b"", pad=0).bth_rest()
        return f.build(l4_payload=bth + bytes(hl) + bytes(r.randrange(1, 9)) + bytes(4))
    if reason == "bad_pad":
        way = r.randrange(5)
        if way == 3:            # ATOMIC WRITE: its 8 bytes are never padded
            bth = f.copy(opcode=ATOMIC_WRITE, exts=[], payload=b"", pad=r.randrange(1, 4)).bth_rest()
            return f.build(l4_payload=bth + bytes(16) + bytes(8) + bytes(4))
        if way == 4:            # FLUSH: a pad count and no payload
            bth = f.copy(opcode=FLUSH, exts=[], payload=b"", pad=r.randrange(1, 4)).bth_rest()
            return f.build(l4_payload=bth + bytes(20) + bytes(4))
        if way == 0:
            pad = r.randrange(1, 4)
            bth = f.copy(opcode=SEND_ONLY, exts=[], payload=b"", pad=pad).bth_rest()
            return f.build(l4_payload=bth + bytes(r.randrange(0, pad)) + bytes(4))
        if way == 1:
            bth = f.copy(opcode=ACK, exts=[], payload=b"", pad=r.randrange(1, 4)).bth_rest()
            return f.build(l4_payload=bth + bytes(4) + bytes(4))
        bth = f.copy(opcode=CNP, exts=[], payload=b"", pad=r.randrange(1, 4)).bth_rest()
        return f.build(l4_payload=bth + bytes(16) + bytes(4))
    raise ValueError(reason)


IP_LAYER = ("bad_ip_length", "not_udp", "truncated_udp", "bad_udp_length")


def check_extent(data, reason):
    """
    The generator's own check of the padding rule (wire.ip_extent()): a
    frame broken at the IP or UDP layer is broken the way @reason says, and
    every frame broken further in has IP and UDP lengths that agree with it
    and no padding.
    """
    if reason in IP_LAYER:
        got = ip_extent(data)[0]
    elif PARSE_REASONS.index(reason) > PARSE_REASONS.index("bad_udp_length"):
        got = ip_extent(data)
        reason = (None, 0)
    else:
        return
    assert got == reason, "generator: %s frame, the IP and UDP lengths say %s: %s" % (
        reason, got, data.hex())


def c_malformed(g, side):
    t = g.rng.choice(TENANTS)
    if side == "tenant":
        lq, rq = g.rng.choice(g.local_conns(t))
        port, f = g.out(lq, rq, SEND_ONLY, n=32, pad=0)
    else:
        lq, rq = g.rng.choice(g.remote_conns(t))
        port, f = g.inc(lq, rq, SEND_ONLY, n=32, pad=0)
    reason = g.rng.choice(PARSE_REASONS)
    data = malformed_bytes(g, f, reason)
    if data is None:
        return
    check_extent(data, reason)
    g.emit(port, None, "malformed (%s side)" % side, data=data, reason=reason, note=reason)


# (weight, function): the mix of one host's traffic.
CLASSES = [
    (10, c_legit_out), (4, c_legit_message), (4, c_legit_ud), (6, c_legit_fabric),
    (3, c_legit_fabric_ud), (4, c_padded),
    (6, c_spoof_vip), (6, c_spoof_mac), (6, c_spoof_ud), (6, c_other_pqpn), (3, c_foreign_vip),
    (3, c_unmapped_vqpn), (2, c_gsi), (5, c_type_mismatch), (3, c_rc_to_ud),
    (10, lambda g: c_mem_edges(g, "out")), (10, lambda g: c_mem_edges(g, "in")),
    (2, c_mem_unknown_owner), (6, c_seq_nonsense), (3, c_seq_cross_tenant), (5, c_remote_oob),
    (5, c_vlan), (5, c_mixed_ip), (3, c_cross_uplink), (5, c_fab_unmapped), (4, c_fab_not_ours),
    (5, c_fab_wrong_src), (5, c_fab_ud_spoof), (3, c_bad_icrc), (1, c_max_len), (1, c_cnp_bad),
    (3, c_controlled_qkey), (4, c_invalidate),
    (8, lambda g: c_malformed(g, "tenant")), (5, lambda g: c_malformed(g, "fabric")),
]


def generate(h, cluster, seed, hostile_min):
    """One host's input: a Gen with at least @hostile_min hostile frames."""
    rng = random.Random(seed * 1000 + h)
    g = Gen(h, cluster, rng, 0x100000 * h)
    weights = [w for w, _ in CLASSES]
    fns = [fn for _, fn in CLASSES]
    # Every parse error at least once from each side, first.
    for reason in PARSE_REASONS:
        for side in ("tenant", "fabric"):
            data = None
            while data is None:
                t = rng.choice(TENANTS)
                if side == "tenant":
                    lq, rq = rng.choice(g.local_conns(t))
                    port, f = g.out(lq, rq, SEND_ONLY, n=32, pad=0)
                else:
                    lq, rq = rng.choice(g.remote_conns(t))
                    port, f = g.inc(lq, rq, SEND_ONLY, n=32, pad=0)
                data = malformed_bytes(g, f, reason)
            check_extent(data, reason)
            g.emit(port, None, "malformed (%s side)" % side, data=data, reason=reason, note=reason)
    while g.hostile < hostile_min:
        rng.choices(fns, weights)[0](g)
    return g.finish()


def relay(src, h, cluster):
    """
    Host @h's input when its uplinks receive what @src's host sent to its
    uplinks, NAKs included, in the order @src's switch sends them
    (src.out_seq): the NAKs depend on how a port's frames fall into rx
    bursts, the message state only on the order within a connection.
    """
    g = Gen(h, cluster, random.Random(0), 0)
    for port in src.model.port_order:
        if src.model.ports[port]["role"] != "uplink":
            continue
        for rec in src.out_seq[port]:
            out = rec.outcome
            g.emit(out.port, out.frame, "from H%d: %s" % (src.h, rec.cls), hostile=rec.hostile, note=rec.note)
            g.records[-1].tenant = rec.tenant
            assert g.records[-1].data == out.data
    return g.finish()


def write_inputs(g, outdir, prefix):
    """One pcap per port; returns {port: path}."""
    paths = {}
    for p in g.model.port_order:
        path = os.path.join(outdir, "%s.%s.in.pcap" % (prefix, p))
        write_pcap(path, [rec.data for rec in g.records if rec.port == p])
        paths[p] = path
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--frames", type=int, default=10000, help="hostile frames per host")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    cl = cluster_config()
    c = Cluster(cl)
    for h in (1, 2):
        with open(os.path.join(a.outdir, "host%d.json" % h), "w") as f:
            json.dump(host_config(h, cl), f, indent=1)
        g = generate(h, c, a.seed, a.frames)
        write_inputs(g, a.outdir, "h%d" % h)
        print("H%d: %d frames, %d hostile" % (h, len(g.records), g.hostile))
        for k, v in sorted(g.by_class.items(), key=lambda kv: -kv[1]):
            print("  %6d  %s" % (v, k))
        print("  predicted:", json.dumps(g.model.summary()["drops"]))


if __name__ == "__main__":
    main()
