#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Oracle test of tools/roce-inspect (tier c): check its decode against
decoders we did not write.

    /usr/bin/python3 tests/oracle/test_inspect.py build-gen/tools/roce-inspect

1. roce-inspect on tests/data/opcodes.pcap and malformed.pcap agrees with
   the .json expectations that tests/gen/gen_frames.py wrote from scapy's
   decode, frame by frame and field by field, and with its own --summary.
2. The same on a pcapng copy, --udp-port, and the usage and file errors.
3. tshark re-decodes opcodes.pcap: the BTH, RETH, AETH, DETH, AtomicETH,
   AtomicAckETH, ImmDt, IETH fields and the ICRC as found agree with
   roce-inspect on every frame tshark decodes (tshark 4.0 knows neither XRC
   nor CNP opcodes: only their BTH is compared).
4. scapy (IPv4) or the zlib reference (IPv6) recomputes every ICRC, and
   roce-inspect's icrc_ok verdict must match.
5. Ethernet padding: where tshark shows bytes after the IP datagram
   (eth.padding, eth.trailer or, for 4 bytes, eth.fcs), their number is
   roce-inspect's l2_pad; scapy's Padding layer gave the .json expectation.
   IBTA 1.5 frames (FLUSH, ATOMIC WRITE) and every IETH and XRCETH carry
   the flat keys (ieth_rkey, xrc_srqn, atomic_write_data).

Prints each mismatch, then "N passed, M failed"; exits 1 on any failure.
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))

from roce_layers import icrc_found, icrc_scapy, icrc_zlib, locate  # noqa: E402


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def ok(self, cond, msg):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: " + msg)
        return cond

    def eq(self, got, want, where):
        return self.ok(got == want, "%s: roce-inspect %r, expected %r" % (where, got, want))


C = Checks()


