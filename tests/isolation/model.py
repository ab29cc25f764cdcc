# SPDX-License-Identifier: BSD-3-Clause
"""
The isolation suite's model of one host of the switch, written from
DESIGN.md ("Packet paths", "Addresses on the wire", the configuration
schema) over a configuration, with no reference to the C code.

HostModel.process(port, frame) says what must happen to a well-formed frame
that enters @port: dropped for a named reason, or forwarded out of a port as
a given frame.  It keeps the per-connection message state that DESIGN.md
asks for (message-level decisions at the First or Only packet of a request,
kept for its Middles and Last; a Middle or Last with no open message
forwards under the connection's rename, for go-back-N) and the counters the
switch's exit summary shows, so that a test can compare them exactly.

Choices the design leaves open, written down here once:
  - DROP_ORDER: when a frame is wrong in several ways, the first reason in
    the order the packet-path text lists its checks wins: the parse, then
    GSI (DestQP 1), the lookup (wrong_tenant when the destination vIP is not
    the tenant's at all, no_connection when it is but no QP matches; on the
    fabric not_our_host before the lookup), anti-spoofing, the transport
    type, then the memory check (unknown rkey, bounds, access).
  - VLAN_POLICY: 802.1Q/QinQ tags pass through in both directions (the
    pipeline suite's "vlan" scenario makes that the switch's behaviour).
    Issue 7 lists tags on tenant ports as hostile; see the README.
  - An IP address is an address of one version: an IPv6 address never
    matches an IPv4 vIP or host, whatever its bytes.

Ethernet padding (docs/wire.md): a frame ends where its IP length says and
the bytes after it (Frame.l2_pad) are padding.  It changes no decision; a
forwarded frame keeps it (the mbuf still holds it).  Port counters count
what the wire carries, padding included; tenant byte counters count the
frame without its padding (the parser's frame_len).

C9-88: a zero-length RDMA WRITE or READ request (RETH DMA length 0) names
no memory: it is neither checked nor translated, even under mr_check
enforce.  A SEND Last or Only with Invalidate carries an R_Key (IETH): at
the memory's owner (from the fabric: the local destination; on a hairpin:
the local destination) it is looked up among the owner's windows by the
advertised rkey and becomes its target_rkey (counted in mr_translated); an
unknown key is mr_unknown under enforce, else it passes untranslated.  No
bounds or access apply to it.

UD: a tenant's datagram whose DETH Q_Key has bit 31 set (a controlled
Q_Key) is privileged_qkey, after the sender and destination checks, unless
its tenant has "privileged_qkey": true.

NAKs of refused requests: an RC request on an RC connection dropped as
mr_unknown, mr_out_of_bounds, mr_access_denied or acl_denied is answered
with one NAK (nak_frame()); when, is the generator's to say (Gen.finish(),
gen_isolation.py), since it depends on the order the switch meets frames
in across ports.

FLUSH and ATOMIC WRITE (IBTA 1.5) parse (wire.OPS has their rows); the
switch checks FLUSH for the access "flush" and ATOMIC WRITE for
remote_write, but the suite only sends them malformed and the model refuses
to predict whole ones.
"""

import ipaddress

from wire import OPS, FLUSH, ATOMIC_WRITE, Frame, ip_ver

VLAN_POLICY = "forward"

SWITCH_DROPS = ["no_connection", "wrong_tenant", "spoofed_source", "not_our_host", "gsi",
                "type_mismatch", "mr_unknown", "mr_out_of_bounds", "mr_access_denied",
                "message_denied", "nonlinear", "tx_failed", "privileged_qkey",
                "xdp_denied", "xrc_srq_unknown"]
PARSE_DROPS = ["truncated_eth", "truncated_vlan", "too_many_vlans", "not_ip", "truncated_ip",
               "bad_ip_version", "bad_ip_ihl", "ip_fragment", "bad_ip_length", "not_udp",
               "truncated_udp", "bad_udp_length", "not_roce_port", "truncated_bth", "bad_tver",
               "bad_opcode", "truncated_ext", "bad_payload", "bad_pad", "truncated_icrc"]
