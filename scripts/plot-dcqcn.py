#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plot dcqcn-sim traces of the canonical scenarios into docs/dcqcn.png.

The scenarios are the event files in tests/dcqcn/: one CNP then silence
(one_cnp.json), and CNPs every 50 us for 1 ms then silence (cnp_train.json),
each run with the nvidia and the paper profile at 100 Gb/s.  The top row
shows 20 ms, the bottom row the first 2 ms.

usage: scripts/plot-dcqcn.py [--sim PATH] [--out PNG] [--csv-dir DIR]
  --sim      dcqcn-sim to run (default: build-dcqcn/tools/dcqcn-sim, then
             build/tools/dcqcn-sim)
  --out      the picture (default: docs/dcqcn.png)
  --csv-dir  also keep the four CSV traces there
"""
import argparse
import csv
import io
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = [
    ("one_cnp.json", "One CNP at t = 0, then silence"),
    ("cnp_train.json", "CNPs every 50 \u00b5s for 1 ms, then silence"),
]
PROFILES = [("nvidia", "tab:green"), ("paper", "tab:blue")]


def find_sim(given):
    if given:
        return given
    for build in ("build-dcqcn", "build"):
        path = os.path.join(ROOT, build, "tools", "dcqcn-sim")
        if os.access(path, os.X_OK):
            return path
    sys.exit("plot-dcqcn: dcqcn-sim not found; build it or pass --sim")


def run(sim, profile, events):
    out = subprocess.run([sim, "--profile", profile, events], check=True,
                         capture_output=True, text=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    t = [float(r["t_us"]) / 1000.0 for r in rows]
    rate = [float(r["rate_gbps"]) for r in rows]
    target = [float(r["target_gbps"]) for r in rows]
    return out, t, rate, target


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "dcqcn.png"))
    ap.add_argument("--csv-dir")
    args = ap.parse_args()
    sim = find_sim(args.sim)

    fig, axes = plt.subplots(2, 2, figsize=(12, 7.5), sharey=True)
    for col, (events, title) in enumerate(SCENARIOS):
        path = os.path.join(ROOT, "tests", "dcqcn", events)
        for profile, color in PROFILES:
            out, t, rate, target = run(sim, profile, path)
            if args.csv_dir:
                os.makedirs(args.csv_dir, exist_ok=True)
                name = "%s-%s.csv" % (events[:-5], profile)
                with open(os.path.join(args.csv_dir, name), "w") as f:
                    f.write(out)
            # Extend the last state to the end of the run.
            end = max(t[-1], 20.0)
            t, rate, target = t + [end], rate + [rate[-1]], target + [target[-1]]
            for row, xmax in ((0, end), (1, 2.0)):
                ax = axes[row][col]
                ax.step(t, rate, where="post", color=color,
                        lw=1.6, label="%s: current rate Rc" % profile)
                ax.step(t, target, where="post", color=color,
                        lw=0.9, ls="--", alpha=0.7, label="%s: target rate Rt" % profile)
                ax.set_xlim(0, xmax)
        axes[0][col].set_title(title)
    for row in range(2):
        for col in range(2):
            ax = axes[row][col]
            ax.set_ylim(0, 105)
            ax.grid(True, alpha=0.3)
            ax.set_xlabel("time (ms)")
        axes[row][0].set_ylabel("rate (Gb/s)")
    axes[0][0].legend(loc="lower right", fontsize=8)
    fig.suptitle("DCQCN reaction point at 100 Gb/s, dcqcn-sim, no tx events "
                 "(timer-driven recovery); bottom row: first 2 ms")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print("wrote %s" % os.path.relpath(args.out, os.getcwd()))


if __name__ == "__main__":
    main()
