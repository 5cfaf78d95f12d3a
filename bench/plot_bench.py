#!/usr/bin/env python3
"""Plot world-steps per second against nworld from `sapsim bench` JSON lines.
usage: plot_bench.py BENCH.jsonl OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    series = {}
    for r in rows:
        variant = f" {r['variant']}" if r.get("variant") else ""
        key = f"sapsim {r['preset']} {r['line_search']}{variant} ({r['backend']})"
        series.setdefault(key, []).append((r["nworld"], r["steps_per_s"]))
        if r.get("mujoco_steps_per_s"):
            series.setdefault("MuJoCo mj_step (CPU)", []).append((r["nworld"], r["mujoco_steps_per_s"]))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in series.items():
        pts = sorted(set(pts))
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("worlds")
    ax.set_ylabel("world-steps per second")
    scene = rows[0]["scene"] if rows else ""
    device = rows[0]["device"] if rows else ""
    ax.set_title(f"{scene} on {device}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)


if __name__ == "__main__":
    main()