def run(binary, *args):
    p = subprocess.run([binary] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def inspect(binary, pcap, *args):
    """Run roce-inspect; return (frames, summary or None)."""
    rc, out, err = run(binary, *(list(args) + [pcap]))
    C.eq(rc, 0, "exit status on %s (stderr: %s)" % (os.path.basename(pcap), err.strip()))
    frames, summary = [], None
    for n, line in enumerate(out.splitlines()):
        try:
            obj = json.loads(line)
        except ValueError as e:
            C.ok(False, "%s line %d is not JSON (%s): %s" % (pcap, n + 1, e, line))
            continue
        if "summary" in obj:
            summary = obj["summary"]
        else:
            frames.append(obj)
    return frames, summary


def compare(got, want, where):
    """Every key of @want (recursively) must be in @got with the same value."""
    for key, wv in want.items():
        if key == "source":
            continue
        w = "%s.%s" % (where, key)
        if not C.ok(key in got, "%s: missing from roce-inspect output" % w):
            continue
        gv = got[key]
        if isinstance(wv, dict):
            if C.ok(isinstance(gv, dict), "%s: not an object: %r" % (w, gv)):
                compare(gv, wv, w)
        elif isinstance(wv, list):
            if C.eq(len(gv) if isinstance(gv, list) else None, len(wv), w + " length"):
                for k, (g, x) in enumerate(zip(gv, wv)):
                    compare(g, x, "%s[%d]" % (w, k))
        else:
            C.eq(gv, wv, w)


def check_against_json(binary, name):
    pcap = os.path.join(DATA, name + ".pcap")
    with open(os.path.join(DATA, name + ".json")) as f:
        expected = json.load(f)
    frames, summary = inspect(binary, pcap, "--summary")
    C.eq(len(frames), len(expected), "%s: number of frames" % name)
    for g, e in zip(frames, expected):
        where = "%s frame %d" % (name, e["frame"])
        compare(g, e, where)
        # Keys that must be absent: no error on a good frame, no ICRC verdict on a bad one.
        if e["ok"]:
            C.ok("error" not in g, "%s: unexpected error %r" % (where, g.get("error")))
        else:
            C.ok("icrc_ok" not in g and "payload_len" not in g,
                 "%s: a rejected frame has an ICRC verdict or payload" % where)
    # The summary totals the expectations.
    errors = {}
    for e in expected:
        if not e["ok"]:
            errors[e["error"]] = errors.get(e["error"], 0) + 1
    want = {"frames": len(expected), "ok": sum(1 for e in expected if e["ok"]),
            "icrc_bad": sum(1 for e in expected if e["ok"] and not e["icrc_ok"]),
            "errors": errors}
    if C.ok(summary is not None, "%s: no summary line" % name):
        C.eq(summary, want, "%s summary" % name)
    return frames


def check_pcapng_and_options(binary, opcodes_out):
    # pcapng: the same frames must decode the same.
    with tempfile.TemporaryDirectory() as tmp:
        ng = os.path.join(tmp, "opcodes.pcapng")
        from scapy.utils import rdpcap, PcapNgWriter
        w = PcapNgWriter(ng)
        for p in rdpcap(os.path.join(DATA, "opcodes.pcap")):
            w.write(p)
        w.close()
        frames, _ = inspect(binary, ng)
        C.eq(frames, opcodes_out, "opcodes.pcapng decode equals opcodes.pcap decode")

        # Usage and file errors exit 2 with a message on stderr.
        junk = os.path.join(tmp, "junk.pcap")
        with open(junk, "wb") as f:
            f.write(b"this is not a capture file\n")
        for args, what in (([], "no file"), (["a", "b"], "two files"),
                           (["--udp-port", "0", os.path.join(DATA, "opcodes.pcap")], "port 0"),
                           (["--udp-port", "70000", os.path.join(DATA, "opcodes.pcap")],
                            "port 70000"),
                           (["--bogus", os.path.join(DATA, "opcodes.pcap")], "unknown option"),
                           ([os.path.join(tmp, "missing.pcap")], "missing file"),
                           ([junk], "not a capture")):
            rc, out, err = run(binary, *args)
            C.eq(rc, 2, "exit status for %s" % what)
            C.ok(err.strip() != "", "no message on stderr for %s" % what)
            C.eq(out, "", "stdout for %s" % what)

        # A file cut inside a record: the whole records are printed, then exit 2.
        with open(os.path.join(DATA, "opcodes.pcap"), "rb") as f:
            whole = f.read()
        cut = os.path.join(tmp, "cut.pcap")
        with open(cut, "wb") as f:
            f.write(whole[:1000])
        rc, out, err = run(binary, cut)
        C.eq(rc, 2, "exit status for a truncated file")
        C.ok("truncated" in err, "stderr for a truncated file: %r" % err)
        C.eq([json.loads(x)["frame"] for x in out.splitlines()], [1, 2, 3],
             "frames printed before the truncation")

        # A record captured short of its wire length (snaplen).
        snap = os.path.join(tmp, "snap.pcap")
        first = whole[24 + 16:24 + 16 + 314]
        with open(snap, "wb") as f:
            f.write(whole[:24] + struct.pack("<IIII", 0, 0, 40, 314) + first[:40])
        frames, _ = inspect(binary, snap)
        C.eq(frames and {k: frames[0].get(k) for k in ("len", "wire_len", "ok", "error")},
             {"len": 40, "wire_len": 314, "ok": False, "error": "bad_ip_length"},
             "a frame captured short of its wire length")

    # --udp-port: the frame sent to 4792 becomes good, the others are rejected.
    with open(os.path.join(DATA, "malformed.json")) as f:
        mexp = json.load(f)
    frames, summary = inspect(binary, os.path.join(DATA, "malformed.pcap"),
                              "--udp-port", "4792", "--summary")
    for g, e in zip(frames, mexp):
        where = "malformed frame %d with --udp-port 4792" % e["frame"]
        if e.get("error") == "not_roce_port":
            C.eq(g.get("ok"), True, where + " ok")
            C.eq(g.get("icrc_ok"), True, where + " icrc_ok")
        elif e["ok"]:
            C.eq(g.get("error"), "not_roce_port", where + " error")


# tshark field -> (roce-inspect object, key, kind)
TSHARK_FIELDS = [
    ("infiniband.bth.opcode", "bth", "opcode", "int"),
    ("infiniband.bth.se", "bth", "se", "int"),
    ("infiniband.bth.m", "bth", "mig", "int"),
    ("infiniband.bth.padcnt", "bth", "pad", "int"),
    ("infiniband.bth.tver", "bth", "tver", "int"),
    ("infiniband.bth.p_key", "bth", "pkey", "int"),
    ("infiniband.bth.destqp", "bth", "dqpn", "int"),
    ("infiniband.bth.a", "bth", "ackreq", "int"),
    ("infiniband.bth.psn", "bth", "psn", "int"),
    ("infiniband.reth.va", "reth|atomiceth", "va", "hex"),
    ("infiniband.reth.r_key", "reth|atomiceth", "rkey", "hex"),
    ("infiniband.reth.dmalen", "reth", "dmalen", "int"),
    ("infiniband.aeth.syndrome", "aeth", "syndrome", "int"),
    ("infiniband.aeth.msn", "aeth", "msn", "int"),
    ("infiniband.deth.q_key", "deth", "qkey", "hex"),
    ("infiniband.deth.srcqp", "deth", "srcqp", "int"),
    ("infiniband.atomiceth.swapdt", "atomiceth", "swap", "hex"),
    ("infiniband.atomiceth.cmpdt", "atomiceth", "compare", "hex"),
    ("infiniband.atomicacketh.origremdt", "atomicacketh", "orig", "hex"),
    ("infiniband.immdt", "immdt", "imm", "bytes"),
    ("infiniband.ieth", "ieth", "rkey", "bytes"),
    ("infiniband.invariant.crc", None, "icrc", "crc"),
]


def tshark_value(s, kind):
    s = s.split(",")[0].strip()      # byte fields come out twice
    if kind == "bytes":
        return int(s.replace(":", ""), 16)
    if s in ("True", "False"):
        return int(s == "True")
    return int(s, 0)


def check_tshark(opcodes_out):
    tshark = shutil.which("tshark")
    if not C.ok(tshark is not None, "tshark is not installed"):
        return
    cmd = [tshark, "-r", os.path.join(DATA, "opcodes.pcap"), "-T", "fields",
           "-E", "separator=\t", "-E", "occurrence=a", "-e", "frame.number", "-e", "_ws.col.Info"]
    for fld, _, _, _ in TSHARK_FIELDS:
        cmd += ["-e", fld]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    if not C.eq(p.returncode, 0, "tshark exit status (%s)" % p.stderr.strip()):
        return
    rows = p.stdout.rstrip("\n").split("\n")
    C.eq(len(rows), len(opcodes_out), "tshark: number of frames")
    decoded = 0
    for row, g in zip(rows, opcodes_out):
        cols = row.split("\t")
        number, info, vals = int(cols[0]), cols[1], cols[2:]
        where = "tshark frame %d" % number
        if vals[0] == "":
            continue                    # tshark did not decode it as InfiniBand
        decoded += 1
        known = "Unknown OpCode" not in info
        for (fld, objs, key, kind), raw in zip(TSHARK_FIELDS, vals):
            if kind == "crc":
                if raw:
                    # tshark reads the ICRC's four bytes big-endian.
                    v = tshark_value(raw, "int")
                    C.eq(g.get("icrc"), "0x%08x" % int.from_bytes(v.to_bytes(4, "big"), "little"),
                         "%s ICRC (%s)" % (where, fld))
                continue
            if objs != "bth" and not known:
                continue                # XRC and CNP: tshark stops after the BTH
            obj = next((o for o in objs.split("|") if o in g), None)
            if raw == "":
                C.ok(obj is None, "%s: tshark has no %s, roce-inspect has %s" % (where, fld, obj))
                continue
            if not C.ok(obj is not None, "%s: tshark has %s=%s, roce-inspect has no %s" % (
                    where, fld, raw, objs)):
                continue
            want = tshark_value(raw, kind)
            got = g[obj][key]
            if isinstance(got, str):
                got = int(got, 16)
            C.eq(got, want, "%s %s.%s (tshark %s)" % (where, obj, key, fld))
    # tshark must have decoded nearly everything: all but nothing.
    C.eq(decoded, len(opcodes_out), "tshark: frames decoded as InfiniBand")


def check_padding(opcodes_out):
    """tshark's view of the bytes after the IP datagram against l2_pad."""
    tshark = shutil.which("tshark")
    if not tshark:
        return                          # check_tshark has failed already
    cmd = [tshark, "-r", os.path.join(DATA, "opcodes.pcap"), "-T", "fields", "-E", "separator=\t",
           "-e", "frame.number", "-e", "eth.padding", "-e", "eth.trailer", "-e", "eth.fcs"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    if not C.eq(p.returncode, 0, "tshark exit status (%s)" % p.stderr.strip()):
        return
    compared = padded = 0
    for row, g in zip(p.stdout.rstrip("\n").split("\n"), opcodes_out):
        cols = (row.split("\t") + ["", "", ""])[:4]
        number, padding, trailer, fcs = int(cols[0]), cols[1], cols[2], cols[3]
        where = "frame %d" % number
        if not g.get("ok"):
            continue
        padded += g.get("l2_pad", 0) > 0
        C.eq(g.get("frame_len", -1) + g.get("l2_pad", -1), g["len"], where + " frame_len + l2_pad")
        seen = None
        if padding or trailer:
            seen = len(bytes.fromhex((padding or trailer).replace(":", "")))
        elif fcs:
            seen = 4
        if seen is not None:
            compared += 1
            C.eq(g.get("l2_pad"), seen, where + " l2_pad (tshark eth.padding/trailer/fcs)")
    C.ok(padded >= 8, "opcodes.pcap has %d padded frames, expected at least 8" % padded)
    C.ok(compared >= 4, "tshark showed the padding of only %d frames" % compared)
    # The flat keys, wherever their header is.
    for g in opcodes_out:
        where = "frame %d" % g["frame"]
        if "ieth" in g:
            C.eq(g.get("ieth_rkey"), g["ieth"]["rkey"], where + " ieth_rkey")
        if "xrceth" in g:
            C.eq(g.get("xrc_srqn"), g["xrceth"]["xrcsrq"], where + " xrc_srqn")
        name = g.get("bth", {}).get("opcode_name", "")
        if name == "RC_ATOMIC_WRITE":
            C.ok("atomic_write_data" in g and g.get("payload_len") == 8,
                 where + " ATOMIC WRITE: 8-byte word decoded")
        if name == "RC_FLUSH":
            C.ok("feth" in g and "reth" in g and g.get("payload_len") == 0,
                 where + " FLUSH: FETH and RETH, no payload")


def check_icrc_verdicts(name, out):
    """roce-inspect's ICRC verdicts against scapy (IPv4) or icrc_zlib (IPv6)."""
    from scapy.utils import rdpcap
    pkts = rdpcap(os.path.join(DATA, name + ".pcap"))
    C.eq(len(pkts), len(out), "%s: scapy frame count" % name)
    for p, g in zip(pkts, out):
        if not g.get("ok"):
            continue
        frame = bytes(p)
        where = "%s frame %d" % (name, g["frame"])
        _, ver, _, _ = locate(frame)
        if ver == 4:
            ref = icrc_scapy(frame)
            C.eq(icrc_zlib(frame), ref, where + ": zlib ICRC equals scapy's")
        else:
            ref = icrc_zlib(frame)
        found = icrc_found(frame)
        C.eq(g.get("icrc"), "0x%08x" % found, where + " icrc as found")
        C.eq(g.get("icrc_ok"), found == ref, where + " icrc_ok (reference 0x%08x)" % ref)


def main():
    if len(sys.argv) != 2:
        print("usage: %s BUILD_DIR|PATH/TO/roce-inspect" % sys.argv[0], file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    if os.path.isdir(binary):
        binary = os.path.join(binary, "tools", "roce-inspect")
    if not os.access(binary, os.X_OK):
        print("%s: not an executable" % binary, file=sys.stderr)
        return 2
    opcodes_out = check_against_json(binary, "opcodes")
    malformed_out = check_against_json(binary, "malformed")
    check_pcapng_and_options(binary, opcodes_out)
    check_tshark(opcodes_out)
    check_padding(opcodes_out)
    check_icrc_verdicts("opcodes", opcodes_out)
    check_icrc_verdicts("malformed", malformed_out)
    print("%d passed, %d failed" % (C.passed, C.failed))
    return 1 if C.failed else 0


if __name__ == "__main__":
    sys.exit(main())
