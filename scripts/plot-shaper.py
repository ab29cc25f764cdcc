#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plot the shaper's accuracy and fairness (and, with --scaling, its cost per
packet) from bench_shaper's CSV and JSON modes.

    scripts/plot-shaper.py [--bench build-shaper/tests/shaper/bench_shaper]
                           [--out docs] [--scaling | --scaling-from FILE]
    scripts/plot-shaper.py [--out docs] --cut-from FILE

writes docs/shaper-accuracy.png (configured against achieved rate, tenant cap
and QP cap, 4 KiB to 1 MiB messages, 200 ms of virtual time each),
docs/shaper-fairness.png (throughput of each of 512 connections with equal
1 Gb/s caps under a 25 Gb/s tenant) and, with --scaling, docs/shaper-scaling.png
(cycles per packet from 1 000 to 1 000 000 connections, from one run of the
benchmark, or with --scaling-from from the JSON lines of several runs saved
in FILE, e.g. `for i in 1 2 3 4 5; do taskset -c 0 bench_shaper; done`).
With --cut-from it draws only docs/shaper-cut.png (cycles per packet with and
without cut-through, and where the tenant binds, at each connection count)
from the JSON lines of several runs of
`bench_shaper --mode open,cut,tenant,tenant-cut --sizes 1000,1000000`.
Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_bench(path):
    if path:
        return path
    for build in ("build-shaper", "build"):
        cand = os.path.join(ROOT, build, "tests", "shaper", "bench_shaper")
        if os.access(cand, os.X_OK):
            return cand
    sys.exit("plot-shaper: bench_shaper not found; build it or pass --bench")


