#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Oracle test of the CM decode (rocev2/roce_cm.c, through tools/roce-inspect):
RDMA-CM's management datagrams, built here from the IBTA tables, decoded by
roce-inspect and by tshark's InfiniBand dissector, which we did not write.

    /usr/bin/python3 tests/oracle/test_cm.py BUILD_DIR [--keep]

The frames are an RDMA-CM exchange laid out as IBTA 1.5 chapter 12 says,
between 192.168.1.10 (QP 17) and 192.168.1.20 (QP 33), each MAD a UD SEND
Only to the GSI QP (DestQP 1, DETH Q_Key 0x80010000, source QP 1):
REQ (the rdma_cm TCP port space's Service ID for port 18515, with its IP CM
private data), MRA, REP, RTU, DREQ, DREP; a second REQ answered by REJ
(reason 28, consumer reject); and two MADs of other classes on QP1 (subnet
administration 0x03, performance management 0x04).  Field offsets here are
written from IBTA Vol 1 tables 106 to 113 (each field's byte offset in the
message plus the 24-byte MAD header of table 137), not from the C code.

Checks: tshark decodes every frame as a MAD of the class built and, for the
CM ones, the Local and Remote Communication IDs, the Service ID, Local QPN,
Starting PSN, Transport Service Type and REJ reason as built; roce-inspect
gives the same values, the MAD class and attribute of every frame, and no
"cm" object for the other classes; every ICRC is valid (scapy).
Prints each mismatch, then "N passed, M failed"; exits 1 on any failure.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))

from roce_checks import Checks  # noqa: E402
from roce_layers import BTH, DETH, icrc_found, icrc_scapy  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402

VIP_A, VIP_B = "192.168.1.10", "192.168.1.20"
MAC_A, MAC_B = "02:00:00:00:aa:10", "02:00:00:00:aa:20"
QPN_A, QPN_B = 17, 33
GSI_QKEY = 0x80010000
CM_CLASS = 0x07
ATTR = {"REQ": 0x10, "MRA": 0x11, "REJ": 0x12, "REP": 0x13, "RTU": 0x14, "DREQ": 0x15, "DREP": 0x16}
# rdma_cm's Service ID for the TCP port space (RDMA_PS_TCP 0x0106) and a port.
PORT = 18515
SERVICE_ID = 0x0000000001060000 | PORT


check = Checks()


def eq(got, want, where):
    return check(got == want, where, "got %r, expected %r" % (got, want))


def mad(mgmt_class, attr_id, tid, data, method=0x03):
    """A 256-byte MAD: the common header (table 137), then @data padded to 232 bytes."""
    hdr = struct.pack(">BBBBHHQHHI", 1, mgmt_class, 2, method, 0, 0, tid, attr_id, 0, 0)
    assert len(data) <= 232
    return hdr + data + bytes(232 - len(data))


def put(buf, off, fmt, *v):
    struct.pack_into(">" + fmt, buf, off, *v)


def gid4(ip):
    """An IPv4-mapped GID, as RoCEv2 carries an IPv4 address."""
    return bytes(10) + b"\xff\xff" + bytes(int(x) for x in ip.split("."))


def req(comm_id, qpn, psn, src_ip, dst_ip, transport=0):
    """REQ, table 106."""
    d = bytearray(140 + 92)
    put(d, 0, "I", comm_id)
    put(d, 8, "Q", SERVICE_ID)
    put(d, 16, "Q", 0x0002c90300000001)          # Local CA GUID
    put(d, 28, "I", 0)                           # Local Q_Key (RC: unused)
    put(d, 32, "I", qpn << 8 | 4)                # Local QPN, Responder Resources
    put(d, 36, "I", 0 << 8 | 4)                  # Local EECN, Initiator Depth
    put(d, 40, "I", 0 << 8 | 20 << 3 | transport << 1)  # Remote EECN, timeout, transport, E2E
    put(d, 44, "I", psn << 8 | 20 << 3 | 7)      # Starting PSN, timeout, retry count
    put(d, 48, "H", 0xffff)                      # P_Key
    d[50] = 3 << 4 | 7                           # Path MTU 1024, RNR retry 7
    d[51] = 15 << 4                              # Max CM retries
    put(d, 52, "HH", 0xffff, 0xffff)             # LIDs (RoCE: permissive)
    d[56:72] = gid4(src_ip)
    d[72:88] = gid4(dst_ip)
    # Private data: rdma_cm's IP CM header (version 0, IPv4, source port, addresses).
    d[140] = 0x00
    d[141] = 4 << 4
    put(d, 142, "H", 49152)
    d[140 + 4 + 12:140 + 4 + 16] = bytes(int(x) for x in src_ip.split("."))
    d[140 + 20 + 12:140 + 20 + 16] = bytes(int(x) for x in dst_ip.split("."))
    return bytes(d)


