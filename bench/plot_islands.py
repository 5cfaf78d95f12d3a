#!/usr/bin/env python3
"""Log-log plot of cost per world-step against the number of free objects (issue 16 item 3):
sapsim before/after islands and MuJoCo 4, from the JSON lines of bench/many_objects.py runs
(keys label, N, ns, mj_sps; see docs/performance.md for the commands).

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


def main():
    before, after, out = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    nb = sorted(before)
    na = sorted(after)
    fig, ax = plt.subplots(figsize=(6, 4.2))
    ax.loglog(nb, [statistics.median(r["ns"] for r in before[n]) / 1e3 for n in nb], "o-", label="sapsim, dense solve (before)")
    ax.loglog(na, [statistics.median(r["ns"] for r in after[n]) / 1e3 for n in na], "s-", label="sapsim, islands (after)")
    ax.loglog(na, [statistics.median(1e9 / r["mj_sps"] for r in after[n]) / 1e3 for n in na], "^-", label="MuJoCo 4.0 mj_step")
    ax.set_xlabel("free objects N (6 N dofs)")
    ax.set_ylabel("cost per world-step [us], 1 thread")
    ax.set_title("bench/many_objects.py N, --worlds 1 --threads 1")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