def run_csv(bench, what):
    out = subprocess.run([bench, "--csv", what], check=True, capture_output=True,
                         text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def jain(xs):
    s = sum(xs)
    s2 = sum(x * x for x in xs)
    return s * s / (len(xs) * s2) if s2 else 0.0


def plot_accuracy(rows, path):
    fig, (ax, ax_err) = plt.subplots(1, 2, figsize=(11, 4.5))
    markers = {4096: "o", 65536: "s", 1048576: "^"}
    colours = {"tenant": "tab:blue", "qp": "tab:orange"}
    caps = sorted({float(r["cap_gbps"]) for r in rows})
    ax.plot([0, max(caps) * 1.05], [0, max(caps) * 1.05], color="grey", lw=0.8,
            ls="--", label="achieved = configured")
    worst = 0.0
    for where in ("tenant", "qp"):
        for size, mk in markers.items():
            sel = [r for r in rows if r["where"] == where and int(r["msg_bytes"]) == size]
            if not sel:
                continue
            x = [float(r["cap_gbps"]) for r in sel]
            y = [float(r["achieved_gbps"]) for r in sel]
            err = [(b / a - 1.0) * 100.0 for a, b in zip(x, y)]
            worst = max([worst] + [abs(e) for e in err])
            label = "%s cap, %s messages" % ("tenant" if where == "tenant" else "QP",
                                            "%d KiB" % (size // 1024))
            ax.plot(x, y, mk, color=colours[where], mfc="none", label=label)
            ax_err.plot(x, err, mk + "-", color=colours[where], mfc="none", lw=0.6,
                        label=label)
    ax.set_xlabel("configured rate (Gb/s)")
    ax.set_ylabel("achieved rate (Gb/s)")
    ax.set_title("Configured against achieved rate (200 ms window)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    lim = max(0.02, 1.3 * worst)
    if lim >= 1.0:
        ax_err.axhspan(-1, 1, color="tab:green", alpha=0.08, label="±1 % goal")
    ax_err.set_xscale("log")
    ax_err.set_xticks(caps)
    ax_err.set_xticklabels(["%g" % c for c in caps])
    ax_err.set_ylim(-lim, lim)
    ax_err.set_xlabel("configured rate (Gb/s)")
    ax_err.set_ylabel("error (%)")
    ax_err.set_title("Error (goal ±1 %%); worst |error| %.4f %%" % worst)
    ax_err.grid(alpha=0.3)
    ax_err.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return worst


def plot_fairness(rows, path):
    fig, ax = plt.subplots(figsize=(11, 4.5))
    series = {}
    for r in rows:
        mixed = r["msg_bytes"].startswith("mixed:")
        series.setdefault(mixed, []).append(float(r["gbps"]))
    share = 25.0 / 512
    result = {}
    for mixed, ys in sorted(series.items()):
        j = jain(ys)
        result["mixed" if mixed else "64k"] = j
        label = ("mixed 4 KiB-256 KiB messages, 1 s" if mixed else
                 "64 KiB messages, 200 ms") + ": Jain %.5f" % j
        ax.plot(range(len(ys)), [y * 1000 for y in ys], "." if mixed else "o",
                ms=3 if mixed else 2.5, label=label, alpha=0.8)
    ax.axhline(share * 1000, color="grey", ls="--", lw=0.8,
               label="fair share %.1f Mb/s" % (share * 1000))
    ax.set_xlabel("connection")
    ax.set_ylabel("throughput (Mb/s)")
    ax.set_ylim(0, share * 1000 * 1.5)
    ax.set_title("512 connections, 1 Gb/s caps each, under one 25 Gb/s tenant")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return result


def plot_scaling(bench, path, saved=None):
    if saved:
        with open(saved) as f:
            lines = f.read().splitlines()
    else:
        lines = subprocess.run([bench], check=True, capture_output=True,
                               text=True).stdout.splitlines()
    rows = [json.loads(line) for line in lines if line.startswith("{")]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    colours = {"pacing": "tab:blue", "tenant": "tab:orange"}
    labels = {"pacing": "pacing (wheel only)", "tenant": "tenant binding (whole hierarchy)"}
    for mode in ("pacing", "tenant"):
        sel = [r for r in rows if r["mode"] == mode]
        ns = sorted({r["connections"] for r in sel})
        med = [statistics.median(r["cycles_per_packet"] for r in sel if r["connections"] == n)
               for n in ns]
        ax.plot(ns, med, "o-", color=colours[mode], label=labels[mode] + ", median window")
        if "cycles_per_packet_min" in sel[0]:
            fast = [statistics.median(r["cycles_per_packet_min"] for r in sel
                                      if r["connections"] == n) for n in ns]
            ax.plot(ns, fast, "s--", color=colours[mode], mfc="none", lw=0.8,
                    label=labels[mode] + ", fastest window")
        ax.plot([r["connections"] for r in sel], [r["cycles_per_packet"] for r in sel],
                ".", color=colours[mode], alpha=0.3)
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("active connections")
    ax.set_ylabel("TSC cycles per packet (enqueue + dequeue)")
    ax.set_title("Shaper cost per packet (%d runs; dots: each run)" %
                 max(1, len({r.get("run", 0) for r in rows})))
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return rows


def plot_cut(saved, path):
    with open(saved) as f:
        rows = [json.loads(line) for line in f if line.startswith("{")]
    modes = [m for m in ("open", "cut", "tenant", "tenant-cut")
             if any(r["mode"] == m for r in rows)]
    labels = {"open": "not binding, queued", "cut": "not binding, cut-through",
              "tenant": "tenant binding", "tenant-cut": "tenant binding, cut-through tried"}
    colours = {"open": "tab:blue", "cut": "tab:green", "tenant": "tab:orange",
               "tenant-cut": "tab:red"}
    ns = sorted({r["connections"] for r in rows})
    width = 0.8 / len(modes)
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for k, mode in enumerate(modes):
        for j, n in enumerate(ns):
            sel = [r for r in rows if r["mode"] == mode and r["connections"] == n]
            if not sel:
                continue
            x = j + (k - (len(modes) - 1) / 2) * width
            fast = statistics.median(r["cycles_per_packet_min"] for r in sel)
            med = statistics.median(r["cycles_per_packet"] for r in sel)
            ax.bar(x, fast, width * 0.9, color=colours[mode],
                   label=labels[mode] if j == 0 else None)
            ax.plot([x], [med], "k_", ms=14)
            ax.plot([x] * len(sel), [r["cycles_per_packet"] for r in sel], ".",
                    color="k", alpha=0.35)
            ax.annotate("%.0f" % fast, (x, fast / 2), ha="center", va="center",
                        fontsize=9, color="white", weight="bold")
    ax.set_xticks(range(len(ns)))
    ax.set_xticklabels(["{:,} connections".format(n).replace(",", " ") for n in ns])
    ax.set_ylabel("TSC cycles per packet")
    ax.set_title("Shaper cost per packet: bars, median of the fastest windows;\n"
                 "dash, median of the median windows; dots, each run's median (%d runs)" %
                 max(len([r for r in rows if r["mode"] == modes[0] and
                          r["connections"] == ns[0]]), 1), fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", help="path to bench_shaper")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs"))
    ap.add_argument("--scaling", action="store_true",
                    help="also run the cost benchmark and plot it")
    ap.add_argument("--scaling-from", metavar="FILE",
                    help="plot the cost from saved JSON lines of bench_shaper")
    ap.add_argument("--cut-from", metavar="FILE",
                    help="only plot cut-through's cost from saved JSON lines of bench_shaper")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.cut_from:
        path = os.path.join(args.out, "shaper-cut.png")
        rows = plot_cut(args.cut_from, path)
        print("cut-through: %d measurements -> %s" % (len(rows), path))
        return
    bench = find_bench(args.bench)
    worst = plot_accuracy(run_csv(bench, "accuracy"),
                          os.path.join(args.out, "shaper-accuracy.png"))
    print("accuracy: worst |error| %.4f %% -> %s" %
          (worst, os.path.join(args.out, "shaper-accuracy.png")))
    j = plot_fairness(run_csv(bench, "fairness"),
                      os.path.join(args.out, "shaper-fairness.png"))
    print("fairness: Jain %s -> %s" % (", ".join("%s %.5f" % kv for kv in j.items()),
                                        os.path.join(args.out, "shaper-fairness.png")))
    if args.scaling or args.scaling_from:
        path = os.path.join(args.out, "shaper-scaling.png")
        rows = plot_scaling(bench, path, args.scaling_from)
        print("scaling: %d measurements -> %s" % (len(rows), path))


if __name__ == "__main__":
    main()
