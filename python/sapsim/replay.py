"""``python -m sapsim.replay SCENE TRAJ.csv --video OUT.mp4``: render a trajectory that
``sapsim run SCENE --out TRAJ.csv`` wrote (one world, resampled to --fps in simulated
time) with MuJoCo's renderer (sapsim.render)."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from .render import load_trajectory_csv, render_trajectory


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sapsim.replay", description=__doc__.split("\n\n")[0])
    ap.add_argument("scene", help="the scene the trajectory was run on (MJCF or URDF)")
    ap.add_argument("trajectory", help="CSV written by 'sapsim run SCENE --out FILE'")
    ap.add_argument("--video", required=True, help="output: .mp4 or .gif")
    ap.add_argument("--world", type=int, default=0, help="world to draw (default 0)")
    ap.add_argument("--fps", type=float, default=30.0, help="frames per simulated second (default 30)")
    ap.add_argument("--size", default="480x360", help="WIDTHxHEIGHT (default 480x360)")
    args = ap.parse_args(argv)
    try:
        w, h = (int(x) for x in args.size.lower().split("x"))
        times, qpos = load_trajectory_csv(args.trajectory, args.world)
        out = render_trajectory(args.scene, qpos, args.video, fps=args.fps, times=times, width=w, height=h)
    except (OSError, ValueError, ImportError) as e:
        print(f"sapsim replay: {e}", file=sys.stderr)
        return 1
    print(f"sapsim replay: {out} ({len(qpos)} states of world {args.world})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
