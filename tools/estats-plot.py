#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Draw RDMA Estats of a tenant or one connection: the latency histograms and
the network/host split over time.

Live, from the switch's telemetry (/roce/estats/hist), sampled every
INTERVAL seconds for DURATION seconds:
    estats-plot.py --prefix PREFIX --tenant blue [--vip 192.168.1.10 --vqpn 17]
                   [--interval 0.5] [--duration 10] [--save series.json] --out estats.png
Or from a series saved earlier with --save:
    estats-plot.py --json series.json --out estats.png

The left panel is the latest histogram of each kind (network round trip,
host response, message completion), as the share of samples per bucket on a
log time axis.  The right panel is, for each interval between two samples,
the mean network round trip and host response of the samples recorded in it
(difference of the sums over difference of the counts), with each one's p99
from the difference of the buckets, dashed.
"""
import argparse
import json
import socket
import sys
import time

KINDS = ("network_rtt", "host_response", "message_completion")
LABELS = {"network_rtt": "network round trip", "host_response": "host response",
          "message_completion": "message completion"}
COLORS = {"network_rtt": "tab:blue", "host_response": "tab:orange", "message_completion": "tab:green"}


def telemetry(prefix, cmd, timeout=10):
    """One command to the DPDK telemetry socket of --file-prefix @prefix; its answer's value."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix)
        s.recv(1024)
        s.send(cmd.encode())
        reply = b""
        while True:
            chunk = s.recv(1 << 16)
            reply += chunk
            try:
                doc = json.loads(reply.decode())
                break
            except ValueError:
                if not chunk:
                    raise
    finally:
        s.close()
    return doc[cmd.split(",")[0]]


def sample_series(args):
    cmd = "/roce/estats/hist," + args.tenant
    if args.vip is not None:
        cmd += ",%s,%s" % (args.vip, args.vqpn)
    series = {"command": cmd, "samples": []}
    end = time.monotonic() + args.duration
    while True:
        doc = telemetry(args.prefix, cmd)
        if not isinstance(doc, dict) or "network_rtt" not in doc:
            sys.exit("%s: no such tenant or connection, or Estats off: %r" % (cmd, doc))
        series["samples"].append(doc)
        if time.monotonic() >= end:
            return series
        time.sleep(args.interval)


def buckets(h):
    """{upper bound ns (0 = open last bucket): count} of one histogram."""
    return dict(zip(h["le_ns"], h["counts"]))


def lower_of(upper_ns):
    """The lower bound of the estats/ bucket whose upper bound is @upper_ns (64 ns units, 16 a power of two)."""
    u = upper_ns // 64
    if u <= 16:
        return (u - 1) * 64
    return (u - (1 << ((u - 1).bit_length() - 1 - 4))) * 64


def quantile(b, q):
    """The upper bound of the bucket holding quantile @q of bucket counts @b (ns), or None."""
    total = sum(b.values())
    if total <= 0:
        return None
    rank, cum = q * total, 0
    for le in sorted(b, key=lambda x: x or float("inf")):
        cum += b[le]
        if cum >= rank:
            return le or None
    return None


def plot(series, out, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = series["samples"]
    last = samples[-1]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for k in KINDS:
        h = last[k]
        if h["count"] == 0:
            continue
        # Bar from the bucket's lower bound (the previous one's upper) to its upper.
        b = buckets(h)
        for le, n in sorted(b.items(), key=lambda x: x[0] or float("inf")):
            hi = le if le else h["max_ns"] * 1.1
            lo = lower_of(le) if le else hi / 1.1
            ax1.bar(lo / 1000, n / h["count"], width=(hi - lo) / 1000, align="edge", color=COLORS[k], alpha=0.45, edgecolor=COLORS[k])
        ax1.plot([], [], color=COLORS[k], linewidth=6, alpha=0.7,
                 label="%s (%d samples)" % (LABELS[k], h["count"]))
    ax1.set_xscale("log")
    ax1.set_xlabel("latency (us), buckets of estats/ (<= 6.25 % wide)")
    ax1.set_ylabel("share of samples")
    ax1.set_title("histograms, latest sample")
    ax1.legend(fontsize=8)

    t0 = samples[0]["time_ns"]
    for k in ("network_rtt", "host_response"):
        xs, means, p99s = [], [], []
        for a, b in zip(samples, samples[1:]):
            dn = b[k]["count"] - a[k]["count"]
            if dn <= 0:
                continue
            xs.append((b["time_ns"] - t0) / 1e9)
            means.append((b[k]["sum_ns"] - a[k]["sum_ns"]) / dn / 1000)
            ba, bb = buckets(a[k]), buckets(b[k])
            delta = {le: n - ba.get(le, 0) for le, n in bb.items()}
            p = quantile(delta, 0.99)
            p99s.append(p / 1000 if p else float("nan"))
        ax2.plot(xs, means, color=COLORS[k], label=LABELS[k] + ", mean")
        ax2.plot(xs, p99s, color=COLORS[k], linestyle="--", label=LABELS[k] + ", p99")
    ax2.set_xlabel("time (s)")
    ax2.set_ylabel("latency (us)")
    ax2.set_yscale("log")
    ax2.set_title("network / host split over time")
    ax2.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prefix", help="the switch's --file-prefix (live telemetry)")
    ap.add_argument("--tenant")
    ap.add_argument("--vip", help="the local QP's virtual IP (with --vqpn: one connection)")
    ap.add_argument("--vqpn")
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--json", help="plot a series saved with --save instead")
    ap.add_argument("--save", help="also write the sampled series to this JSON file")
    ap.add_argument("--title")
    ap.add_argument("--out", required=True, help="PNG to write")
    args = ap.parse_args()
    if args.json:
        with open(args.json) as f:
            series = json.load(f)
    else:
        if not args.prefix or not args.tenant or (args.vip is None) != (args.vqpn is None):
            ap.error("live sampling needs --prefix and --tenant (and --vip with --vqpn for one connection)")
        series = sample_series(args)
        if args.save:
            with open(args.save, "w") as f:
                json.dump(series, f)
    if len(series["samples"]) < 2:
        sys.exit("need at least two samples")
    plot(series, args.out, args.title or series["command"])


if __name__ == "__main__":
    main()