ALL_DROPS = PARSE_DROPS + SWITCH_DROPS

ACCESS = {"remote_read": 1, "remote_write": 2, "remote_atomic": 4, "flush": 8}

# C9-88: RDMA WRITE First/Only/Only with Immediate and READ request, by their low five bits.
ZERO_LEN_EXEMPT = {0x06, 0x0a, 0x0b, 0x0c}
# Drops of an RC request answered with a NAK (AETH syndrome 0x62, remote access error).
NAK_REASONS = {"mr_unknown", "mr_out_of_bounds", "mr_access_denied", "acl_denied"}
NAK_SYNDROME = 0x62
# Responses with an AETH, whose MSN a NAK repeats.
AETH_RESPONSES = {0x0d, 0x0f, 0x10, 0x11, 0x12}


def norm(ip):
    return str(ipaddress.ip_address(ip))


def num(v):
    return int(v, 0) if isinstance(v, str) else int(v)


class Drop:
    __slots__ = ("reason", "tenant")

    def __init__(self, reason, tenant=None):
        self.reason, self.tenant = reason, tenant

    def __repr__(self):
        return "drop:" + self.reason


class Fwd:
    """Forwarded: out of @port as @frame; kind egress, ingress or hairpin."""
    __slots__ = ("port", "frame", "kind", "tenant", "translated", "cnp", "data")

    def __init__(self, port, frame, kind, tenant, translated, cnp):
        self.data = None    # the bytes of @frame, once built
        self.port, self.frame, self.kind = port, frame, kind
        self.tenant, self.translated, self.cnp = tenant, translated, cnp

    def __repr__(self):
        return "fwd:%s(%s)" % (self.port, self.kind)


