#!/usr/bin/env python3
"""Plot divergence against time from `sapsim ablate` JSON lines: velocity (top)
and position (bottom) divergence, one curve per comparison (mean over worlds of
the per-world 2-norm; dotted: max over worlds).
usage: plot_ablate.py ABLATE.jsonl OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    steps = [r for r in rows if r.get("type") == "step"]
    configs = [r for r in rows if r.get("type") == "config"]
    series = {}
    for r in steps:
        series.setdefault((r["comparison"], r["kind"]), []).append(r)
    fig, axes = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
    panels = (("dv", "||v_a - v_b||  (per world, 2-norm)"), ("dq", "||q_a - q_b||  (quaternion-aware)"))
    for ax, (field, label) in zip(axes, panels):
        positive = False
        for i, ((name, kind), pts) in enumerate(series.items()):
            color = f"C{i % 10}"
            t = [p["time"] for p in pts]
            mean = [p[field + "_mean"] if p[field + "_mean"] is not None else float("nan") for p in pts]
            peak = [p[field + "_max"] if p[field + "_max"] is not None else float("nan") for p in pts]
            positive |= any(x > 0 for x in peak if x == x)
            ax.plot(t, mean, color=color, label=f"{name} ({kind})")
            ax.plot(t, peak, color=color, linestyle=":", linewidth=1)
        if positive:
            ax.set_yscale("log")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[1].set_xlabel("time (s)")
    axes[0].legend(fontsize=8)
    title = "sapsim ablate"
    if configs:
        c = configs[0]
        title = (f"{c.get('scene', '')}: {c['nworld']} worlds on {c.get('device', '')}"
                 " (solid: mean, dotted: max over worlds)")
    axes[0].set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)


if __name__ == "__main__":
    main()
