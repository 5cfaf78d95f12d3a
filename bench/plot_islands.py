#!/usr/bin/env python3
"""Log-log plots against the number of free objects (issue 16 item 3), from the JSON lines of
bench/islands_scale.sh (keys label, N, ns, mj_sps, bytes, and shared when recorded): the cost
per world-step of sapsim (each file: one curve, named by its label) and of MuJoCo 4, and
sapsim's memory per world (bytes per world plus the CPU solve's shared buffers).

  python3 bench/plot_islands.py before.jsonl after.jsonl out.png
"""
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    by = {}
    for line in open(path):
        r = json.loads(line)
        by.setdefault(r["N"], []).append(r)
    return by


def label(by):
    return next(iter(by.values()))[0].get("label", "?")


def main():
    before, after, out = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    fig, (ax, am) = plt.subplots(1, 2, figsize=(11, 4.2))
    for by, mark in ((before, "o-"), (after, "s-")):
        ns = sorted(by)
        ax.loglog(ns, [statistics.median(r["ns"] for r in by[n]) / 1e3 for n in ns], mark,
                  label="sapsim, " + label(by))
        am.loglog(ns, [statistics.median(r["bytes"] + (r.get("shared") or 0) for r in by[n]) / 1e6 for n in ns],
                  mark, label="sapsim, " + label(by))
    na = sorted(after)
    ax.loglog(na, [statistics.median(1e9 / r["mj_sps"] for r in after[n]) / 1e3 for n in na], "^-",
              label="MuJoCo 4.0 mj_step")
    ax.set_xlabel("free objects N (6 N dofs)")
    ax.set_ylabel("cost per world-step [us], 1 thread")
    ax.set_title("bench/many_objects.py N, --worlds 1 --threads 1")
    am.set_xlabel("free objects N (6 N dofs)")
    am.set_ylabel("bytes per world + shared solve buffers [MB]")
    am.set_title("memory")
    for a in (ax, am):
        a.grid(True, which="both", alpha=0.3)
        a.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