class Cluster:
    """The cluster-wide part of a configuration, indexed for the model."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.tenants = {t["name"]: t for t in cfg["tenants"]}
        self.eps = {}
        for e in cfg["endpoints"]:
            self.eps[(e["tenant"], norm(e["vip"]))] = dict(e, vip=norm(e["vip"]), host=norm(e["host"]))
        self.qps = {}
        for q in cfg["qps"]:
            q = dict(q, vip=norm(q["vip"]), vqpn=num(q["vqpn"]), pqpn=num(q["pqpn"]))
            q["host"] = self.eps[(q["tenant"], q["vip"])]["host"]
            if "peer" in q:
                q["peer"] = (norm(q["peer"]["vip"]), num(q["peer"]["vqpn"]))
            self.qps[(q["tenant"], q["vip"], q["vqpn"])] = q
        self.by_fabric = {(q["host"], q["pqpn"]): q for q in self.qps.values()}
        self.mrs = {}
        for m in cfg.get("mrs", []):
            acc = 0
            for a in m["access"]:
                acc |= ACCESS[a]
            self.mrs[(m["tenant"], norm(m["vip"]), num(m["rkey"]))] = dict(
                addr=num(m["addr"]), length=num(m["length"]), target_rkey=num(m["target_rkey"]),
                target_addr=num(m["target_addr"]), access=acc)
        self.neigh = {norm(n["ip"]): n["mac"] for n in cfg.get("neighbors", [])}

    def peer(self, q):
        return self.qps[(q["tenant"],) + q["peer"]]


class HostModel:
    """One switch process: a host's ports over the cluster, with its state."""

    def __init__(self, cluster, ports, mbuf_size=9216):
        self.c = cluster
        self.mbuf_size = mbuf_size
        self.ports = {p["name"]: dict(p) for p in ports}
        self.port_order = [p["name"] for p in ports]
        self.uplinks = [p for p in ports if p["role"] == "uplink"]
        self.host_ips = {norm(p["ip"]): p for p in self.uplinks}
        # Lookups, as DESIGN.md describes them.
        self.tenant_side = {}   # (tenant, vip, vqpn) -> ("conn", L, R) | ("ud", q)
        self.fabric_side = {}   # (host ip, pqpn) -> ("conn", L, R) | ("ud", q)
        for q in self.c.qps.values():
            if q["type"] == "ud":
                self.tenant_side[(q["tenant"], q["vip"], q["vqpn"])] = ("ud", q)
                self.fabric_side[(q["host"], q["pqpn"])] = ("ud", q)
            elif self.local(q):
                r = self.c.peer(q)
                self.tenant_side[(r["tenant"], r["vip"], r["vqpn"])] = ("conn", q, r)
                self.fabric_side[(q["host"], q["pqpn"])] = ("conn", q, r)
        # Dynamic state: per connection (by L) and direction, the open message.
        self.msg = {}
        self.state_port = {}
        # Counters as the exit summary shows them.
        self.drops = {r: 0 for r in ALL_DROPS}
        self.fwd = {"egress": 0, "ingress": 0, "hairpin": 0}
        self.cnp = 0
        self.translated = 0
        self.naks = 0
        self.port_ctr = {p: {"rx_packets": 0, "rx_bytes": 0, "tx_packets": 0, "tx_bytes": 0}
                         for p in self.port_order}
        self.tenant_ctr = {t: {"egress_packets": 0, "egress_bytes": 0, "ingress_packets": 0,
                               "ingress_bytes": 0, "dropped": 0} for t in self.c.tenants}

    # -- helpers
    def local(self, q_or_ep):
        return q_or_ep["host"] in self.host_ips

    def ep(self, tenant, vip):
        return self.c.eps.get((tenant, norm(vip)))

    def uplink_for(self, host):
        for p in self.uplinks:
            if ip_ver(p["ip"]) == ip_ver(host):
                return p
        raise KeyError(host)

    def address(self, ep):
        """(eth dst, eth src, out port) of a frame to endpoint @ep (DESIGN "Addresses on the wire")."""
        if self.local(ep):
            return ep["mac"], self.ports[ep["port"]]["mac"], ep["port"]
        up = self.uplink_for(ep["host"])
        return self.c.neigh.get(ep["host"], up.get("gateway_mac")), up["mac"], up["name"]

    def my_host(self, ver):
        return norm(self.uplink_for("0.0.0.0" if ver == 4 else "::")["ip"])

    def mr_check(self, tenant, owner_vip, f):
        """None if no RETH/AtomicETH, else (reason or None, translated frame fields)."""
        op = f.op
        for name in ("RETH", "AtomicETH"):
            h = f.ext(name)
            if h is None:
                continue
            length = h["dmalen"] if name == "RETH" else 8
            if name == "RETH" and length == 0 and (op.code & 0x1f) in ZERO_LEN_EXEMPT:
                return None, False      # C9-88: names no memory
            need = ACCESS["remote_atomic"] if name == "AtomicETH" else (
                ACCESS["remote_read"] if op.read else ACCESS["remote_write"])
            mr = self.c.mrs.get((tenant, norm(owner_vip), h["rkey"]))
            if mr is None or not self.local(self.ep(tenant, owner_vip)):
                why = "mr_unknown"
            elif not (mr["addr"] <= h["va"] and h["va"] + length <= mr["addr"] + mr["length"]):
                why = "mr_out_of_bounds"
            elif (mr["access"] & need) != need:
                why = "mr_access_denied"
            else:
                h["va"] = mr["target_addr"] + (h["va"] - mr["addr"])
                h["rkey"] = mr["target_rkey"]
                return None, True
            if self.c.tenants[tenant].get("mr_check", "off") == "enforce":
                return why, False
            return None, False
        return None, False

    def inv_check(self, tenant, owner_vip, f):
        """
        The IETH of a SEND with Invalidate at the memory's owner: (reason or
        None, translated).  The R_Key is one of the owner's advertised keys,
        or unknown; no bounds or access apply.
        """
        h = f.ext("IETH")
        if h is None:
            return None, False
        mr = self.c.mrs.get((tenant, norm(owner_vip), h["rkey"]))
        if mr is None or not self.local(self.ep(tenant, owner_vip)):
            if self.c.tenants[tenant].get("mr_check", "off") == "enforce":
                return "mr_unknown", False
            return None, False
        h["rkey"] = mr["target_rkey"]
        return None, True

    def message(self, key, port, f, decide, inv=None):
        """
        The request state machine of one direction of one connection: returns
        (drop reason or None, translated).  @decide makes the message-level
        decision of a First or Only.
        """
        op = f.op
        if not op.request:
            return None, False
        # The suite must feed one direction of a connection through one port,
        # or the order the switch sees would not be the order modelled here.
        assert self.state_port.setdefault(key, port) == port, \
            "generator: %s fed from %s and %s" % (key, self.state_port[key], port)
        st = self.msg.setdefault(key, {"open": False, "denied": False})
        if op.opens:
            why, done = decide()
            st["open"] = op.position == "first"
            st["denied"] = why is not None
        else:
            why = "message_denied" if st["open"] and st["denied"] else None
            done = False
            if op.position == "last":
                st["open"] = st["denied"] = False
        # The IETH rides on a Last or Only; checked at the owner when nothing refused the frame.
        if why is None and inv is not None and f.ext("IETH") is not None:
            why, done = inv()
        return why, done

    # -- the two packet paths
    def egress(self, port, f):
        t = self.ports[port]["tenant"]
        if f.dqpn == 1:
            return Drop("gsi", t)
        hit = self.tenant_side.get((t, norm(f.dst), f.dqpn)) if ip_ver(f.dst) == ip_ver(f.src) else None
        if hit is None:
            return Drop("no_connection" if self.ep(t, f.dst) else "wrong_tenant", t)
        if hit[0] == "ud":
            r = hit[1]
            d = f.ext("DETH")
            if d is None:
                return Drop("type_mismatch", t)
            lh = self.tenant_side.get((t, norm(f.src), d["srcqp"]))
            if lh is None or lh[0] != "ud":
                return Drop("spoofed_source", t)
            lq = lh[1]
            le, re_ = self.ep(t, lq["vip"]), self.ep(t, r["vip"])
            if not self.local(lq) or le["port"] != port or le["mac"] != f.eth_src:
                return Drop("spoofed_source", t)
            if (d["qkey"] & 0x80000000) and not self.c.tenants[t].get("privileged_qkey", False):
                return Drop("privileged_qkey", t)
            o = f.copy(exts=[(n, dict(a)) for n, a in f.exts])
            o.eth_dst, o.eth_src, out = self.address(re_)
            if self.local(r):
                kind = "hairpin"
            else:
                kind = "egress"
                o.src, o.dst, o.dqpn = lq["host"], r["host"], r["pqpn"]
                o.ext("DETH")["srcqp"] = lq["pqpn"]
            return Fwd(out, o, kind, t, False, False)
        _, lq, rq = hit
        le, re_ = self.ep(t, lq["vip"]), self.ep(t, rq["vip"])
        if le["port"] != port or norm(f.src) != lq["vip"] or f.eth_src != le["mac"]:
            return Drop("spoofed_source", t)
        if f.op.transport not in (lq["type"], "cnp"):
            return Drop("type_mismatch", t)
        hairpin = self.local(rq)
        o = f.copy(exts=[(n, dict(a)) for n, a in f.exts])
        why, done = self.message(("egress", lq["tenant"], lq["vip"], lq["vqpn"]), port, o,
                                 lambda: self.mr_check(t, rq["vip"], o) if hairpin else (None, False),
                                 (lambda: self.inv_check(t, rq["vip"], o)) if hairpin else None)
        if why:
            return Drop(why, t)
        o.eth_dst, o.eth_src, out = self.address(re_)
        if not hairpin:
            o.src, o.dst, o.dqpn = lq["host"], rq["host"], rq["pqpn"]
        return Fwd(out, o, "hairpin" if hairpin else "egress", t, done, f.opcode == 0x81)

    def ingress(self, port, f):
        dst = norm(f.dst)
        if dst not in self.host_ips:
            return Drop("not_our_host")
        if f.dqpn == 1:
            return Drop("gsi")
        hit = self.fabric_side.get((dst, f.dqpn))
        if hit is None:
            return Drop("no_connection")
        if hit[0] == "ud":
            lq = hit[1]
            t = lq["tenant"]
            d = f.ext("DETH")
            if d is None:
                return Drop("type_mismatch", t)
            sh = self.c.by_fabric.get((norm(f.src), d["srcqp"]))
            if sh is None or sh["type"] != "ud" or sh["tenant"] != t or self.local(sh):
                return Drop("spoofed_source", t)
            le = self.ep(t, lq["vip"])
            o = f.copy(exts=[(n, dict(a)) for n, a in f.exts])
            o.eth_dst, o.eth_src, out = self.address(le)
            o.src, o.dst, o.dqpn = sh["vip"], lq["vip"], lq["vqpn"]
            o.ext("DETH")["srcqp"] = sh["vqpn"]
            return Fwd(out, o, "ingress", t, False, False)
        _, lq, rq = hit
        t = lq["tenant"]
        if self.local(rq) or norm(f.src) != rq["host"]:
            return Drop("spoofed_source", t)
        if f.op.transport not in (lq["type"], "cnp"):
            return Drop("type_mismatch", t)
        o = f.copy(exts=[(n, dict(a)) for n, a in f.exts])
        why, done = self.message(("ingress", lq["tenant"], lq["vip"], lq["vqpn"]), port, o,
                                 lambda: self.mr_check(t, lq["vip"], o),
                                 lambda: self.inv_check(t, lq["vip"], o))
        if why:
            return Drop(why, t)
        le = self.ep(t, lq["vip"])
        o.eth_dst, o.eth_src, out = self.address(le)
        o.src, o.dst, o.dqpn = rq["vip"], lq["vip"], lq["vqpn"]
        return Fwd(out, o, "ingress", t, done, f.opcode == 0x81)

    # -- NAKs of refused requests
    def conn_of(self, port, f):
        """
        (sender QP, receiver QP) of an RC frame @f that entered @port on an
        RC connection, as the frame travels; None otherwise.  One direction
        of a connection is one (sender, receiver).
        """
        if f.op is None or f.op.transport != "rc":
            return None
        if self.ports[port]["role"] == "uplink":
            hit = self.fabric_side.get((norm(f.dst), f.dqpn))
            if hit is None or hit[0] != "conn":
                return None
            snd, rcv = hit[2], hit[1]
        else:
            t = self.ports[port]["tenant"]
            hit = self.tenant_side.get((t, norm(f.dst), f.dqpn)) if ip_ver(f.dst) == ip_ver(f.src) else None
            if hit is None or hit[0] != "conn":
                return None
            snd, rcv = hit[1], hit[2]
        if snd["type"] != "rc" or rcv["type"] != "rc":
            return None
        return snd, rcv

    def nak_frame(self, port, f, snd, rcv, msn):
        """
        (frame, out port) of the NAK that answers the refused request @f
        (from @snd to @rcv) as if @rcv had answered, in the requester's view:
        a fabric request's out of the uplink it came by, with the template
        of the local end's frames toward the remote host; a tenant's request's
        out of its own port, from @rcv's vIP to @snd's.  The request's tags
        (by TCI; the outer TPID 0x88a8 when there are two), DSCP and P_Key;
        ECN 0, TTL 64, IPv4 id 0 with DF, UDP source port 0xC000 | (DestQP &
        0x3FFF), UDP checksum 0, AETH syndrome 0x62 with @msn, the request's
        PSN.
        """
        if self.ports[port]["role"] == "uplink":
            eth_dst, eth_src, out = self.address(self.ep(snd["tenant"], snd["vip"]))
            src, dst, dqpn = rcv["host"], snd["host"], snd["pqpn"]
        else:
            eth_dst, eth_src, out = self.address(self.ep(snd["tenant"], snd["vip"]))
            src, dst, dqpn = rcv["vip"], snd["vip"], snd["vqpn"]
        vl = [(0x8100, vid, prio) for _, vid, prio in f.vlans]
        if len(vl) == 2:
            vl[0] = (0x88a8,) + vl[0][1:]
        n = Frame(eth_dst=eth_dst, eth_src=eth_src, vlans=vl, src=src, dst=dst, tos=f.tos & 0xfc, ttl=64,
                  ip_id=0, ip_flags=2, fl=0, sport=0xc000 | (dqpn & 0x3fff), opcode=0x11, pkey=f.pkey,
                  dqpn=dqpn, psn=f.psn, exts=[("AETH", {"syndrome": NAK_SYNDROME, "msn": msn & 0xffffff})])
        return n, out

    def count_nak(self, out, length):
        """A NAK the switch sent out of @out: a tx frame, not a forwarded one."""
        self.naks += 1
        self.port_ctr[out]["tx_packets"] += 1
        self.port_ctr[out]["tx_bytes"] += length

    def process(self, port, f, length):
        """
        Outcome of well-formed frame @f (built, @length bytes with its
        padding) entering @port; counts it.
        """
        assert f.opcode not in (FLUSH, ATOMIC_WRITE), "model: FLUSH and ATOMIC WRITE are not modelled"
        if length > self.mbuf_size:
            # Larger than one mbuf: it arrives as a chain, which the switch does not rename.
            r = Drop("nonlinear", self.ports[port].get("tenant"))
        elif self.ports[port]["role"] == "uplink":
            r = self.ingress(port, f)
        else:
            r = self.egress(port, f)
        self.count(port, length, r, len(f.l2_pad))
        return r

    def count(self, port, length, r, l2_pad=0):
        """Counts a frame of @length bytes, the last @l2_pad of them Ethernet padding."""
        pc = self.port_ctr[port]
        pc["rx_packets"] += 1
        pc["rx_bytes"] += length
        if isinstance(r, Drop):
            self.drops[r.reason] += 1
            t = self.ports[port].get("tenant") or r.tenant
            if t:
                self.tenant_ctr[t]["dropped"] += 1
            return
        self.fwd[r.kind] += 1
        self.cnp += r.cnp
        self.translated += r.translated
        oc = self.port_ctr[r.port]
        oc["tx_packets"] += 1
        oc["tx_bytes"] += length
        tc = self.tenant_ctr[r.tenant]
        if r.kind in ("egress", "hairpin"):
            tc["egress_packets"] += 1
            tc["egress_bytes"] += length - l2_pad
        if r.kind in ("ingress", "hairpin"):
            tc["ingress_packets"] += 1
            tc["ingress_bytes"] += length - l2_pad

    def summary(self):
        rx = sum(p["rx_packets"] for p in self.port_ctr.values())
        tx = sum(p["tx_packets"] for p in self.port_ctr.values())
        return {"rx_packets": rx, "tx_packets": tx, "dropped": sum(self.drops.values()),
                "forwarded": dict(self.fwd), "cnp_forwarded": self.cnp,
                "mr_translated": self.translated, "naks_refused": self.naks, "drops": dict(self.drops),
                "ports": {p: dict(v) for p, v in self.port_ctr.items()},
                "tenants": {t: dict(v) for t, v in self.tenant_ctr.items()}}