def rep(comm_id, remote, qpn, psn):
    """REP, table 110."""
    d = bytearray(36 + 196)
    put(d, 0, "II", comm_id, remote)
    put(d, 12, "I", qpn << 8)
    put(d, 20, "I", psn << 8)
    d[24], d[25] = 4, 4
    put(d, 28, "Q", 0x0002c90300000002)
    return bytes(d)


def two_ids(comm_id, remote, size):
    """MRA, RTU, DREP: Local and Remote Communication IDs first (tables 107, 111, 113)."""
    d = bytearray(size)
    put(d, 0, "II", comm_id, remote)
    return d


def dreq(comm_id, remote, remote_qpn):
    """DREQ, table 112: the QPN of the side that receives it."""
    d = two_ids(comm_id, remote, 232)
    put(d, 8, "I", remote_qpn << 8)
    return bytes(d)


def rej(comm_id, remote, reason, msg_rejected=0):
    """REJ, table 108."""
    d = two_ids(comm_id, remote, 232)
    d[8] = msg_rejected << 6
    put(d, 10, "H", reason)
    return bytes(d)


def frame(src, dst, smac, dmac, psn, payload):
    """A UD SEND Only to the GSI QP, with scapy's ICRC."""
    return bytes(Ether(src=smac, dst=dmac) / IP(src=src, dst=dst, flags="DF") /
                 UDP(sport=49152, dport=4791, chksum=0) /
                 BTH(opcode=0x64, dqpn=1, psn=psn, pkey=0xffff) / DETH(qkey=GSI_QKEY, srcqp=1) /
                 Raw(payload))


def delivered(d):
    """(DestQP, DETH Q_Key, DETH source QP, source IP, the MAD) of a UD frame over IPv4, as a switch
    delivered it: frame()'s inverse."""
    bth = 14 + 20 + 8
    return (struct.unpack_from("!I", d, bth + 4)[0] & 0xffffff, struct.unpack_from("!I", d, bth + 12)[0],
            struct.unpack_from("!I", d, bth + 16)[0] & 0xffffff, d[26:30], d[bth + 20:bth + 20 + 256])


def exchange():
    """(frames, expectations): each expectation the class, attribute and CM fields built."""
    a2b = (VIP_A, VIP_B, MAC_A, MAC_B)
    b2a = (VIP_B, VIP_A, MAC_B, MAC_A)
    ca, cb = 0x1001, 0x2002
    steps = [
        (a2b, CM_CLASS, "REQ", req(ca, QPN_A, 100, VIP_A, VIP_B),
         {"local_comm_id": ca, "service_id": SERVICE_ID, "local_qpn": QPN_A, "starting_psn": 100,
          "transport": 0}),
        (b2a, CM_CLASS, "MRA", bytes(two_ids(cb, ca, 232)), {"local_comm_id": cb, "remote_comm_id": ca}),
        (b2a, CM_CLASS, "REP", rep(cb, ca, QPN_B, 500),
         {"local_comm_id": cb, "remote_comm_id": ca, "local_qpn": QPN_B, "starting_psn": 500}),
        (a2b, CM_CLASS, "RTU", bytes(two_ids(ca, cb, 232)), {"local_comm_id": ca, "remote_comm_id": cb}),
        (a2b, CM_CLASS, "DREQ", dreq(ca, cb, QPN_B),
         {"local_comm_id": ca, "remote_comm_id": cb, "remote_qpn": QPN_B}),
        (b2a, CM_CLASS, "DREP", bytes(two_ids(cb, ca, 232)), {"local_comm_id": cb, "remote_comm_id": ca}),
        (a2b, CM_CLASS, "REQ", req(0x1003, 18, 7000, VIP_A, VIP_B, transport=1),
         {"local_comm_id": 0x1003, "service_id": SERVICE_ID, "local_qpn": 18, "starting_psn": 7000,
          "transport": 1}),
        (b2a, CM_CLASS, "REJ", rej(0x2004, 0x1003, 28),
         {"local_comm_id": 0x2004, "remote_comm_id": 0x1003, "rej_reason": 28, "rej_msg": 0}),
        (a2b, 0x03, None, bytes(40), {}),   # subnet administration
        (b2a, 0x04, None, bytes(40), {}),   # performance management
    ]
    frames, want = [], []
    for i, ((src, dst, smac, dmac), cls, msg, data, fields) in enumerate(steps):
        attr = ATTR[msg] if msg else 0x0012
        frames.append(frame(src, dst, smac, dmac, i, mad(cls, attr, 0xabc00 + i, data)))
        want.append({"class": cls, "msg": msg, "attr_id": attr, "tid": 0xabc00 + i, **fields})
    return frames, want


