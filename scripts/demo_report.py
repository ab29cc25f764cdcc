#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the demo: frames in and out per port, decoded by roce-inspect, and
the switch's counters.  Exits 1 if any frame the switch sent has a bad ICRC
or IPv4 checksum."""
import argparse
import json
import os
import subprocess
import sys

PORTS = ["vm-blue-1", "vm-red-1", "fabric0"]


def decode(inspect, pcap):
    out = subprocess.run([inspect, pcap], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def line(f):
    if not f["ok"]:
        return "  %-28s %s" % ("malformed", f["error"])
    b = f["bth"]
    text = "  %-28s %15s -> %-15s qp %-5d psn %-4d icrc %s" % (
        b["opcode_name"], f["ip"]["src"], f["ip"]["dst"], b["dqpn"], b["psn"],
        "ok" if f["icrc_ok"] and f.get("ipv4_csum_ok", True) else "BAD")
    if "reth" in f:
        text += "  reth va %s rkey %s len %d" % (f["reth"]["va"], f["reth"]["rkey"], f["reth"]["dmalen"])
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inspect", required=True)
    ap.add_argument("--in", dest="indir", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    bad = 0
    for port in PORTS:
        print("%s in:" % port)
        for f in decode(a.inspect, os.path.join(a.indir, port + ".pcap")):
            print(line(f))
        print("%s out:" % port)
        for f in decode(a.inspect, os.path.join(a.out, port + ".pcap")):
            print(line(f))
            bad += not (f["ok"] and f["icrc_ok"] and f.get("ipv4_csum_ok", True))
        print()
    with open(os.path.join(a.out, "stats.json")) as fh:
        s = json.load(fh)
    print("per tenant:")
    for name, t in s["tenants"].items():
        print("  %-6s sent %d, received %d, dropped %d" % (
            name, t["egress_packets"], t["ingress_packets"], t["dropped"]))
    print("drops:", ", ".join("%s %d" % kv for kv in s["drops"].items() if kv[1]) or "none")
    print("forwarded: %(egress)d to the fabric, %(ingress)d from it, %(hairpin)d hairpin" % s["forwarded"])
    print("memory windows translated: %d" % s["mr_translated"])
    print("every frame sent has a valid ICRC and IPv4 checksum" if not bad else
          "%d frames sent with a bad ICRC or checksum" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