TSHARK = {
    "REQ": {"local_comm_id": "infiniband.cm.req", "service_id": "infiniband.cm.req.serviceid",
            "local_qpn": "infiniband.cm.req.localqpn", "starting_psn": "infiniband.cm.req.startpsn",
            "transport": "infiniband.cm.req.transpsvctype"},
    "REP": {"local_comm_id": "infiniband.cm.rep", "remote_comm_id": "infiniband.cm.rep.remotecommid",
            "local_qpn": "infiniband.cm.rep.localqpn", "starting_psn": "infiniband.cm.rep.startpsn"},
    "RTU": {"local_comm_id": "infiniband.cm.rtu.localcommid", "remote_comm_id": "infiniband.cm.rtu.remotecommid"},
    "DREQ": {"local_comm_id": "infiniband.cm.dreq.localcommid",
             "remote_comm_id": "infiniband.cm.dreq.remotecommid"},
    "REJ": {"local_comm_id": "infiniband.cm.rej.localcommid", "remote_comm_id": "infiniband.cm.rej.remotecommid",
            "rej_reason": "infiniband.cm.rej.reason", "rej_msg": "infiniband.cm.rej.msgrej"},
}
MAD_FIELDS = ["infiniband.mad.mgmtclass", "infiniband.mad.attributeid", "infiniband.mad.transactionid"]


def num(s):
    return int(s, 0) if s else None


def tshark_fields(path):
    fields = MAD_FIELDS + sorted({f for m in TSHARK.values() for f in m.values()})
    cmd = ["tshark", "-r", path, "-T", "fields", "-E", "occurrence=f"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True).stdout
    return [dict(zip(fields, line.split("\t"))) for line in out.splitlines()]


def main():
    if len(sys.argv) < 2:
        print("usage: %s BUILD_DIR [--keep]" % sys.argv[0], file=sys.stderr)
        return 2
    inspect = os.path.join(os.path.abspath(sys.argv[1]), "tools", "roce-inspect")
    if not os.access(inspect, os.X_OK):
        print("%s: not an executable" % inspect, file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="roce-cm-")
    path = os.path.join(work, "cm.pcap")
    frames, want = exchange()
    wrpcap(path, [Ether(f) for f in frames])
    for i, f in enumerate(frames):
        eq(icrc_found(f), icrc_scapy(f), "frame %d: ICRC (scapy)" % i)

    # tshark: our construction as a dissector we did not write reads it.
    rows = tshark_fields(path)
    eq(len(rows), len(frames), "tshark: frames")
    for i, (row, w) in enumerate(zip(rows, want)):
        where = "frame %d (%s), tshark" % (i, w["msg"] or "class 0x%02x" % w["class"])
        eq(num(row["infiniband.mad.mgmtclass"]), w["class"], where + " management class")
        eq(num(row["infiniband.mad.attributeid"]), w["attr_id"], where + " attribute ID")
        eq(num(row["infiniband.mad.transactionid"]), w["tid"], where + " transaction ID")
        for key, field in TSHARK.get(w["msg"], {}).items():
            eq(num(row.get(field)), w[key], "%s %s (%s)" % (where, key, field))

    # roce-inspect: the same values.
    r = subprocess.run([inspect, path], stdout=subprocess.PIPE, text=True)
    out = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    eq(len(out), len(frames), "roce-inspect: frames")
    for i, (g, w) in enumerate(zip(out, want)):
        where = "frame %d (%s), roce-inspect" % (i, w["msg"] or "class 0x%02x" % w["class"])
        check(g.get("ok") and g.get("icrc_ok"), where + ": parsed, ICRC valid")
        m = g.get("mad", {})
        eq(m.get("class"), w["class"], where + " mad.class")
        eq(m.get("attr_id"), w["attr_id"], where + " mad.attr_id")
        if w["class"] != CM_CLASS:
            check("cm" not in g, where + ": no cm object for another class")
            continue
        cm = g.get("cm", {})
        eq(cm.get("msg"), w["msg"], where + " cm.msg")
        eq(num(cm.get("tid")), w["tid"], where + " cm.tid")
        for key in ("local_comm_id", "remote_comm_id", "service_id", "local_qpn", "starting_psn",
                    "transport", "remote_qpn", "rej_reason", "rej_msg"):
            if key in w:
                got = cm.get(key)
                eq(num(got) if isinstance(got, str) else got, w[key], "%s cm.%s" % (where, key))
    return check.finish(work, "--keep" in sys.argv)


if __name__ == "__main__":
    sys.exit(main())
